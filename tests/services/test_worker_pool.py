"""The generic worker pool: pipelining, the hard time limit, requests queued behind a hung one, the
memory limit, caches bounded by bytes, the queue wait. The pool runs the tests' own work kinds
(tests/support/pool_kinds.py)."""
import asyncio

import orjson
import pytest

from support.pools import with_pool
from support.waiting import run_async

from rasplay.server.process_pool import EvaluationTimeout, MemoryLimit, PoolBusy

run = run_async   # asyncio.run in a thread of its own (Playwright may hold this thread's loop)


def test_requests_queued_behind_a_hung_one_move_to_a_new_worker():
    async def scenario(pool):
        hung = asyncio.create_task(pool.run("sleep", {"seconds": 30}))
        await until_running(pool, "")
        # one worker: this request waits in the hung worker's pipeline, then moves to its replacement
        queued = asyncio.create_task(pool.run("evaluate", {"source": "x = indices;", "inputs": ["ab"]}))
        with pytest.raises(EvaluationTimeout):
            await hung
        doc = orjson.loads(await queued)
        assert doc["results"]["x"]["values"] == [[0, 1]]
        assert pool.alive() == 1 and pool.replaced["timeout"] == 1
    with_pool(scenario, 1, timeout=3.0, queue_timeout=20)


def test_pipelined_replies_reach_the_right_requests():
    async def scenario(pool):
        calls = [pool.run("evaluate", {"source": f"x = indices + {i};", "inputs": ["abc"]}) for i in range(40)]
        docs = [orjson.loads(b) for b in await asyncio.gather(*calls)]
        assert [d["results"]["x"]["values"][0][0] for d in docs] == list(range(40))
        # a request whose client went away is dropped without disturbing the others
        gone = asyncio.create_task(pool.run("sleep", {"seconds": 0.3}))
        await until_running(pool, "")
        gone.cancel()
        after = await pool.run("evaluate", {"source": "y = indices * 2;", "inputs": ["ab"]})
        assert orjson.loads(after)["results"]["y"]["values"] == [[0, 2]]
    with_pool(scenario, 2, timeout=5.0, queue_timeout=10)


def test_a_request_over_the_memory_limit_fails_and_its_worker_is_replaced():
    async def scenario(pool):
        with pytest.raises(MemoryLimit):
            await pool.run("allocate", {"mib": 400})
        assert orjson.loads(await pool.run("allocate", {"mib": 50})) == {"allocated": 50}   # under it: fine
        await until(lambda: pool.alive() == 1)
        assert pool.replaced["memory"] == 1
    with_pool(scenario, 1, timeout=10, queue_timeout=10, memory_bytes=200 << 20)


def test_memory_kept_between_requests_is_bounded_by_bytes():
    async def scenario(pool):
        for _ in range(4):   # each request keeps 60 MiB after it has answered, as a cache would
            assert orjson.loads(await pool.run("allocate", {"mib": 60, "keep": True})) == {"allocated": 60}
        await pool.run("sleep", {"seconds": 0})   # the worker checks its memory after each reply: sync with it
        stats = pool.stats()
        idle = pool._all[0].idle_resident
        assert stats["resident_bytes"][0] - idle <= 100 << 20   # the worker let its cache go past 100 MiB
        assert pool.replaced["retired"] == 0                     # by dropping its cache, not by dying
    with_pool(scenario, 1, timeout=10, queue_timeout=10, memory_bytes=1 << 30, keep_bytes=100 << 20)


def test_a_request_pipelined_behind_a_slow_one_gets_busy_after_the_queue_wait():
    async def scenario(pool):
        slow = asyncio.create_task(pool.run("sleep", {"seconds": 300}))
        await until_running(pool, "")
        with pytest.raises(PoolBusy):   # (a generous bound, so that a mistake fails instead of hanging)
            await asyncio.wait_for(pool.run("sleep", {"seconds": 0}), 120)
        assert not slow.done()   # answered at the queue wait, not when the slow request ended
        slow.cancel()
    with_pool(scenario, 1, timeout=600, queue_timeout=1.0)


# ------------------------------------------------------------------ fairness between clients (issue 18)

def start_calls(pool, order, calls):
    """Start `calls` ((name, client, seconds), in this order); each name goes into `order` as it finishes."""
    tasks = []
    for name, client, seconds in calls:
        task = asyncio.ensure_future(pool.run("sleep", {"seconds": seconds}, client=client))
        task.add_done_callback(lambda t, name=name: order.append(name))
        tasks.append(task)
    return tasks


async def until(condition):
    while not condition():
        await asyncio.sleep(0.01)


async def until_running(pool, client):
    await until(lambda: pool.in_workers(client) > 0)


async def until_waiting(pool, n):
    while pool.stats()["waiting"] < n:
        await asyncio.sleep(0.01)


def test_clients_take_turns_and_each_waits_behind_its_own_requests():
    async def scenario(pool):
        order = []
        tasks = start_calls(pool, order, [("a1", "A", 0.3)])
        await until_running(pool, "A")   # a1 holds the one worker
        tasks += start_calls(pool, order, [("a2", "A", 0.02), ("a3", "A", 0.02), ("a4", "A", 0.02),
                                           ("b1", "B", 0.02), ("b2", "B", 0.02), ("c1", "C", 0.02)])
        await until_waiting(pool, 6)
        assert pool.stats()["clients_waiting"] == 3
        await asyncio.gather(*tasks)
        return order
    # one worker: B and C (new to the pool) go before A's second request, then the clients alternate
    order = with_pool(scenario, 1, timeout=10, queue_timeout=30)
    assert order == ["a1", "b1", "c1", "a2", "b2", "a3", "a4"], order


def test_one_client_leaves_a_worker_for_the_others():
    async def scenario(pool):
        assert pool.share == 1   # two workers: one client may hold one of them
        order = []
        flood = start_calls(pool, order, [(f"a{i}", "A", 0.4) for i in range(4)])
        await until_running(pool, "A")
        await until_waiting(pool, 3)
        assert pool.in_workers("A") == 1   # A's others wait for A's turn, not in the free worker
        victim = start_calls(pool, order, [("b", "B", 0)])
        await asyncio.gather(*flood, *victim)
        return order
    order = with_pool(scenario, 2, timeout=10, queue_timeout=30)
    assert order[0] == "b", order   # served by the free worker before the flood's first request ended
