"""The evaluation pool itself: pipelining, the hard time limit, requests queued behind a hung one."""
import asyncio
import concurrent.futures
import time

import orjson
import pytest

from rasplay.server.workers import EvaluationPool, EvaluationTimeout


def run(coro):
    """asyncio.run in a thread of its own (Playwright's sync API may hold this thread's event loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as executor:
        return executor.submit(asyncio.run, coro).result()


def test_requests_queued_behind_a_hung_one_move_to_a_new_worker():
    async def scenario():
        pool = EvaluationPool(1, timeout=1.0, queue_timeout=10)
        await pool.start()
        try:
            hung = asyncio.create_task(pool.run("sleep", {"seconds": 30}))
            await asyncio.sleep(0.1)
            start = time.monotonic()
            # one worker: this request waits in the hung worker's pipeline, then moves to its replacement
            queued = asyncio.create_task(pool.run("evaluate", {"source": "x = indices;", "inputs": ["ab"]}))
            with pytest.raises(EvaluationTimeout):
                await hung
            doc = orjson.loads(await queued)
            assert doc["results"]["x"]["values"] == [[0, 1]]
            assert time.monotonic() - start < 10
            assert pool.alive() == 1
        finally:
            await pool.close()
    run(scenario())


def test_pipelined_replies_reach_the_right_requests():
    async def scenario():
        pool = EvaluationPool(2, timeout=5.0, queue_timeout=10)
        await pool.start()
        try:
            calls = [pool.run("evaluate", {"source": f"x = indices + {i};", "inputs": ["abc"]}) for i in range(40)]
            docs = [orjson.loads(b) for b in await asyncio.gather(*calls)]
            assert [d["results"]["x"]["values"][0][0] for d in docs] == list(range(40))
            # a request whose client went away is dropped without disturbing the others
            gone = asyncio.create_task(pool.run("sleep", {"seconds": 0.3}))
            await asyncio.sleep(0.05)
            gone.cancel()
            after = await pool.run("evaluate", {"source": "y = indices * 2;", "inputs": ["ab"]})
            assert orjson.loads(after)["results"]["y"]["values"] == [[0, 2]]
        finally:
            await pool.close()
    run(scenario())
