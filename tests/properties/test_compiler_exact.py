"""Exact by construction: float values the evaluator keeps apart stay apart (issue 15, item 1),
generated arithmetic on means agrees exhaustively, and causal models (item 3)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rasplay import engine
from rasplay.engine import RaspError

FLOAT_EQUALITY = """
fa = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
fb = aggregate(select(indices, indices, <=), indicator(tokens == "b"));
score = fa*7 + fb*3;
same = selector_width(select(score, score, ==));
"""


def exhaustive_agreement(model, limit=200_000):
    r = model.check(exhaustive_limit=limit)
    assert r["exhaustive"], r
    assert r["inputs"] > 0
    assert r["agree"] == r["inputs"], r["first_mismatch"]
    return r


def test_float_equality_of_means_agrees_on_every_input_and_warns():
    """7*(3/9) + 3*(2/9) is 2.9999999999999996 for the evaluator, 7*(3/7) is 3.0: two values. The model
    keeps them apart (it used to merge them and disagree on 'aacddbeab'-like inputs)."""
    model = engine.compile(FLOAT_EQUALITY, vocab="abc", max_len=9)
    r = exhaustive_agreement(model)
    assert r["inputs"] == sum(3 ** n for n in range(1, 10))
    warnings = model.summary()["warnings"]
    assert warnings and all(w["line"] == 5 for w in warnings)     # the select(score, score, ==) line
    assert any("2.9999999999999996" in w["message"] or "1.666666666666666" in w["message"] for w in warnings)


def test_the_issues_input_with_five_tokens():
    model = engine.compile(FLOAT_EQUALITY, vocab="abcde", max_len=9)
    doc = model.run(["abcddaeab", "aacddbeab"], trace=False)
    assert doc["agree"] == [True, True]
    assert doc["outputs"] == doc["expected"]


def test_no_warning_where_integers_decide():
    src = """
fa = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
double = fa * 2;
same = selector_width(select(double, double, ==));
"""
    model = engine.compile(src, vocab="ab", max_len=6)
    exhaustive_agreement(model)
    assert model.summary()["warnings"] == []


def test_check_says_when_it_sampled():
    model = engine.compile(FLOAT_EQUALITY, vocab="abc", max_len=9)
    r = model.check(exhaustive_limit=1000, per_length=50)
    assert not r["exhaustive"]
    assert r["population"] == sum(3 ** n for n in range(1, 10))
    assert r["inputs"] < r["population"]


def test_affine_value_of_a_mean_issue_11():
    """An aggregate of `a + 1` where `a` is a numerical mean: the head reads a*1 + 1 (the mutant that
    subtracted the offset made this 0% agreement)."""
    src = """a = aggregate(select(indices, indices, <=), indices);
b = aggregate(select(indices, 0, ==), a + 1);"""
    exhaustive_agreement(engine.compile(src, vocab="ab", max_len=6))


def test_rounded_mean_of_means_compiles_at_max_len_10():
    """round(mean_of_mean * 100) has at most 101 values; the means it is computed from are listed
    (under the max_means limit) instead of refused."""
    src = """prefix = select(indices, indices, <=);
frac = aggregate(prefix, indicator(tokens == "a"));
mean_of_mean = aggregate(prefix, frac);
pct = round(mean_of_mean * 100);"""
    exhaustive_agreement(engine.compile(src, vocab="ab", max_len=10))


def test_a_value_set_too_large_names_the_intermediate_that_is_too_large():
    src = """prefix = select(indices, indices, <=);
frac = aggregate(prefix, indicator(tokens == "a"));
mean_of_mean = aggregate(prefix, frac);
pct = round(mean_of_mean * 100);"""
    with pytest.raises(RaspError) as e:
        engine.compile(src, vocab="ab", max_len=10, limits=engine.CompileLimits(max_means=1000))
    assert "'mean_of_mean' (line 3)" in e.value.message and "more than 1000" in e.value.message
    assert e.value.span.line == 4


def test_a_prefix_mean_of_indices_lists_only_the_means_it_takes():
    """aggregate(select(indices, indices, <=), indices) is q/2 at query q: 10 values at max_len 10, not
    every mean of up to 10 indices (290), so a selector reading it stays small (it cost 1.46 M parameters)."""
    src = """m = aggregate(select(indices, indices, <=), indices);
