"""A time-out is never a 200: each work kind that stops at the engine's own time limit raises WorkTimeout (the
worker then answers "to"), and the API turns every pool failure into its 4xx or 503 (server/work_kinds.py,
server/api/common.run_in_pool). No server: the kinds run in this process, the pool is a stand-in."""
from __future__ import annotations

import pytest

from support.waiting import run_async

from rasplay.engine.exercises import SHIPPED_DIR
from rasplay.server import work_kinds
from rasplay.server.api.common import run_in_pool
from rasplay.server.errors import ApiError
from rasplay.server.settings import Settings
from rasplay.server.process_pool import (EvaluationTimeout, MemoryLimit, NotEncodable, PoolBusy, ReplyTooLarge,
                                    WorkerFailed, WorkTimeout)

HEAVY = ("for k in range(10) { x = [[(i * j + k) ^ 3 % 7 - i / (j + 1) for j in range(300)] "
         "for i in range(300)]; }\nreverse = tokens;\n")
SHORT = {"eval_seconds": 0.05}


@pytest.mark.parametrize("kind,payload", [
    ("evaluate", {"source": HEAVY, "inputs": ["ab"], "limits": SHORT}),
    ("analyze", {"source": HEAVY, "output": None, "limits": SHORT}),
])
def test_a_kind_past_the_engines_time_limit_raises_work_timeout(kind, payload):
    with pytest.raises(WorkTimeout, match="took longer than 0.05 s"):
        work_kinds.KINDS[kind](payload)
    quick = {**payload, "source": "reverse = tokens;", "limits": {"eval_seconds": 30.0}}
    assert b"reverse" in work_kinds.KINDS[kind](quick)


def test_an_exercise_check_past_its_time_limit_raises_work_timeout():
    text = (SHIPPED_DIR / "reverse.exercise").read_text()
    payload = {"text": text, "id": "reverse", "source": HEAVY, "limits": {}, "seconds": 0.05}
    with pytest.raises(WorkTimeout):
        work_kinds.exercise_check(payload)
    right = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"
    assert work_kinds.exercise_check({**payload, "source": right, "seconds": 30.0})["passed"] is True


class Pool:
    """A stand-in for the worker pool whose every call fails with `error`."""

    queue_timeout = 7.0

    def __init__(self, error):
        self.error = error
        self.calls = []

    async def run(self, kind, payload, timeout=None, message=None, client=""):
        self.calls.append((kind, timeout, client))
        raise self.error


@pytest.mark.parametrize("error,status,kind,words", [
    (EvaluationTimeout(), 422, "timeout", "longer than 2 s (the time limit)"),
    (EvaluationTimeout("evaluation took longer than 1.8 s"), 422, "timeout", "evaluation took longer than 1.8 s"),
    (MemoryLimit(), 422, "limit", "more than"),
    (PoolBusy(), 503, "busy", "busy for 7 s"),
    (NotEncodable("integer exceeds 64-bit range"), 422, "validation", "64 bits"),
    (ReplyTooLarge(5 << 20), 422, "limit", "answers are limited"),
    (WorkerFailed("RecursionError: the work nests too deeply"), 422, "limit", "nests too deeply"),
    (WorkerFailed("KeyError: 'x'"), 422, "unsupported", "KeyError"),
])
def test_every_pool_failure_is_a_4xx_or_503_never_a_200(error, status, kind, words):
    pool = Pool(error)
    settings = Settings(eval_seconds=5.0)
    with pytest.raises(ApiError) as info:
        run_async(run_in_pool(pool, "exercise_check", {}, settings, timeout=2.0, client="10.0.0.1"))
    e = info.value
    assert (e.status, e.kind) == (status, kind) and words in e.message, (e.status, e.kind, e.message)
    if status == 503:
        assert e.headers == {"Retry-After": "5"}
    assert pool.calls == [("exercise_check", 2.0, "10.0.0.1")]


def test_a_time_out_without_its_own_limit_names_the_servers():
    with pytest.raises(ApiError) as info:
        run_async(run_in_pool(Pool(EvaluationTimeout()), "analyze", {}, Settings(eval_seconds=5.0)))
    assert info.value.status == 422 and "longer than 5 s" in info.value.message
