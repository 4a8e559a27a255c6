"""Settings that replicas and workers must agree on, checked as they meet (issue 35, item 6), with a real
Redis, a real `rasplay worker` and real replicas: a replica with --broker names a worker whose
--compile-seconds differs from its own; a replica started without --broker, whose --redis server holds live
workers, says it was most likely meant to have one."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from support.needs import need
from support.waiting import wait_for

from support.live_server import ROOT, LiveServer
from support.redis_server import redis_server  # noqa: F401 - fixture

need("celery")


def test_replicas_warn_about_settings_that_disagree_with_the_workers(tmp_path, redis_server):  # noqa: F811
    import redis

    base = redis_server.url.rsplit("/", 1)[0]
    broker, buckets = base + "/5", base + "/6"
    for url in (broker, buckets):
        redis.Redis.from_url(url).flushdb()
    for name in ("w", "a", "b"):
        (tmp_path / name).mkdir()
    log = open(tmp_path / "w" / "worker.log", "w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "rasplay.cli", "worker", "--broker", broker, "--queues", "heavy", "--heavy-workers", "1",
         "--compile-seconds", "7", "--data-dir", str(tmp_path / "w")],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    servers = []
    try:
        wait_for(lambda: redis.Redis.from_url(broker).keys("rasplay:worker:heavy:*") or worker.poll() is not None,
                 what="the worker's heartbeat")
        assert worker.poll() is None, (tmp_path / "w" / "worker.log").read_text()
        servers.append(LiveServer(tmp_path / "a", "--workers", "1", "--broker", broker, "--compile-seconds", "30"))
        servers.append(LiveServer(tmp_path / "b", "--workers", "1", "--heavy-workers", "1", "--redis", buckets))
        a, b = servers

        def said(server, text):
            server.client().get("/api/v1/health")   # (the replica counts the workers when asked)
            return text in server.log_path.read_text()
        wait_for(lambda: said(a, "has --compile-seconds 7 and this replica 30"), what="the disagreement named")
        wait_for(lambda: said(b, "this replica has no --broker"), what="the missing broker named")
        assert "database 5" in b.log_path.read_text()
        assert "no --broker" not in a.log_path.read_text() and "--compile-seconds" not in b.log_path.read_text()
    finally:
        for s in servers:
            s.stop()
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
        log.close()