w = selector_width(select(m, m, ==));"""
    model = engine.compile(src, vocab="ab", max_len=10)
    layout = {b["name"]: b for b in model.summary()["layout"]}
    assert layout["m (categorical)"]["values"] == [str(k / 2) for k in range(10)]
    assert model.summary()["params"] < 10_000
    exhaustive_agreement(model)


# ---------------------------------------------------------------- generated arithmetic on means

SELECTORS = ["select(indices, indices, <=)", "select(indices, indices, >=)", "select(1, 1, ==)",
             "select(tokens, tokens, ==)"]
COEFFS = ["1", "2", "3", "7", "0.5", "0.1", "-1"]


@st.composite
def mean_programs(draw):
    s1, s2 = draw(st.sampled_from(SELECTORS)), draw(st.sampled_from(SELECTORS))
    t1, t2 = draw(st.sampled_from("ab")), draw(st.sampled_from("abc"))
    c1, c2 = draw(st.sampled_from(COEFFS)), draw(st.sampled_from(COEFFS))
    op = draw(st.sampled_from(["+", "-"]))
    const = draw(st.sampled_from(["0.6", "0.3", "0.7", "0.9", "1", "1.5"]))
    combine = draw(st.sampled_from([
        "res = selector_width(select(score, score, ==));",
        "res = selector_width(select(score, score, <));",
        f"res = score == {const};",
        f"res = score < {const};",
        f"res = selector_width(select(score, {const}, ==));",
        "res = round(score * 10);",
        "res = aggregate(select(score, score, ==), indicator(tokens == \"a\"));",
    ]))
    return (f"fa = aggregate({s1}, indicator(tokens == \"{t1}\"));\n"
            f"fb = aggregate({s2}, indicator(tokens == \"{t2}\"));\n"
            f"score = fa*{c1} {op} fb*{c2};\n{combine}\n")


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(mean_programs())
@example('fa = aggregate(select(indices, indices, <=), indicator(tokens == "a"));\n'
         'fb = aggregate(select(indices, indices, <=), indicator(tokens == "b"));\n'
         'score = fa*1 + fb*1;\nres = selector_width(select(score, 0.6, ==));\n')   # 1/5 + 2/5 != 0.6
def test_generated_arithmetic_on_means_agrees_exhaustively(src):
    model = engine.compile(src, vocab="abc", max_len=6)
    exhaustive_agreement(model)


# ---------------------------------------------------------------- causal mode

CAUSAL = """
prefix = select(indices, indices, <=);
frac_a = aggregate(prefix, indicator(tokens == "a"));
prev = aggregate(select(indices, indices - 1, ==), tokens, "x");
n_same = selector_width(select(tokens, tokens, ==) and select(indices, indices, <));
res = frac_a + n_same + (prev == "a");
"""


def test_backward_program_compiles_causal_and_agrees_on_every_prefix():
    model = engine.compile(CAUSAL, vocab="abc", max_len=6, causal=True)
    assert model.config["causal"] is True and model.summary()["causal"] is True
    r = exhaustive_agreement(model)
    assert r["causal"]


def test_causal_output_at_a_position_ignores_later_tokens():
    model = engine.compile(CAUSAL, vocab="abc", max_len=6, causal=True)
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 3, size=(200, 6))
    out = model.forward_outputs(idx)
    for p in range(1, 6):
        changed = idx.copy()
        changed[:, p:] = rng.integers(0, 3, size=(200, 6 - p))
        assert np.allclose(model.forward_outputs(changed)[:, :p], out[:, :p])


def test_causal_prefix_semantics_differ_from_the_full_input():
    """A program whose value at a position depends on later tokens would differ on prefixes; the
    compiler refuses it, naming the selector and its line."""
    src = """frac = aggregate(select(indices, indices, <=), indicator(tokens == "a"));
after = aggregate(select(indices, indices, >), indicator(tokens == "a"));
res = frac + after;"""
    with pytest.raises(RaspError) as e:
        engine.compile(src, vocab="ab", max_len=4, causal=True)
    assert "select(indices, indices, >)" in e.value.message and "causal" in e.value.message
    assert e.value.span.line == 2
    exhaustive_agreement(engine.compile(src, vocab="ab", max_len=4))      # fine without causal


def test_length_is_not_causal():
    src = "n = selector_width(select(1, 1, ==));\nr = aggregate(select(indices, n - indices - 1, ==), tokens);"
    with pytest.raises(RaspError, match="later position"):
        engine.compile(src, vocab="ab", max_len=4, causal=True)


def test_a_selector_over_values_is_refused_unless_anded_with_a_backward_one():
    bad = "w = selector_width(select(tokens, tokens, ==));"
    with pytest.raises(RaspError, match="may select a later position"):
        engine.compile(bad, vocab="ab", max_len=4, causal=True)
    good = "w = selector_width(select(tokens, tokens, ==) and not select(indices, indices, >));"
    exhaustive_agreement(engine.compile(good, vocab="ab", max_len=5, causal=True))


def test_causal_export_round_trips(tmp_path):
    model = engine.compile(CAUSAL, vocab="abc", max_len=5, causal=True)
    path = tmp_path / "m.npz"
    model.export_npz(path)
    loaded = engine.load_model(path)
    assert loaded.config["causal"] is True
    ids = np.array([[0, 1, 2, 1, 3, 1]])
    assert np.allclose(loaded.forward(ids).out, model.transformer.forward(ids).out)
