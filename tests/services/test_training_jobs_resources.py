"""Training jobs' resources (issue 10, item 7 and 8), in the job manager's processes: a job's memory is capped
while it runs, and a job's temporary directory goes when the job ends, even killed (the estimate before
queueing: tests/unit/test_train_memory.py; over HTTP: tests/api/test_api_train_memory.py)."""
import asyncio
import concurrent.futures
import os

import pytest

from rasplay.server.training_jobs import FINISHED, JobManager


def run(coro):
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        return executor.submit(asyncio.run, coro).result()


async def until(job, statuses=FINISHED, timeout=120):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while job.status not in statuses:
        assert loop.time() < deadline, job.status
        await asyncio.sleep(0.05)


def test_a_job_over_its_memory_limit_is_stopped_with_a_clear_error():
    async def scenario():
        jobs = JobManager("support.job_runners.allocate", 2, 2, time_limit=120, memory_bytes=200 << 20)
        small, large = jobs.submit({"mib": 20}), jobs.submit({"mib": 400})
        await until(large)
        assert large.status == "failed" and "memory" in large.error and "200 MiB" in large.error
        await until(small, ("running",))
        while not small.events:
            await asyncio.sleep(0.05)
        assert small.status == "running"   # under the limit: it keeps running
        jobs.cancel(small)
        await until(small)
        assert small.status == "cancelled" and small.result == {"held": 20 << 20}
        await jobs.close()
    run(scenario())


@pytest.mark.parametrize("ending", ["cancel", "timeout"])
def test_a_killed_job_leaves_no_temporary_directory(ending, tmp_path):
    async def scenario():
        jobs = JobManager("support.job_runners.write_and_hang", 1, 1, time_limit=20 if ending == "timeout" else 300,
                          workroot=tmp_path / "jobs")
        job = jobs.submit({})
        while not job.events:   # the runner has written into its directory (a process starts in seconds)
            assert job.status == "running"
            await asyncio.sleep(0.05)
        workdir = job.events[0]["workdir"]
        assert workdir == job.workdir
        assert os.path.exists(os.path.join(workdir, "model.npz"))
        if ending == "cancel":
            jobs.cancel(job)   # it ignores the request: killed a second later
        await until(job)
        assert job.status == ("cancelled" if ending == "cancel" else "timeout")
        assert not os.path.exists(workdir) and os.listdir(tmp_path / "jobs") == []
        await jobs.close()
    run(scenario())


def test_directories_left_by_a_killed_server_are_removed_at_start(tmp_path):
    left = tmp_path / "jobs" / "rasplay-job-0001abcd-x"
    left.mkdir(parents=True)
    (left / "model.npz").write_bytes(b"x" * 100)
    JobManager("support.job_runners.write_and_hang", 1, 1, time_limit=10, workroot=tmp_path / "jobs")
    assert os.listdir(tmp_path / "jobs") == []


# ------------------------------------------------------------------ ids and per-client shares (issue 18)

def test_job_ids_keep_one_width_past_ten_thousand_jobs():
    import re

    from rasplay.server.training_jobs import JOB_ID_PATTERN

    async def scenario():
        jobs = JobManager("support.job_runners.allocate", 0, 2, time_limit=10)   # no job ever starts: queue and cancel
        ids = set()
        for _ in range(10_001):
            job = jobs.submit({"mib": 1}, "127.0.0.9")
            assert re.fullmatch(JOB_ID_PATTERN, job.id), job.id
            ids.add(job.id)
            jobs.cancel(job)
            assert job.status == "cancelled"
        one_more = jobs.submit({"mib": 1})
        assert len(one_more.id) == 22 and jobs.get(one_more.id) is one_more
        assert len(ids) == 10_001   # never the same id twice
        await jobs.close()
    run(scenario())


def test_one_client_gets_its_share_of_jobs_and_clients_take_turns():
    from rasplay.server.training_jobs import ClientFull

    async def scenario():
        jobs = JobManager("support.job_runners.allocate", 1, 3, time_limit=120, per_client=2)
        a1, a2 = jobs.submit({"mib": 1}, "A"), jobs.submit({"mib": 1}, "A")
        with pytest.raises(ClientFull):
            jobs.submit({"mib": 1}, "A")   # A holds its two places: the other two are left for others
        b1 = jobs.submit({"mib": 1}, "B")
        assert (a1.status, a2.status, b1.status) == ("running", "queued", "queued")
        jobs.cancel(a1)
        await until(b1, ("running",))   # B's job goes before A's second, though queued after it
        assert a2.status == "queued"
        for job in (a2, b1):
            jobs.cancel(job)
            await until(job)
        await jobs.close()
    run(scenario())


def test_one_client_never_holds_every_place():
    jobs = JobManager("support.job_runners.allocate", 1, 1, time_limit=10, per_client=5)
    assert jobs.per_client == 1   # two places in all: one client may take one
