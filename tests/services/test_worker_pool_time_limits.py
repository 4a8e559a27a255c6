"""The worker pool's time limits per call (server/process_pool.py): a call pipelined behind another is timed from
its own start, not from the start of the call before it, and a call's own `timeout` overrides the pool's in
both directions. The pool runs the tests' own work kinds (tests/support/pool_kinds.py)."""
import asyncio

import pytest

from rasplay.server.process_pool import EvaluationTimeout, PoolBusy
from support.pools import with_pool   # the pool on the tests' own work kinds, in a loop of its own


async def until(condition):
    while not condition():
        await asyncio.sleep(0.01)


def test_a_pipelined_call_is_timed_from_its_own_start():
    async def scenario(pool):
        assert pool.share == 2   # three workers: one client may have two calls in them
        others = [asyncio.ensure_future(pool.run("sleep", {"seconds": 2}, client=c)) for c in ("B", "C")]
        await until(lambda: pool.in_workers("B") and pool.in_workers("C"))
        # the only worker left takes A's first call, and A's second waits in that worker's pipeline
        first = asyncio.ensure_future(pool.run("sleep", {"seconds": 1.0}, timeout=1.8, client="A"))
        second = asyncio.ensure_future(pool.run("sleep", {"seconds": 1.0}, timeout=1.8, client="A"))
        await until(lambda: pool.in_workers("A") == 2)
        assert sorted(len(w.calls) for w in pool._all) == [1, 1, 2]
        assert pool.stats()["running"] == 4 and pool.stats()["waiting"] == 0
        # each takes 1 s of its 1.8: both finish, though the second ends 2 s after the first began
        assert await first == b'{"slept":1.0}' and await second == b'{"slept":1.0}'
        assert pool.replaced["timeout"] == 0
        await asyncio.gather(*others)
    with_pool(scenario, 3, timeout=60, queue_timeout=60)


def test_a_calls_own_shorter_timeout_stops_it():
    async def scenario(pool):
        with pytest.raises(EvaluationTimeout):
            # the pool's limit is five minutes away: only the call's own half second can stop it so soon
            await asyncio.wait_for(pool.run("sleep", {"seconds": 300}, timeout=0.5), 120)
        await until(lambda: pool.alive() == 1)
        assert pool.replaced["timeout"] == 1
    with_pool(scenario, 1, timeout=300, queue_timeout=60)


def test_a_calls_own_longer_timeout_lets_it_finish():
    async def scenario(pool):
        assert await pool.run("sleep", {"seconds": 1.5}, timeout=30) == b'{"slept":1.5}'   # over the pool's 0.5 s
        assert pool.replaced["timeout"] == 0
        with pytest.raises(EvaluationTimeout):
            await pool.run("sleep", {"seconds": 30})   # without its own: the pool's
    with_pool(scenario, 1, timeout=0.5, queue_timeout=60)


def test_a_call_pipelined_behind_a_slow_one_is_busy_after_the_queue_wait():
    async def scenario(pool):
        others = [asyncio.ensure_future(pool.run("sleep", {"seconds": 300}, client=c)) for c in ("B", "C")]
        await until(lambda: pool.in_workers("B") and pool.in_workers("C"))
        slow = asyncio.ensure_future(pool.run("sleep", {"seconds": 300}, client="A"))
        await until(lambda: pool.in_workers("A") == 1)
        with pytest.raises(PoolBusy):   # sent to the slow call's worker, never started there
            await asyncio.wait_for(pool.run("sleep", {"seconds": 0}, client="A"), 120)
        assert not slow.done() and pool.replaced["timeout"] == 0
        for task in (slow, *others):
            task.cancel()
    with_pool(scenario, 3, timeout=600, queue_timeout=1.0)
