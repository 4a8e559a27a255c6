"""A training job whose page is gone (no event stream open, no status asked for a while) is cancelled, so
that it does not hold a slot the next student waits for (server/training_jobs.py, `orphan_after`); a followed job
keeps running."""
from __future__ import annotations

import asyncio
import time

from support.waiting import run_async
from support.waiting import job_ended

from rasplay.server.training_jobs import JobManager


async def _until(predicate, timeout=60):
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return predicate()


def test_a_job_nobody_follows_is_cancelled_and_a_followed_one_runs_on():
    async def scenario():
        jobs = JobManager("support.job_runners.allocate", max_running=2, max_queued=2, time_limit=120, orphan_after=0.5)
        try:
            followed, orphan = jobs.submit({"mib": 1}), jobs.submit({"mib": 1})
            followed.readers += 1   # a page reads its event stream (server/api/train.py does this)
            await job_ended(orphan)
            assert orphan.status == "cancelled"
            # the followed job ran on meanwhile; once its reader leaves, it is cancelled as well
            assert await _until(lambda: followed.events)   # (its process may start slowly on a busy machine)
            assert followed.status == "running" and followed.events == [{"allocated": 1}]
            followed.readers -= 1
            followed.touch()
            await job_ended(followed)
            assert followed.status == "cancelled"
            # a client that polls the status (an API user without the event stream) keeps its job
            polled = jobs.submit({"mib": 1})

            def poll():
                polled.touch()
                return bool(polled.events)
            assert await _until(poll)
            for _ in range(20):   # two orphan periods, polled every 0.1 s
                polled.touch()
                await asyncio.sleep(0.1)
            assert polled.status == "running"
            jobs.cancel(polled)
            await job_ended(polled)
        finally:
            await jobs.close()

    run_async(scenario())


def test_without_an_orphan_limit_jobs_run_unfollowed():
    async def scenario():
        jobs = JobManager("support.warm_job_runner.run", max_running=1, max_queued=1, time_limit=60)
        job = await job_ended(jobs.submit({"x": 1}))
        assert job.status == "done"
        await jobs.close()

    run_async(scenario())
