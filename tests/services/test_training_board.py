"""The job board of replicas with a broker (server/course/training_board.py) against a real Redis (tests/support/redis_server.py):
shares taken atomically by replicas submitting together, a job ends once whoever ends it, nothing follows
its end in its stream, events resume from any index, and a running job whose worker stopped renewing its
lease ends `failed` with the reason."""
from __future__ import annotations

import asyncio
import concurrent.futures
import time

import pytest
from support.needs import need

from support.redis_server import redis_server  # noqa: F401 - fixture

need("redis")

from rasplay.server.course import training_board  # noqa: E402
from rasplay.server.training_jobs import ClientFull, QueueFull  # noqa: E402
from rasplay.server.course.training_board import JobBoard  # noqa: E402

SPEC = {"source": "x = tokens;", "config": {"vocab": "ab"}}


@pytest.fixture
def url(redis_server):  # noqa: F811
    import redis

    url = redis_server.url.rsplit("/", 1)[0] + "/3"
    redis.Redis.from_url(url).flushdb()
    return url


def run(coro):
    """asyncio.run in a thread of its own: a browser test before this one (Playwright's sync API) leaves an
    event loop running in this thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def test_replicas_submitting_together_never_exceed_the_shares(url):
    async def main():
        boards = [JobBoard(url, orphan_after=30) for _ in range(4)]   # four replicas
        try:
            async def submit(board, client):
                try:
                    return await board.submit(SPEC, client, per_client=2, max_queued=5)
                except (ClientFull, QueueFull) as e:
                    return type(e).__name__
            tries = [submit(boards[i % 4], f"client-{i % 3}") for i in range(30)]
            return await asyncio.gather(*tries)
        finally:
            for b in boards:
                await b.close()
    results = run(main())
    accepted = [r for r in results if r not in ("ClientFull", "QueueFull")]
    assert len(accepted) == 5                                            # the queue's bound, not one per replica
    assert results.count("ClientFull") + results.count("QueueFull") == 25


def test_a_job_ends_once_and_its_end_is_the_last_entry_of_its_stream(url):
    async def main():
        board = JobBoard(url, orphan_after=30)
        try:
            job_id = await board.submit(SPEC, "me", per_client=2, max_queued=4)
            assert (await board.start(job_id, "w"))["status"] == "running"
            assert await board.add_events(job_id, [{"step": 1}, {"step": 2}], 0)
            assert await board.finish(job_id, "cancelled") == 1
            assert await board.finish(job_id, "failed", error="late") == 0          # ended once
            assert not await board.add_events(job_id, [{"step": 3}], 2)           # nothing after the end
            job = await board.read(job_id)
            assert job["status"] == "cancelled" and "error" not in job and job["events"] == "2"
            assert [i async for i, _ in board.events(job_id, 0)] == [0, 1]
            assert [e async for _, e in board.events(job_id, 1)] == [{"step": 2}]   # resumes at any index
            assert [e async for _, e in board.events(job_id, 2)] == []
            # the place is given back: the client may queue two more
            for _ in range(2):
                await board.submit(SPEC, "me", per_client=2, max_queued=4)
        finally:
            await board.close()
    run(main())


def test_a_running_job_whose_lease_lapsed_fails_with_the_reason(url, monkeypatch):
    monkeypatch.setattr(training_board, "LEASE_SECONDS", 1)

    async def main():
        board = JobBoard(url, orphan_after=30)
        try:
            job_id = await board.submit(SPEC, "me", per_client=2, max_queued=4)
            await board.start(job_id, "w")
            status, cancel, wanted = await board.renew(job_id)
            assert (status, cancel, wanted) == ("running", False, True)
            assert (await board.refresh(job_id))["status"] == "running"    # the lease holds
            deadline = time.monotonic() + 30
            while (job := await board.refresh(job_id))["status"] == "running":   # the worker says nothing more
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            assert job["status"] == "failed" and job["error"] == training_board.LOST
            assert (await board.renew(job_id))[0] == "failed"                  # a late worker learns it
            assert [i async for i, _ in board.events(job_id, 0)] == []         # the stream ends
        finally:
            await board.close()
    run(main())


def test_a_queued_job_no_one_follows_is_cancelled_and_never_starts(url):
    async def main():
        board = JobBoard(url, orphan_after=1)
        try:
            job_id = await board.submit(SPEC, "me", per_client=2, max_queued=4)
            deadline = time.monotonic() + 30
            while await board.redis.exists(board.keys(job_id)["wanted"]):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            assert await board.start(job_id, "w") is None
            assert (await board.read(job_id))["status"] == "cancelled"
        finally:
            await board.close()
    run(main())


def test_a_lease_that_lapsed_while_redis_was_frozen_does_not_fail_a_job_whose_worker_renews_it(url, monkeypatch):
    """A frozen Redis's clock runs on: its leases expire under a live worker. The first look that finds the
    lease lapsed only marks it; the worker's renewal clears the mark, and later looks find it running."""
    monkeypatch.setattr(training_board, "CONFIRM_SECONDS", 1)

    async def main():
        board = JobBoard(url, orphan_after=30)
        try:
            job_id = await board.submit(SPEC, "me", per_client=2, max_queued=4)
            await board.start(job_id, "w")
            await board.redis.delete(board.keys(job_id)["lease"])            # expired during the freeze
            assert (await board.refresh(job_id))["status"] == "running"     # marked, not ended
            assert (await board.read(job_id)).get("lapsed")
            assert (await board.renew(job_id))[0] == "running"            # the worker answers again
            assert "lapsed" not in await board.read(job_id)
            deadline = time.monotonic() + 2.5                                # past CONFIRM_SECONDS (Redis's clock)
            while time.monotonic() < deadline:
                assert (await board.refresh(job_id))["status"] == "running"
                await board.renew(job_id)
                await asyncio.sleep(0.2)
        finally:
            await board.close()
    run(main())


def test_a_job_whose_state_redis_lost_is_written_back_failed_with_the_reason_by_its_worker(url):
    async def main():
        board = JobBoard(url, orphan_after=30)
        try:
            job_id = await board.submit(SPEC, "me", per_client=2, max_queued=4)
            taken = await board.start(job_id, "w")
            assert await board.add_events(job_id, [{"step": 1}], 0)
            await board.redis.flushdb()                                      # Redis restarted without its data
            assert await board.read(job_id) is None
            assert (await board.renew(job_id))[0] is None                   # what the worker sees
            assert await board.lost(job_id, taken)
            assert not await board.lost(job_id, taken)                      # written once
            job = training_board.public(job_id, await board.read(job_id))
            assert job["status"] == "failed" and job["error"] == training_board.STATE_LOST and job["spec"] == SPEC
            assert job["events"] == 0 and [e async for e in board.events(job_id, 0)] == []   # the stream ends
            assert await board.finish(job_id, "done") == 0                  # its end stays the loss
            assert not await board.redis.sismember(training_board.RUNNING, job_id)
        finally:
            await board.close()
    run(main())
