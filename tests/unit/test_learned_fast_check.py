"""The faster paths under the learned-program check give the same results as their first implementations
(kept in support.closest_reference): distinct values without a sort (engine/distinct.py) against np.unique,
select_closest by small scores against the int64 version, and a whole check report (agreement by length,
failing inputs, errors, selectors) with the references patched in."""
import numpy as np
import pytest

from rasplay.engine import closest as closest_module
from rasplay.engine import elementwise, graph_runner
from rasplay.engine.closest import closest
from rasplay.engine.distinct import distinct
from rasplay.engine.learned.check import CheckOptions, check_learned
from support.closest_reference import closest_reference, distinct_reference

RNG = np.random.default_rng(34)

ARRAYS = [
    np.array([7]), np.array([-3, 7, -3, 2 ** 40]), RNG.integers(-5, 5, 500), RNG.integers(0, 2 ** 62, 50),
    RNG.integers(0, 40, 300).astype(np.uint8), np.array([2 ** 63 + 5, 3], dtype=np.uint64),
    np.array([True, False, True]), np.array([False, False]),
    np.array(["a", "", "ab", "a\u00e9", "<s>", "b", "aa", "", "\U0001d11e"]), np.array(["x"] * 5),
    RNG.choice(["0", "1", "<pad>", "<s>", "10", "01", "</s>"], 2000), np.array([""] * 3),
    np.array([1.5, 0.0, 1.5, -2.0]), np.array([], dtype=np.int64), np.array([], dtype=str),
]


@pytest.mark.parametrize("values", ARRAYS, ids=lambda a: f"{a.dtype}-{a.size}")
def test_distinct_is_np_unique_exactly(values):
    want, got = distinct_reference(values), distinct(values)
    assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 9])
def test_select_closest_is_the_reference_on_every_kind_of_selector(n):
    for density in (0.0, 0.15, 0.5, 0.85, 1.0):
        sel = RNG.random((40, n, n)) < density
        assert np.array_equal(closest(sel), closest_reference(sel))


# A learned program in the translated programs' shape: a BOS, table lookups over strings and ints (one
# with a key missing: an error for some inputs), closest-match heads, a sum, a string comparison by rank.
LEARNED = """# learned: transformer-programs
# bos: <s>
# output: guess
positions = indices;
ones = 1;
near_target = {"a": "b", "b": "c", "c": "a", "<s>": "<none>"}[tokens];
near = aggregate(select_closest(select(tokens, near_target, ==)), tokens);
left = aggregate(select_closest(select(positions, positions, <)), positions);
same = aggregate_sum(select(tokens, tokens, ==), ones);
before = aggregate_sum(select(tokens, near, <), ones);
label = {1: "1", 2: "2", 3: "3", 4: "4"}[same];
row = {"a": 0, "b": 1, "c": 2, "<s>": 3}[near];
table = ["0", "1", "2", "3", "4", "5", "6", "7", "8"];
guess = table[row + 1] if near == "a" and left == 1 else (label if before < 3 else table[before]);
"""
TASK = "hist = selector_width(select(tokens, tokens, ==));\n"


def test_a_check_gives_the_same_report_as_with_the_first_implementations(monkeypatch):
    options = CheckOptions(max_length=5, beyond=1, exhaustive=300, samples=200, seed=3, show=20)
    fast = check_learned(LEARNED, TASK, "abc", options)
    monkeypatch.setattr(closest_module, "closest", closest_reference)
    monkeypatch.setattr(elementwise, "distinct", distinct_reference)
    monkeypatch.setattr(graph_runner, "distinct", distinct_reference)
    reference = check_learned(LEARNED, TASK, "abc", options)
    fast.pop("seconds"), reference.pop("seconds")
    assert fast == reference
    # the program is wrong on some inputs and fails on others, so the comparison covers both
    assert 0 < fast["total"]["agree"] < fast["total"]["inputs"]
    assert fast["total"]["learned_failed"] > 0
    assert [row["mode"] for row in fast["lengths"]] == ["exhaustive"] * 5 + ["sampled"]
