"""selector_width over an `or` of comparisons (the stable sort's selector): one head over joint
(token, index) values and MLPs linear in max_len, exact; and the head factorization behind it."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rasplay import engine
from rasplay.engine.compiler.heads import factor_table

ROOT = Path(__file__).resolve().parents[2]
SORT = (ROOT / "bench" / "tracr_programs" / "sort.rasp").read_text()
VOCAB = "abc"
# Tracr's make_sort measured with the tokens {1, 2, 3} (issue 15): max_len -> (params, non-zero)
TRACR_SORT = {10: (36_124, 723), 20: (126_834, 2_318)}


def summary(n, reuse_residual=False):
    """The plan's structure is pinned without residual reuse (engine/compiler/reuse.py)."""
    return engine.compile(SORT, vocab=VOCAB, max_len=n, reuse_residual=reuse_residual).summary()


@pytest.mark.parametrize("n", [10, 20])
def test_sort_width_is_one_head_and_its_mlps_are_linear_in_max_len(n):
    s = summary(n)
    # the extra MLP writes the joint (token, index) one-hot: one unit per pair, |V| * n
    # the width's MLP decodes 1/(w+1), w = 0..n-1: a base unit and a clamped ramp (2 units) per step
    assert s["layers"] == 3 and s["heads_per_layer"] == [0, 1, 1]
    assert s["mlp_widths"][0] == len(VOCAB) * n
    assert s["mlp_widths"][1] <= 2 * n
    assert sum(s["mlp_widths"]) <= (len(VOCAB) + 2) * n
    # residual: one, bos, tokens, indices, the joint block, 1/(w+1), target, sorted
    assert s["residual_width"] == 2 + len(VOCAB) + n + len(VOCAB) * n + 1 + n + len(VOCAB)
    params, nonzero = TRACR_SORT[n]
    assert s["params"] <= params and s["nonzero_params"] <= nonzero
    r = summary(n, reuse_residual=True)         # reuse: narrower, the same layers, still at or below Tracr
    assert r["residual_width"] < s["residual_width"] and r["layers"] == s["layers"]
    assert r["params"] <= params and r["nonzero_params"] <= nonzero


def test_sort_nonzero_weights_grow_like_n_log_n_not_n_squared():
    a, b = summary(10)["nonzero_params"], summary(20)["nonzero_params"]
    assert b < 2.5 * a          # n^2 would give 4x; the width head's Fenwick factors give ~2.2x


@pytest.mark.parametrize("vocab, n, heads", [("abc", 5, [2, 1]), ("ab", 10, [0, 1, 1]), ("abc", 10, [0, 1, 1])])
def test_sort_agrees_with_the_evaluator_on_every_input(vocab, n, heads):
    """Both constructions: split heads (abc at 5) and one head over joint values (ab, abc at 10)."""
    model = engine.compile(SORT, vocab=vocab, max_len=n)
    assert model.summary()["heads_per_layer"] == heads
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"] == sum(len(vocab) ** k for k in range(1, n + 1))


def test_short_inputs_keep_the_split_heads_when_cheaper():
    """At max_len 5 adding two widths of 0..4 (27 units) is cheaper than 15 joint values: 2 layers."""
    s = summary(5)
    assert s["layers"] == 2 and s["heads_per_layer"] == [2, 1]


@pytest.mark.parametrize("token_op, index_op", [("<", "<"), ("<", ">"), (">", "<"), ("!=", ">"), (">", ">=")])
def test_other_lexicographic_widths_are_one_exact_head(token_op, index_op):
    src = (f"w = selector_width(select(tokens, tokens, {token_op}) or "
           f"(select(tokens, tokens, ==) and select(indices, indices, {index_op})));")
    model = engine.compile(src, vocab="ab", max_len=9)
    assert model.summary()["heads_per_layer"] == [0, 1]
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"] > 1000


tables = st.integers(1, 9).flatmap(lambda q: st.integers(1, 9).flatmap(
    lambda k: st.lists(st.booleans(), min_size=q * k, max_size=q * k).map(lambda v: np.array(v).reshape(q, k))))


@settings(max_examples=200, deadline=None)
@given(tables)
def test_factor_table_reproduces_any_table_exactly(table):
    qf, kf = factor_table(table)
    assert np.array_equal(qf.T @ kf, table.astype(float))
    assert set(np.unique(np.concatenate([qf.ravel(), kf.ravel(), [0.0]]))) <= {0.0, 1.0}
    distinct = min(len({tuple(c) for c in table.T if c.any()}), len({tuple(r) for r in table if r.any()}))
    assert len(qf) == distinct


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=2, max_size=40), st.lists(st.integers(0, 30), min_size=2, max_size=40))
def test_threshold_tables_get_logarithmic_factors(query_ranks, key_ranks):
    table = np.array(key_ranks)[None, :] < np.array(query_ranks)[:, None]
    qf, kf = factor_table(table)
    assert np.array_equal(qf.T @ kf, table.astype(float))
    # the Fenwick layout puts each value in at most log2(classes) + 1 coordinates; the factorization
    # chosen has at most its non-zeros (the plain one can have fewer: one per query, say)
    classes = len(set(key_ranks))
    bound = int(np.floor(np.log2(classes))) + 1
    assert np.count_nonzero(qf) + np.count_nonzero(kf) <= (len(query_ranks) + len(key_ranks)) * bound
    assert len(qf) <= classes


SIDES = {"str": ["tokens"], "int": ["indices", "indices % 3", "indices - 2"]}
OPS = {"str": ["==", "!=", "<", ">"], "int": ["==", "!=", "<", ">", "<=", ">="]}


@st.composite
def composite_widths(draw):
    """selector_width of an and/or/not of 2-4 comparisons on token or index values."""
    def atom():
        t = draw(st.sampled_from(["str", "int"]))
        keys, queries = draw(st.sampled_from(SIDES[t])), draw(st.sampled_from(SIDES[t]))
        return f"select({keys}, {queries}, {draw(st.sampled_from(OPS[t]))})"

    sel = atom()
    for _ in range(draw(st.integers(1, 3))):
        other = atom()
        if draw(st.integers(0, 4)) == 0:
            other = f"not ({other})"
        sel = f"({sel}) {draw(st.sampled_from(['and', 'or', 'or']))} {other}"
    return f"w = selector_width({sel});"


@settings(max_examples=40, deadline=None)
@given(composite_widths())
def test_composite_selector_widths_agree_with_the_evaluator(source):
    """At max_len 7 over {a, b}, joint values (at most 14) are cheaper than adding split parts (64+
    combinations), so these mostly compile to one head over joint values: exact on every input."""
    model = engine.compile(source, vocab="ab", max_len=7)
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"] == 254, (source, r["first_mismatch"])


def test_composite_width_generator_reaches_the_joint_construction():
    src = "w = selector_width((select(tokens, tokens, <) or select(indices, indices, !=)) and not (select(tokens, tokens, ==)));"
    s = engine.compile(src, vocab="ab", max_len=7).summary()
    assert s["heads_per_layer"] == [0, 1]
    assert any("joint values" in n for n in s["notes"])
