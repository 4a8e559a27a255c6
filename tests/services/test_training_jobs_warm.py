"""Training jobs start in a warm spare process when one is ready (server/training_jobs.py), and a new spare is
started once no job runs."""
from __future__ import annotations

import asyncio
import time

from support.waiting import run_async, job_ended
from rasplay.server.training_jobs import JobManager




def test_a_job_starts_in_the_warm_spare_and_the_spare_is_replaced():
    async def scenario():
        jobs = JobManager("support.warm_job_runner.run", max_running=2, max_queued=2, time_limit=60, warm=1)
        try:
            jobs.fill_spares()
            (spare, _), = jobs._spares
            # the stats say when the spare has done its imports (what /health reports as training.warm)
            deadline = time.monotonic() + 60
            while jobs.stats()["warm"] < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert jobs.stats()["warm"] == 1 and jobs.stats()["warm_starting"] == 0
            first = await job_ended(jobs.submit({"x": 1}))
            assert first.status == "done" and first.warm and first.public()["warm"] is True
            assert first.result == {"pid": spare.pid, "warmed_here": True, "echo": 1}
            assert [e["phase"] for e in first.events] == ["test"]
            # the spare was used up; a fresh one is started once no job runs
            assert len(jobs._spares) == 1 and jobs._spares[0][0].pid != spare.pid
            assert jobs.stats()["warm"] + jobs.stats()["warm_starting"] == 1
            # two jobs at once: one gets the spare, the other a fresh (cold) process; both finish
            a, b = jobs.submit({"x": 2}), jobs.submit({"x": 3})
            await job_ended(a), await job_ended(b)
            assert {a.status, b.status} == {"done"} and sorted([a.warm, b.warm]) == [False, True]
            assert a.result["warmed_here"] == a.warm and b.result["warmed_here"] == b.warm
        finally:
            await jobs.close()
        assert jobs._spares == []

    run_async(scenario())


def test_without_warm_spares_jobs_start_cold():
    async def scenario():
        jobs = JobManager("support.warm_job_runner.run", max_running=1, max_queued=1, time_limit=60)
        try:
            jobs.fill_spares()
            assert jobs._spares == []
            job = await job_ended(jobs.submit({"x": 4}))
            assert job.status == "done" and not job.warm and job.result["warmed_here"] is False
        finally:
            await jobs.close()

    run_async(scenario())
