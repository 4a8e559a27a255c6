"""Training and compiler work through Celery with a real Redis (Debian's redis-server, tests/support/redis_server.py),
a real `rasplay worker` and real `rasplay serve --broker` replicas, all separate processes: any replica
streams, resumes (Last-Event-ID) and cancels any job; the per-client share holds across replicas; a
worker killed with SIGKILL mid-training leaves its job `failed` with the reason, on the status route and
the event stream; a replica killed mid-stream loses no event (the client resumes on another replica)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import httpx
import pytest
from support.needs import need
from support.waiting import wait_for

from support.live_server import ROOT, LiveServer
from support.redis_server import redis_server  # noqa: F401 - fixture

need("torch")
need("celery")
pytestmark = pytest.mark.train

HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);\n"
SHORT = {"source": HIST, "vocab": "abc", "max_len": 6, "steps": 200, "d_model": 16}
LONG = {"source": HIST, "vocab": "abc", "max_len": 6, "steps": 1_000_000, "d_model": 16}
SECONDS = 120


class Worker:
    """`rasplay worker` (a process per queue) in a new session, so that it and its processes can be killed."""

    def __init__(self, url: str, data_dir):
        import redis

        self.url, self.data_dir = url, data_dir
        self.redis = redis.Redis.from_url(url)
        self.process = None
        self.start()

    def start(self) -> None:
        self.redis.delete(*self.redis.keys("rasplay:worker:*") or ["-"])
        self.log = open(self.data_dir / "worker.log", "a")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rasplay.cli", "worker", "--broker", self.url, "--data-dir",
             str(self.data_dir), "--train-jobs", "1", "--train-warm", "1", "--heavy-workers", "1",
             "--train-seconds", str(SECONDS)], cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)
        # ready: each queue's process says it is alive (its heartbeat in Redis)
        wait_for(what="the worker's queues", check=lambda: self.process.poll() is None and all(
            self.redis.keys(f"rasplay:worker:{q}:*") for q in ("train", "heavy")) or self._exited())

    def _exited(self):
        if self.process.poll() is not None:
            raise AssertionError(f"rasplay worker exited: {(self.data_dir / 'worker.log').read_text()}")

    def train_process(self):
        import psutil

        for child in psutil.Process(self.process.pid).children():
            if "train" in child.cmdline():
                return child
        raise AssertionError("no training queue process")

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory, redis_server):  # noqa: F811
    url = redis_server.url.rsplit("/", 1)[0] + "/2"   # a database of its own: no other test's keys
    import redis

    redis.Redis.from_url(url).flushdb()
    root = tmp_path_factory.mktemp("course")
    for name in ("w", "a", "b"):
        (root / name).mkdir()
    worker = Worker(url, root / "w")
    flags = ("--workers", "1", "--broker", url, "--train-seconds", str(SECONDS), "--train-orphan-seconds", "20")
    replicas = []
    try:
        replicas.append(LiveServer(root / "a", *flags))
        replicas.append(LiveServer(root / "b", *flags))
        yield {"url": url, "worker": worker, "a": replicas[0], "b": replicas[1], "flags": flags, "root": root}
    finally:
        for r in replicas:
            r.stop()
        worker.stop()


def status(server, job_id, client=None):
    r = (client or httpx).get(f"{server.url}/api/v1/train/{job_id}", timeout=30)
    assert r.status_code == 200, r.text
    return r.json()


def start(server, body, address=None):
    transport = httpx.HTTPTransport(local_address=address) if address else None
    with httpx.Client(base_url=server.url, timeout=30, transport=transport) as c:
        return c.post("/api/v1/train", json=body)


def stream(server, job_id, last_event_id=None, stop_after=None):
    """Read a job's event stream: ([(id, event)], the end or None when stopped after `stop_after` events)."""
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    events, kind, event_id = [], None, None
    with httpx.stream("GET", f"{server.url}/api/v1/train/{job_id}/events", headers=headers, timeout=SECONDS) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line.startswith("id: "):
                event_id = int(line[4:])
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                if kind == "done":
                    return events, json.loads(line[6:])
                events.append((event_id, json.loads(line[6:])))
                if stop_after is not None and len(events) >= stop_after:
                    return events, None
    raise AssertionError("the stream ended without its end")


def test_compiler_work_runs_in_the_worker(course):
    with course["a"].client() as c:
        r = c.post("/api/v1/compile", json={"source": HIST, "vocab": "abc", "max_len": 4})
        assert r.status_code == 200, r.text
        model = r.json()["id"]
        run = c.post(f"/api/v1/models/{model}/run", json={"inputs": ["abca"]})
        assert run.status_code == 200 and run.json()["outputs"] == [[2, 1, 1, 2]] and all(run.json()["agree"]), run.text
        weights = c.get(f"/api/v1/models/{model}/weights.npz")
        assert weights.status_code == 200 and weights.content[:2] == b"PK"    # bytes come back whole
        bad = c.post("/api/v1/compile", json={"source": "x = tokens + ;", "vocab": "abc", "max_len": 4})
        assert bad.status_code == 422
        health = c.get("/api/v1/health").json()
        assert health["pools"]["heavy"]["queue"] == "celery" and health["pools"]["heavy"]["results"]["ok"] >= 3
        assert course["url"] not in json.dumps(health)   # the broker's URL is never shown
        # /health counts the live workers of each queue across the course (from their heartbeats)
        training = wait_for(what="the workers counted", check=lambda: (lambda t: t["workers"] == {"train": 1, "heavy": 1} and t)(
            c.get("/api/v1/health").json()["training"]))
        assert training["queue"] == "celery" and training["available"] is True
    assert course["worker"].redis.keys("celery-task-meta-*") == []   # results are removed once read


