"""Waiting for events, never for a fixed time: a condition polled to a generous limit, a coroutine run in a
thread of its own, a training job's end."""
import asyncio
import time


def run_async(coro):
    """Run a coroutine to its end in a thread of its own, as asyncio.run would: a browser test earlier in the
    same process (Playwright's sync API) may hold this thread's event loop, where asyncio.run refuses."""
    import asyncio
    import threading

    result, errors = [], []

    def target():
        try:
            result.append(asyncio.run(coro))
        except BaseException as e:  # noqa: BLE001 (raised again below, in the test's thread)
            errors.append(e)

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return result[0]


def wait_for(check, timeout=120.0, what="the condition", every=0.05):
    """Poll `check()` until it returns something true, and return that; fail after `timeout` seconds (a
    generous limit: a busy machine is slow, not wrong). Tests wait for the event itself, never a fixed time."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(every)


async def job_ended(job, timeout=60):
    deadline = time.monotonic() + timeout
    while job.status not in ("done", "failed", "cancelled", "timeout") and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return job
