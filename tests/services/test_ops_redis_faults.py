"""The job queue's Redis frozen or restarted empty under a running training (issue 35, item 3), with real
processes: a Redis (tests/support/redis_server.py), a `rasplay worker` (both queues) and a `rasplay serve
--broker` replica. A 10 s freeze (SIGSTOP, then SIGCONT) fails no training: its job ends `done` with every
event; meanwhile compiles and the training routes are answered 503 with Retry-After and the reason within
seconds, not at the freeze's end, and an event stream open across it ends with an error event, never a
traceback. A Redis without persistence restarted mid-training lost the job's state: the worker writes it
back `failed`, saying so, and a job Redis no longer knows is a 404 that names the loss."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest
from support.needs import need
from support.waiting import wait_for

from support.live_server import ROOT, LiveServer

need("torch")
need("celery")
pytestmark = pytest.mark.train

HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);\n"
COMPILE = {"source": HIST, "vocab": "abc", "max_len": 4}
FREEZE_SECONDS = 10


@pytest.fixture
def course(tmp_path):
    """A Redis without persistence, a worker for both queues, and a replica with --broker."""
    from support.redis_server import RedisServer

    redis = RedisServer()
    (tmp_path / "w").mkdir()
    log = open(tmp_path / "w" / "worker.log", "w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "rasplay.cli", "worker", "--broker", redis.url, "--data-dir", str(tmp_path / "w"),
         "--train-jobs", "1", "--train-warm", "1", "--heavy-workers", "1"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    server = None
    try:
        server = LiveServer(tmp_path, "--workers", "1", "--broker", redis.url, "--train-orphan-seconds", "600")
        with server.client() as c:
            wait_for(lambda: c.get("/api/v1/ready").status_code == 200 or worker.poll() is not None, timeout=300,
                     what="a live train and heavy worker")
        assert worker.poll() is None, (tmp_path / "w" / "worker.log").read_text()
        yield {"redis": redis, "server": server, "worker_log": tmp_path / "w" / "worker.log"}
    finally:
        redis.freeze(False) if redis.process.poll() is None else None
        if server is not None:
            server.stop()
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        log.close()
        redis.close()


def running_job(c: httpx.Client, **config) -> str:
    r = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "max_len": 6, "d_model": 16, **config})
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    wait_for(lambda: (lambda j: j["status"] == "running" and j["events"] > 0)(c.get(f"/api/v1/train/{job_id}").json()),
             timeout=300, what="the job running, with progress")
    return job_id


class StreamReader:
    """A job's event stream read in a thread: its events' ids and kinds, until the stream ends."""

    def __init__(self, url: str, job_id: str):
        self.ids, self.kinds, self.data, self.ended = [], [], [], threading.Event()
        self.thread = threading.Thread(target=self._read, args=(url, job_id), daemon=True)
        self.thread.start()

    def _read(self, url, job_id):
        try:
            with httpx.stream("GET", f"{url}/api/v1/train/{job_id}/events", timeout=300) as r:
                for line in r.iter_lines():
                    if line.startswith("id: "):
                        self.ids.append(int(line[4:]))
                    elif line.startswith("event: "):
                        self.kinds.append(line[7:])
                    elif line.startswith("data: "):
                        self.data.append(json.loads(line[6:]))
        finally:
            self.ended.set()


def timed(fn):
    started = time.monotonic()
    r = fn()
    return r, time.monotonic() - started


def assert_unavailable(r: httpx.Response):
    assert r.status_code == 503 and r.headers["content-type"] == "application/json", r.text
    assert r.headers["retry-after"].isdigit()
    error = r.json()["error"]
    assert error["kind"] == "unavailable" and "job queue is unreachable" in error["message"], error
    return error["message"]


def test_a_ten_second_redis_freeze_fails_no_training_and_no_request_waits_it_out(course):
    redis, server = course["redis"], course["server"]
    with server.client(timeout=60) as c:
        assert c.post("/api/v1/compile", json=COMPILE).status_code == 200   # the heavy worker answers
        job_id = running_job(c, steps=1_000_000, time_budget=30)
        reader = StreamReader(server.url, job_id)
        wait_for(lambda: reader.ids, what="the stream's first event")
        redis.freeze()
        frozen_at = time.monotonic()
        try:
            compiled, compile_took = timed(lambda: c.post("/api/v1/compile", json=COMPILE))
            reason = assert_unavailable(compiled)
            assert "does not answer" in reason and compile_took < 5, (reason, compile_took)
            state, state_took = timed(lambda: c.get(f"/api/v1/train/{job_id}"))
            assert_unavailable(state)
            assert state_took < 1, state_took                       # the gate: at once after a failure
            assert reader.ended.wait(FREEZE_SECONDS), "the open stream did not end while Redis was frozen"
            assert reader.kinds[-1] == "error" and reader.data[-1]["kind"] == "unavailable", reader.kinds
            assert time.monotonic() - frozen_at < FREEZE_SECONDS     # all of it answered within the freeze
            time.sleep(max(0.0, frozen_at + FREEZE_SECONDS - time.monotonic()))   # the fault lasts 10 s
        finally:
            redis.freeze(False)
        job = wait_for(lambda: (lambda r: r.status_code == 200 and r.json()["status"] != "running" and r.json())(
            c.get(f"/api/v1/train/{job_id}")), timeout=300, what="the job's end")
        assert job["status"] == "done" and job["error"] is None, (job, course["worker_log"].read_text()[-3000:])
        assert job["result"]["steps"] > 0
        events = c.get(f"/api/v1/train/{job_id}/events").text
        ids = [int(line[4:]) for line in events.splitlines() if line.startswith("id: ")]
        assert ids == list(range(job["events"])) and "event: done" in events   # every event, once
        wait_for(lambda: c.post("/api/v1/compile", json=COMPILE).status_code == 200, what="compiles again")
    log = server.log_path.read_text()
    assert "Traceback" not in log and "503 POST /api/v1/compile (unavailable)" in log, log[-3000:]


def test_a_training_whose_state_a_redis_without_persistence_lost_says_so(course):
    redis, server = course["redis"], course["server"]
    with server.client(timeout=60) as c:
        job_id = running_job(c, steps=1_000_000, time_budget=120)
        redis.stop()
        redis.start()   # empty: no append-only file
        job = wait_for(lambda: (lambda r: r.status_code == 200 and r.json())(c.get(f"/api/v1/train/{job_id}")),
                       timeout=120, what="the job written back by its worker")
        assert job["status"] == "failed" and "lost this job's state" in job["error"], job
        assert "start the training again" in job["error"]
        events = c.get(f"/api/v1/train/{job_id}/events").text
        done = json.loads(events.split("event: done\ndata: ")[1].split("\n")[0])
        assert done["status"] == "failed" and done["error"] == job["error"]
        gone = c.get("/api/v1/train/" + "A" * 22)
        assert gone.status_code == 404 and gone.json()["error"]["kind"] == "not_found"
        message = gone.json()["error"]["message"]
        assert "append-only file" in message and "start the training again" in message, message
    assert "Traceback" not in server.log_path.read_text()
