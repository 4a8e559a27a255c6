"""Property tests (hypothesis): invariants that must hold for every input."""
import operator

from hypothesis import given, settings, strategies as st

from rasplay import engine
from rasplay.engine.examples import find_example

words = st.text(alphabet="abcde", min_size=1, max_size=12)
int_lists = st.lists(st.integers(-20, 20), min_size=1, max_size=10)


@given(words)
def test_stable_sort_equals_pythons_sorted(word):
    doc = engine.evaluate(find_example("sort_stable").source, [word])
    assert doc["results"]["sorted"]["values"][0] == sorted(word)


@given(int_lists, int_lists)
def test_library_sort_by_key_is_stable(vals, keys):
    n = min(len(vals), len(keys))
    vals, keys = vals[:n], keys[:n]
    src = f"tokens = tokens_int; key = {keys}[indices]; result = sort(tokens, key);"
    doc = engine.evaluate(src, [vals])
    expected = [v for _, v in sorted(zip(keys, vals), key=lambda kv: kv[0])]
    assert doc["results"]["result"]["values"][0] == expected


@given(words, st.sampled_from(["==", "!=", "<", ">", "<=", ">="]), st.sampled_from(["==", "<", ">="]))
def test_selector_width_equals_row_sums(word, op1, op2):
    src = f"s = select(tokens, tokens, {op1}) and not select(indices, indices, {op2}); w = selector_width(s);"
    doc = engine.evaluate(src, [word])
    sel, width = doc["results"]["s"]["values"][0], doc["results"]["w"]["values"][0]
    assert width == [sum(row) for row in sel]


@given(words)
def test_reverse_twice_is_identity(word):
    src = find_example("reverse").source + "\nback = aggregate(flip, reverse);"
    doc = engine.evaluate(src, [word])
    assert doc["results"]["back"]["values"][0] == list(word)
    assert doc["results"]["reverse"]["values"][0] == list(reversed(word))


@given(st.lists(words, min_size=1, max_size=6))
def test_batching_does_not_change_values(batch):
    src = find_example("most_frequent").source
    together = engine.evaluate(src, batch)["results"]
    for i, word in enumerate(batch):
        alone = engine.evaluate(src, [word])["results"]
        for name in alone:
            assert together[name]["values"][i] == alone[name]["values"][0]
            assert (together[name]["errors"][i] is None) == (alone[name]["errors"][0] is None)


PY_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "%": operator.mod, "/": operator.truediv,
          "==": operator.eq, "<": operator.lt, ">=": operator.ge, "!=": operator.ne}


@given(int_lists, st.sampled_from(sorted(PY_OPS)), st.integers(-5, 5))
@settings(max_examples=200)
def test_elementwise_ops_follow_python(vals, op, const):
    src = f"tokens = tokens_int; x = tokens {op} ({const}); y = ({const}) {op} tokens;"
    doc = engine.evaluate(src, [vals])
    for name, fn in (("x", lambda v: PY_OPS[op](v, const)), ("y", lambda v: PY_OPS[op](const, v))):
        res = doc["results"][name]
        try:
            expected = [fn(v) for v in vals]
        except ZeroDivisionError:
            assert res["values"][0] is None and "division by zero" in res["errors"][0]
            continue
        assert res["values"][0] == expected


@given(st.lists(st.integers(0, 9), min_size=1, max_size=10), st.integers(0, 9))
def test_mean_aggregate_equals_python_mean(vals, threshold):
    src = f"tokens = tokens_int; m = aggregate(select(tokens, {threshold}, <=), tokens, -1);"
    got = engine.evaluate(src, [vals])["results"]["m"]["values"][0]
    chosen = [v for v in vals if v <= threshold]
    expected = sum(chosen) / len(chosen) if chosen else -1
    assert all(abs(g - expected) < 1e-9 for g in got)


@given(st.lists(st.floats(-4, 4).map(lambda x: round(x * 4) / 4), min_size=1, max_size=8))
def test_round_is_bankers_rounding(vals):
    doc = engine.evaluate("r = round(tokens);", [vals])
    assert doc["results"]["r"]["values"][0] == [round(v) for v in vals]
