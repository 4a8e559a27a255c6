"""The first request after the job queue's Redis restarted (with its append-only file: the job is still
there) is served, not answered 503: the job board's pooled connections, which the old Redis closed, are
renewed when the gate sees Redis answer again (server/course/queue_gate.py). A real Redis, restarted under
a replica's job board (SharedJobs, the code of GET /api/v1/train/{id})."""
from __future__ import annotations

import pytest

from support.needs import need
from support.redis_server import RedisServer
from support.waiting import run_async

need("celery")


@pytest.mark.parametrize("asked_while_down", [False, True])
def test_the_first_status_after_a_redis_restart_is_served(asked_while_down):
    from rasplay.server.errors import ApiError
    from rasplay.server.course.queue_gate import QueueGate
    from rasplay.server.course.training_board import SharedJobs

    redis = RedisServer(persistent=True)

    async def main():
        gate = QueueGate(redis.url, fresh_seconds=0.0)   # (Redis asked at every request: no time window)
        jobs = SharedJobs(redis.url, 5, 5, 60, gate=gate)
        try:
            job_id = await jobs.board.submit({"source": "r = tokens;"}, "client", 5, 5)
            for _ in range(3):
                assert (await jobs.status(job_id))["status"] == "queued"   # the board's connection in the pool
                redis.stop()
                if asked_while_down:
                    with pytest.raises(ApiError) as down:
                        await jobs.status(job_id)
                    assert down.value.status == 503
                redis.start()
                first = await jobs.status(job_id)   # before the fix: 503, "Connection closed by server"
                assert first["status"] == "queued" and first["id"] == job_id
        finally:
            await jobs.board.redis.aclose()
            await gate.close()
    try:
        run_async(main())   # in a thread of its own: a browser test in this process may hold the loop
    finally:
        redis.close()
