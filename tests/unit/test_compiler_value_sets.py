"""Pass 3, infer value sets (engine/compiler/value_sets.py), alone: each s-op's possible values over the
vocabulary and the lengths 1..max_len, and the facts about selectors the later passes rely on."""
from __future__ import annotations

import numpy as np

from support.compiler_stages import node, value_sets

from rasplay.engine.compiler.fused import lookup, near_duplicates, unique_values
from rasplay.engine.compiler.value_sets import integral, mean_values

N = 4


def values_of(source, name, **kw):
    program, graph, vs = value_sets(source, name, **kw)
    return vs.values[node(program, name).id]


def test_inputs_and_elementwise_ops():
    assert values_of("t = tokens;", "t", vocab="cab").tolist() == ["a", "b", "c"]
    assert values_of("i = indices;", "i", max_len=N).tolist() == [0, 1, 2, 3]
    assert values_of("i = indices * 2 + 1;", "i", max_len=N).tolist() == [1, 3, 5, 7]
    assert values_of("b = tokens == \"a\";", "b").tolist() == [False, True]
    assert values_of("m = (indices + 1) % 3;", "m", max_len=N).tolist() == [0, 1, 2]


def test_length_and_selector_width_range_over_the_lengths():
    assert values_of("n = length;", "n", max_len=N).tolist() == [1, 2, 3, 4]
    program, graph, vs = value_sets("w = selector_width(select(tokens, tokens, ==));", "w", max_len=N)
    w = node(program, "w")
    assert vs.values[w.id].tolist() == [1, 2, 3, 4]          # a token always selects itself: never 0
    assert vs.reflexive[w.selector.id] is True
    assert values_of("w = selector_width(select(indices, indices, <));", "w", max_len=N).tolist() == [0, 1, 2, 3]


def test_length_is_recognised_as_the_input_length():
    program, graph, vs = value_sets("n = length;", "n", max_len=N)
    assert node(program, "n").id in vs.lengths


def test_an_aggregate_that_may_average_holds_the_means():
    source = "m = aggregate(select(indices, indices, <=), indices);"
    program, graph, vs = value_sets(source, "m", max_len=3)
    m = node(program, "m")
    assert m.id in vs.averages
    # means of the prefixes {0}, {0,1}, {0,1,2} at every length, and nothing else
    assert np.allclose(vs.values[m.id], [0.0, 0.5, 1.0])


def test_an_aggregate_of_one_selected_value_copies_the_values():
    source = "r = aggregate(select(indices, length - indices - 1, ==), tokens);"
    program, graph, vs = value_sets(source, "r", vocab="xy", max_len=N)
    r = node(program, "r")
    assert r.id not in vs.averages and vs.at_most_one[r.selector.id] is True
    assert vs.values[r.id].tolist() == ["x", "y"]              # every query finds its key: no default
    assert r.id in vs.never_empty


def test_the_default_joins_the_values_when_a_query_may_select_nothing():
    source = "p = aggregate(select(indices, indices - 1, ==), tokens, \"_\");"
    program, graph, vs = value_sets(source, "p", vocab="xy", max_len=N)
    assert vs.values[node(program, "p").id].tolist() == ["_", "x", "y"]


def test_a_constant_selector_is_known():
    program, graph, vs = value_sets("w = selector_width(select(1, 1, ==));", "w", max_len=N)
    assert vs.constant[node(program, "w").selector.id] is True


# ---------------------------------------------------------------- value-set helpers (value_sets.py, fused.py)

def test_means_of_integers_are_the_evaluators_floats():
    """Every mean of 1..3 values from {0, 1}: k/w correctly rounded, as the evaluator's sum / count."""
    got = mean_values(np.array([0, 1]), 3, 1000)
    want = sorted({k / w for w in (1, 2, 3) for k in range(w + 1)})
    assert got.tolist() == want


def test_exact_unique_keeps_last_bit_differences_and_near_duplicates_finds_them():
    v = np.array([3.0, 7 * (3 / 9) + 3 * (2 / 9), 1.0])
    assert unique_values(v).size == 2
    exact = unique_values(v, exact=True)
    assert exact.size == 3
    assert near_duplicates(exact) == [(2.9999999999999996, 3.0)]
    assert lookup(exact, np.array([2.9999999999999996, 3.0])).tolist() == [1, 2]


def test_integral():
    assert integral(np.array([1, 2])) and integral(np.array([1.0, -4.0])) and integral(np.array([True]))
    assert not integral(np.array([0.5])) and not integral(np.array([np.inf]))