def test_a_job_streams_on_any_replica_and_resumes_after_a_replica_is_killed(course):
    a, b = course["a"], course["b"]
    (course["root"] / "c").mkdir(exist_ok=True)
    c = LiveServer(course["root"] / "c", *course["flags"])
    try:
        r = start(a, SHORT)
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        first, end = stream(c, job_id, stop_after=3)    # on a third replica, which then dies mid-stream
        assert end is None and [i for i, _ in first] == [0, 1, 2]
    finally:
        c.kill()
    rest, end = stream(b, job_id, last_event_id=first[-1][0])   # the browser reconnects to another replica
    assert end["status"] == "done", end
    ids = [i for i, _ in first + rest]
    assert ids == list(range(len(ids))) and end["events"] == len(ids)   # every event once, in order
    whole, again = stream(a, job_id)
    assert [e for _, e in whole] == [e for _, e in first + rest] and again == end
    job = status(b, job_id)
    assert job["status"] == "done" and job["events"] == len(ids) and job["result"]["final"]["test_acc"] > 0
    assert [e["step"] for _, e in rest if e["point"] == "eval"][-1] == SHORT["steps"]


def test_cancel_on_another_replica_and_the_share_of_a_client_across_replicas(course):
    a, b = course["a"], course["b"]
    r = start(a, LONG)
    assert r.status_code == 202, r.text
    running = r.json()["id"]
    wait_for(what="the job to run and report", check=lambda: (lambda j: j["status"] == "running" and j["events"] >= 1)(
        status(b, running)))
    queued = start(b, LONG)            # the second place of this address, through the other replica
    assert queued.status_code == 202, queued.text
    third = start(a, LONG)             # --client-jobs 2: the third is refused, whichever replica is asked
    assert third.status_code == 429 and "per client" in third.json()["error"]["message"], third.text
    other = start(a, LONG, address="127.0.0.2")   # another address still has its share
    assert other.status_code == 202, other.text
    # --train-queue 4 across the replicas: two more wait (from a third address), the next is refused
    more = [start(server, LONG, address="127.0.0.3") for server in (a, b)]
    assert [r.status_code for r in more] == [202, 202], [r.text for r in more]
    full = start(b, LONG, address="127.0.0.4")
    assert full.status_code == 429 and "already waiting" in full.json()["error"]["message"], full.text
    for job in (queued.json()["id"], other.json()["id"], *(r.json()["id"] for r in more)):
        cancelled = httpx.delete(f"{a.url}/api/v1/train/{job}", timeout=30)
        assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"   # queued: at once
    r = httpx.delete(f"{b.url}/api/v1/train/{running}", timeout=30)   # asked of the replica that did not start it
    assert r.status_code == 200
    events, end = stream(a, running)
    assert end["status"] == "cancelled" and end["events"] == len(events) >= 1
    assert status(b, running)["status"] == "cancelled"
    # the places were given back on every replica
    again = start(b, SHORT)
    assert again.status_code == 202, again.text
    httpx.delete(f"{a.url}/api/v1/train/{again.json()['id']}", timeout=30)


def test_a_worker_killed_mid_training_fails_its_job_with_the_reason(course):
    a, b, worker = course["a"], course["b"], course["worker"]
    r = start(a, LONG)
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    seen, end = stream(b, job_id, stop_after=2)    # it trains: progress arrived
    try:
        worker.train_process().send_signal(signal.SIGKILL)   # kill -9 the worker training it
        events, end = stream(a, job_id, last_event_id=seen[-1][0])
        assert end["status"] == "failed" and "worker" in end["error"] and "stopped" in end["error"], end
        job = status(b, job_id)
        assert job["status"] == "failed" and job["error"] == end["error"]   # what the page shows
        assert job["events"] == end["events"] == len(seen) + len(events)
        # and the client's place is free again: a new job is accepted and runs on a new worker
        worker.stop()
    finally:
        worker.start()
    r = start(b, SHORT)
    assert r.status_code == 202, r.text
    events, end = stream(a, r.json()["id"])
    assert end["status"] == "done" and len(events) == end["events"]


def test_without_a_broker_nothing_of_the_queue_is_imported():
    code = ("import sys; from rasplay.server import app; from rasplay.cli import main; from rasplay.server.api import train; main.build_parser(); "
            "print(sorted(m for m in ('celery', 'kombu', 'redis') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_worker_needs_a_broker_and_known_queues():
    env = {k: v for k, v in os.environ.items() if k != "RASPLAY_BROKER"}
    run = subprocess.run([sys.executable, "-m", "rasplay.cli", "worker"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=env)
    assert run.returncode == 1 and "--broker redis://" in run.stderr
    run = subprocess.run([sys.executable, "-m", "rasplay.cli", "worker", "--broker", "redis://127.0.0.1:1/0",
                          "--queues", "train,cook"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 1 and "--queues takes train, heavy or both" in run.stderr


@pytest.mark.browser
def test_the_page_says_when_the_worker_training_its_job_died(course, guarded):
    from support.browser_kit import open_app

    worker = course["worker"]
    page = guarded.page()
    open_app(page, course["a"].url)
    page.click("#tab-train")
    page.fill("#train-steps", "100000")
    page.fill("#train-max-len", "5")
    page.click("#train-start")
    page.wait_for_selector(".run-line[data-status='training']", timeout=SECONDS * 1000)
    try:
        worker.train_process().send_signal(signal.SIGKILL)
        line = page.wait_for_selector(".run-line[data-status='failed']", timeout=SECONDS * 1000)
        assert "the worker training this job stopped" in line.text_content()
    finally:
        worker.stop()
        worker.start()
