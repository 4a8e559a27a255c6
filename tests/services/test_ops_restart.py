"""Graceful restarts (issue 35, item 4), with real processes. `rasplay serve` told to stop (SIGTERM) stops
listening, lets a request in flight finish within --shutdown-seconds, and answers one still unfinished
after it with a 503 JSON (never uvicorn's 500 text); `rasplay worker` told to stop takes no new work and
lets its running training finish within --stop-seconds, or fails it with that reason for the student.

A request is held in flight by its body: the client sends half of it, and the rest only when the test says."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading

import httpx
import pytest
from support.needs import need
from support.waiting import wait_for

from support.live_server import ROOT, LiveServer
from support.prometheus_text import sample


class HeldRequest:
    """POST /api/v1/share whose body is sent in two halves, the second when `release()` is called."""

    def __init__(self, server):
        self.released = threading.Event()
        self.response: httpx.Response | None = None
        self.error: Exception | None = None
        body = json.dumps({"state": {"source": "# held\nx = indices;"}}).encode()

        def chunks():
            yield body[:10]
            self.released.wait(120)
            yield body[10:]

        def send():
            try:
                with httpx.Client(base_url=server.url, timeout=120) as c:
                    self.response = c.post("/api/v1/share", content=chunks(),
                                           headers={"content-type": "application/json",
                                                    "content-length": str(len(body))})
            except Exception as e:   # recorded for the test's assertion
                self.error = e
        self.thread = threading.Thread(target=send, daemon=True)
        self.thread.start()
        # in flight: the server answers it and this scrape of /metrics
        with server.client() as c:
            wait_for(lambda: sample(c.get("/metrics").text, "rasplay_http_requests_in_flight") >= 2,
                     what="the held request in flight")

    def release(self) -> httpx.Response:
        self.released.set()
        self.thread.join(120)
        assert self.error is None, self.error
        return self.response


# uvicorn ends by the signal it was given, once it has stopped cleanly (systemd counts that as a clean stop)
STOPPED = (0, -signal.SIGTERM)


def refused(server) -> bool:
    try:
        httpx.get(server.url + "/api/v1/live", timeout=2)
    except httpx.ConnectError:
        return True
    except httpx.HTTPError:
        return False
    return False


def test_sigterm_stops_listening_and_a_request_in_flight_finishes(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--heavy-workers", "1", "--shutdown-seconds", "60")
    held = HeldRequest(server)
    os.killpg(server.process.pid, signal.SIGTERM)
    wait_for(lambda: refused(server), what="no new connection accepted once told to stop")
    assert server.process.poll() is None   # still serving the request in flight
    r = held.release()
    assert r.status_code == 200 and r.json()["id"], r.text
    assert server.process.wait(timeout=60) in STOPPED
    log = server.log_path.read_text()
    assert "stopping: requests in flight have 60 s to finish" in log and "Traceback" not in log, log


def test_a_request_still_in_flight_after_the_grace_is_a_503_json_not_a_500(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--heavy-workers", "1", "--shutdown-seconds", "1")
    held = HeldRequest(server)
    os.killpg(server.process.pid, signal.SIGTERM)
    assert server.process.wait(timeout=60) in STOPPED   # it did not wait for the body
    r = held.release()
    assert r.status_code == 503 and r.headers["content-type"] == "application/json", r.text
    assert r.headers["retry-after"].isdigit()
    assert r.json()["error"]["kind"] == "unavailable" and "restarting" in r.json()["error"]["message"]
    log = server.log_path.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log
    assert "503 POST /api/v1/share (unavailable): the server is restarting" in log, log


HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);\n"


class TrainWorker:
    """`rasplay worker --queues train` in a session of its own."""

    def __init__(self, url: str, data_dir, stop_seconds: float):
        self.log_path = data_dir / "worker.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rasplay.cli", "worker", "--broker", url, "--queues", "train", "--data-dir",
             str(data_dir), "--train-jobs", "1", "--train-warm", "1", "--stop-seconds", str(stop_seconds)],
            cwd=ROOT, stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT, start_new_session=True)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


@pytest.fixture(params=[False])
def course(tmp_path, request):
    """A replica with --broker and its Redis (with the append-only file when the parameter says so)."""
    need("torch")
    need("celery")
    from support.redis_server import RedisServer

    redis = RedisServer(persistent=request.param)
    server = None
    try:
        server = LiveServer(tmp_path, "--workers", "1", "--broker", redis.url, "--train-orphan-seconds", "600")
        yield {"redis": redis, "server": server, "tmp": tmp_path}
    finally:
        if server is not None:
            server.stop()
        redis.close()


def run_training(course, stop_seconds: float, steps: int) -> tuple[TrainWorker, str]:
    """A train worker, and a job of `steps` steps running on it (a progress event seen)."""
    server = course["server"]
    (course["tmp"] / "w").mkdir()
    worker = TrainWorker(course["redis"].url, course["tmp"] / "w", stop_seconds)
    with server.client() as c:
        wait_for(lambda: c.get("/api/v1/ready").json()["checks"]["training"]["ok"] or worker.process.poll() is not None,
                 what="a live train worker")
        assert worker.process.poll() is None, worker.log_path.read_text()
        r = c.post("/api/v1/train", json={"source": HIST, "vocab": "abc", "max_len": 6, "steps": steps,
                                          "d_model": 16})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        wait_for(lambda: c.get(f"/api/v1/train/{job_id}").json()["status"] == "running", what="the job running")
    return worker, job_id


@pytest.mark.train
def test_a_worker_told_to_stop_finishes_its_training_and_takes_no_new_one(course):
    worker, job_id = run_training(course, stop_seconds=600, steps=1500)
    server = course["server"]
    try:
        os.kill(worker.process.pid, signal.SIGTERM)   # the main process only: systemd's KillMode=mixed (docs/deploy.md)
        with server.client() as c:
            # it says at once that it is gone: no replica counts it for new trainings
            wait_for(lambda: not c.get("/api/v1/ready").json()["checks"]["training"]["ok"], what="the worker gone")
            assert worker.process.wait(timeout=300) == 0
            job = c.get(f"/api/v1/train/{job_id}").json()
        assert job["status"] == "done", job
        assert job["result"]["steps"] == 1500 and job["result"]["final"]["test_acc"] > 0
    finally:
        worker.stop()


@pytest.mark.train
def test_a_training_past_the_workers_grace_fails_saying_why(course):
    worker, job_id = run_training(course, stop_seconds=1, steps=1_000_000)
    server = course["server"]
    try:
        os.kill(worker.process.pid, signal.SIGTERM)   # the main process only: systemd's KillMode=mixed (docs/deploy.md)
        assert worker.process.wait(timeout=300) == 0
        with server.client() as c:
            job = c.get(f"/api/v1/train/{job_id}").json()
            events = c.get(f"/api/v1/train/{job_id}/events").text
        assert job["status"] == "failed", job
        assert "stopped (a restart)" in job["error"] and "within its 1 s" in job["error"], job
        assert "start the training again" in job["error"]
        done = json.loads(events.split("event: done\ndata: ")[1].split("\n")[0])
        assert done["status"] == "failed" and done["error"] == job["error"]
    finally:
        worker.stop()


@pytest.mark.train
@pytest.mark.parametrize("course", [True], indirect=True)
def test_a_training_survives_a_restart_of_a_persistent_redis(course):
    """The recipe's Redis keeps an append-only file (docs/deploy.md): restarted mid-training, it comes back
    with the job's state; the worker's training goes on, and the job ends done with every event, on the
    status route and the event stream."""
    worker, job_id = run_training(course, stop_seconds=60, steps=2500)
    server, redis = course["server"], course["redis"]
    try:
        with server.client() as c:
            redis.stop()
            unavailable = c.get(f"/api/v1/train/{job_id}")
            assert unavailable.status_code == 503 and unavailable.json()["error"]["kind"] == "unavailable"
            redis.start()
            back = c.get(f"/api/v1/train/{job_id}")   # the first request once Redis is back is served
            assert back.status_code == 200 and back.json()["id"] == job_id, back.text
            wait_for(lambda: c.get(f"/api/v1/train/{job_id}").json()["status"] != "running", timeout=300,
                     what="the job's end")
            job = c.get(f"/api/v1/train/{job_id}").json()
            assert job["status"] == "done", (job, worker.log_path.read_text()[-3000:])
            events = c.get(f"/api/v1/train/{job_id}/events").text
        ids = [int(line[4:]) for line in events.splitlines() if line.startswith("id: ")]
        assert ids == list(range(job["events"])) and job["events"] > 0
        assert "event: done" in events and "Traceback" not in server.log_path.read_text()
    finally:
        worker.stop()
