"""Health that tells the truth (issue 35, item 2), with real processes: liveness, readiness per dependency
(the store, the broker and its workers per queue) failing with a 503 JSON when the replica cannot serve and
recovering by itself, Prometheus metrics at /metrics, the access log, JSON log lines with timestamps, and
every 503 logged with its reason."""
from __future__ import annotations

import json
import re
import subprocess
import sys

from support.needs import need
from support.waiting import wait_for

from support.live_server import ROOT, LiveServer
from support.postgres_server import postgres_server  # noqa: F401 - fixture
from support.prometheus_text import sample

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def log_lines(server) -> list[dict]:
    """The server's JSON log lines (the banner, printed on stdout, is not a log line)."""
    return [json.loads(line) for line in server.log_path.read_text().splitlines()
            if line.strip() and not line.startswith("rasplay is serving")]


def test_a_plain_server_is_live_ready_counted_and_logged_as_json(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--heavy-workers", "1", "--access-log", "--log-format", "json")
    try:
        with server.client() as c:
            assert c.get("/api/v1/live").json() == {"status": "ok"}
            ready = c.get("/api/v1/ready")
            assert ready.status_code == 200, ready.text
            checks = ready.json()["checks"]
            assert checks["store"]["ok"] and checks["workers"] == {**checks["workers"], "ok": True, "evaluation": 1}
            assert checks["training"]["required"] is False and "broker" not in checks
            assert checks["draining"] == {"ok": True}
            assert c.get("/api/v1/health").json()["status"] == "ok"   # unchanged
            for _ in range(3):
                assert c.post("/api/v1/evaluate", json={"source": "r = tokens;", "inputs": ["ab"]}).status_code == 200
            assert c.post("/api/v1/evaluate", json={"source": "r = ;", "inputs": ["ab"]}).status_code == 200
            assert c.get("/api/v1/nothing-here").status_code == 404
            text = c.get("/metrics").text
        assert sample(text, "rasplay_http_requests_total", route="/api/v1/evaluate", method="POST", status="200") == 4
        assert sample(text, "rasplay_http_requests_total", route="/api/v1/{rest:path}", method="GET",
                      status="404") == 1
        assert sample(text, "rasplay_http_request_duration_seconds_count", route="/api/v1/evaluate") == 4
        assert sample(text, "rasplay_http_request_duration_seconds_bucket", route="/api/v1/evaluate", le="+Inf") == 4
        assert sample(text, "rasplay_pool_workers", pool="evaluation") == 1
        assert sample(text, "rasplay_pool_waiting", pool="evaluation") == 0
        assert sample(text, "rasplay_training_jobs", state="running") == 0
        assert sample(text, "rasplay_store_bytes") > 0
        lines = log_lines(server)
        assert lines and all(TIMESTAMP.match(line["time"]) for line in lines)
        access = [line for line in lines if line["logger"] == "rasplay.access"]
        evaluations = [line for line in access if line["path"] == "/api/v1/evaluate"]
        assert len(evaluations) == 4 and {line["status"] for line in evaluations} == {200}
        assert all(line["method"] == "POST" and line["client"] == "127.0.0.1" and line["ms"] >= 0
                   for line in evaluations)
    finally:
        server.stop()


def test_text_logs_have_timestamps_and_no_access_log_by_default(tmp_path):
    server = LiveServer(tmp_path, "--workers", "1", "--heavy-workers", "1", "--shutdown-seconds", "1")
    with server.client() as c:
        assert c.get("/api/v1/ready").status_code == 200
    server.stop()   # uvicorn's own lines at stop come through our format
    lines = [line for line in server.log_path.read_text().splitlines() if line and not line.startswith("rasplay is")]
    assert lines and all(re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (WARNING|ERROR|INFO) ", line)
                         for line in lines), lines
    assert not any("rasplay.access" in line for line in lines)


def test_the_store_down_makes_the_replica_unready_and_every_503_is_logged_and_counted(tmp_path, postgres_server):  # noqa: F811
    need("psycopg")
    url = postgres_server.new_database()
    server = LiveServer(tmp_path, "--workers", "1", "--heavy-workers", "1", "--store", url)
    try:
        with server.client() as c:
            assert c.get("/api/v1/ready").status_code == 200
            postgres_server.stop()
            try:
                ready = c.get("/api/v1/ready")
                assert ready.status_code == 503 and ready.headers["retry-after"].isdigit()
                doc = ready.json()
                assert doc["status"] == "unavailable" and not doc["checks"]["store"]["ok"]
                assert doc["error"]["kind"] == "unavailable" and "store:" in doc["error"]["message"]
                assert c.get("/api/v1/live").status_code == 200   # alive: a restart would not help
                share = c.post("/api/v1/share", json={"state": {"source": "x = indices;"}})
                assert share.status_code == 503, share.text
            finally:
                postgres_server.start()
            wait_for(lambda: c.get("/api/v1/ready").status_code == 200, what="ready again once PostgreSQL is back")
            text = c.get("/metrics").text
        assert sample(text, "rasplay_http_refusals_total", status="503", reason="unavailable") >= 2, [
            line for line in text.splitlines() if "refusals" in line]
        log = server.log_path.read_text()
        assert re.search(r"Z WARNING rasplay: 503 POST /api/v1/share \(unavailable\): .*try again", log), log
        assert re.search(r"Z WARNING rasplay: 503 GET /api/v1/ready \(unavailable\): not ready: store: ", log), log
    finally:
        server.stop()


def test_with_a_broker_readiness_counts_the_workers_per_queue_and_the_broker(tmp_path):
    need("celery")
    from support.redis_server import RedisServer

    redis = RedisServer()
    server = worker = None
    try:
        server = LiveServer(tmp_path, "--workers", "1", "--broker", redis.url)
        with server.client() as c:
            ready = c.get("/api/v1/ready")
            assert ready.status_code == 503
            workers = ready.json()["checks"]["workers"]
            assert workers["heavy"] == 0 and "heavy queue" in workers["reason"]
            assert ready.json()["checks"]["broker"]["ok"]
            log = open(tmp_path / "worker.log", "w")
            worker = subprocess.Popen([sys.executable, "-m", "rasplay.cli", "worker", "--broker", redis.url,
                                       "--queues", "heavy", "--heavy-workers", "1", "--data-dir", str(tmp_path / "w")],
                                      cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            wait_for(lambda: worker.poll() is None and c.get("/api/v1/ready").status_code == 200,
                     what="ready once a heavy worker beats")
            checks = c.get("/api/v1/ready").json()["checks"]
            assert checks["workers"]["heavy"] == 1 and checks["workers"]["train"] == 0
            assert checks["training"] == {"ok": False, "where": "workers", "required": False,
                                          "reason": "no live `rasplay worker` serves the train queue"}
            assert sample(c.get("/metrics").text, "rasplay_remote_workers", queue="heavy") == 1
            redis.stop()
            ready = c.get("/api/v1/ready")
            assert ready.status_code == 503 and not ready.json()["checks"]["broker"]["ok"]
            assert "broker:" in ready.json()["error"]["message"]
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=60)
        if server is not None:
            server.stop()
        redis.close()


def test_a_bad_log_format_is_refused_with_the_choices():
    done = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--log-format", "xml"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 2 and "choose from 'text', 'json'" in done.stderr
