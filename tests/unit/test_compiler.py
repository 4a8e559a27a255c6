"""The compiler: exhaustive agreement with the evaluator, layer counts, widths, errors, determinism."""
import json
from pathlib import Path

import numpy as np
import pytest

from rasplay import engine
from rasplay.engine import CompileLimits, RaspError
from rasplay.engine.examples import find_example, load_examples

ROOT = Path(__file__).resolve().parents[2]
TRACR = ROOT / "bench" / "tracr_programs"
# Tracr's residual widths at max_len 5 / 10 with the same 3-token vocabulary as ours (issue 15); sort: Tracr's
# make_sort needs numerical keys, its figures are for 3 numbers (issue 5)
TRACR_WIDTH = {"reverse": (41, 71), "sort": (50, 85), "sort_freq": (64, 164), "histogram": (18, 28)}


def example_vocab(ex) -> list:
    tokens = json.loads(ex.input) if ex.input_format == "json" else list(ex.input)
    return list(dict.fromkeys(tokens))[:4]


def tracr_program(name: str) -> tuple[str, str]:
    text = (TRACR / f"{name}.rasp").read_text()
    vocab = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# vocab:"))
    return text, vocab


def assert_exact(model):
    r = model.check()
    json.dumps(r)
    assert r["exhaustive"]
    assert r["inputs"] > 0
    assert r["agree"] == r["inputs"], r["first_mismatch"]
    return r


# ---------------------------------------------------------------- every example, every input up to 5

@pytest.mark.parametrize("ex", load_examples(), ids=lambda e: e.id)
def test_every_example_compiles_and_agrees_on_every_input(ex):
    model = engine.compile(ex.source, ex.output, vocab=example_vocab(ex), max_len=5)
    assert_exact(model)
    s = model.summary()
    if ex.id == "histogram_bos":   # an 'or' of token and position conditions in layer 1: needs a joint encoding
        assert s["layers"] == s["analysis_layers"] + 1
        assert any("extra MLP sublayer" in n for n in s["notes"])
    else:
        assert s["layers"] == s["analysis_layers"]


@pytest.mark.parametrize("name", sorted(p.stem for p in TRACR.glob("*.rasp")))
def test_tracr_library_programs_agree_at_the_analysis_depth(name):
    source, vocab = tracr_program(name)
    model = engine.compile(source, vocab=vocab, max_len=5)
    assert_exact(model)
    s = model.summary()
    assert s["layers"] == s["analysis_layers"]
    if name in TRACR_WIDTH:
        assert s["residual_width"] <= TRACR_WIDTH[name][0]


@pytest.mark.parametrize("name, layers", [("reverse", 2), ("sort_stable", 2), ("histogram", 1),
                                          ("sort_by_frequency", 3)])
def test_layer_counts_match_the_paper(name, layers):
    ex = find_example(name)
    model = engine.compile(ex.source, ex.output, vocab="abc", max_len=5)
    assert model.summary()["layers"] == layers


def test_widths_at_max_len_10_stay_under_tracrs():
    for name, (_, w10) in TRACR_WIDTH.items():
        source, vocab = tracr_program(name)
        assert engine.compile(source, vocab=vocab, max_len=10).summary()["residual_width"] <= w10


def test_selector_width_is_exact_for_long_inputs():
    """Tracr's default selector-width decoding fails from length 10; ours is exact by construction."""
    model = engine.compile(find_example("histogram").source, vocab="ab", max_len=16)
    r = model.check(per_length=60)
    assert r["agree"] == r["inputs"] and r["lengths"] == [1, 16]
    assert model.run(["a" * 16])["outputs"] == [[16] * 16]


def test_stable_sort_uses_two_heads_for_the_or_and_says_so():
    ex = find_example("sort_stable")
    s = engine.compile(ex.source, "sorted", vocab="abc", max_len=5).summary()
    assert s["layers"] == 2 and s["heads_per_layer"] == [2, 1]
    assert any("2 heads count disjoint parts" in n for n in s["notes"])


# ---------------------------------------------------------------- the model object

def test_summary_describes_layout_heads_and_mlps():
    ex = find_example("reverse")
    s = engine.compile(ex.source, vocab="abc", max_len=5).summary()
    json.dumps(s)
    names = [b["name"] for b in s["layout"]]
    assert names[:4] == ["one", "bos", "tokens", "indices"]
    # every dimension holds some block; `reverse` reuses the one of `length [1/(w+1)]` (residual reuse)
    dims = [j for b in s["layout"] for j in b.get("dims", range(b["start"], b["start"] + b["size"]))]
    assert sorted(set(dims)) == list(range(s["residual_width"])) and len(dims) == s["residual_width"] + 1
    assert next(b for b in s["layout"] if b["name"] == "length [1/(w+1)]")["erased_by"] == "layer 1 MLP"
    opp = next(b for b in s["layout"] if b["name"] == "opp_index")
    assert opp["values"] == ["0", "1", "2", "3", "4"] and opp["written_by"] == "layer 1 MLP"
    assert [h["selector"] for h in s["heads"]] == ["full_s", "flip"]
    assert s["heads"][1]["line"] == 10 and s["heads"][1]["serves"] == ["reverse"]
    assert s["mlp_widths"][1] == 0 and s["mlps"][0]["targets"][0]["name"] == "opp_index"
    assert s["params"] == sum(a.size for a in engine.compile(ex.source, vocab="abc", max_len=5).weights.values())


def test_run_returns_outputs_attention_and_the_decoded_residual():
    ex = find_example("reverse")
    model = engine.compile(ex.source, vocab="abc", max_len=5)
    doc = model.run(["abc", "ca"])
    json.dumps(doc)
    assert doc["outputs"] == [["c", "b", "a"], ["a", "c"]] == doc["expected"]
    assert doc["agree"] == [True, True] and doc["agreement"] == {"inputs": 2, "agree": 2, "max_error": 0.0}
    assert doc["positions"][0] == ["<bos>", "a", "b", "c"]
    flip = doc["attention"][1]
    assert flip["selector"] == "flip" and flip["layer"] == 2
    assert np.allclose(flip["matrices"][0], [[1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]])
    length = doc["attention"][0]["matrices"][1]            # BOS + 2 selected keys, equally
    assert np.allclose(length[1], [1 / 3] * 3)
    stages = [r["stage"] for r in doc["residual"]]
    assert stages == ["embedding", "layer 1 attention", "layer 1 MLP", "layer 2 attention", "layer 2 MLP"]
    last = doc["residual"][-1]["blocks"]
    assert last["tokens"][0] == [None, "a", "b", "c"] and last["opp_index"][0] == [None, 2, 1, 0]
    assert last["reverse"][0][1:] == ["c", "b", "a"]
    # the width is read until layer 1's MLP, which erases it: its dimension then holds part of `reverse`
    widths = [r["blocks"]["length [1/(w+1)]"][0] for r in doc["residual"]]
    assert widths[1][1:] == [3, 3, 3] and widths[2] == widths[3] == widths[4] == [None] * 4
    assert doc["residual"][0]["blocks"]["reverse"][0] == [None] * 4


def test_run_rejects_bad_inputs_clearly():
    model = engine.compile("x = tokens;", vocab="ab", max_len=3)
    with pytest.raises(RaspError, match="the token 'z' is not in the vocabulary"):
        model.run(["az"])
    with pytest.raises(RaspError, match="input 1 has 4 tokens; the model is compiled for at most 3"):
        model.run(["abab"])
    with pytest.raises(RaspError, match="'hard' or 'soft'"):
        model.run(["ab"], mode="warm")


def test_numerical_output_and_soft_mode():
    ex = find_example("count")
    model = engine.compile(ex.source, "frac_prev_a", vocab="abn", max_len=5)
    assert model.summary()["output_encoding"] == "numerical"
    assert_exact(model)
    doc = model.run(["banana"[:5]], mode="soft", beta=50.0)
    assert doc["mode"] == "soft" and doc["beta"] == 50.0
    assert np.allclose(doc["raw"][0], [0, 1 / 2, 1 / 3, 2 / 4, 2 / 5], atol=1e-6)


def test_compilation_is_deterministic():
    ex = find_example("sort_by_frequency")
    a = engine.compile(ex.source, vocab="abc", max_len=6)
    b = engine.compile(ex.source, vocab="abc", max_len=6)
    assert a.config == b.config and a.weights.keys() == b.weights.keys()
    assert all(np.array_equal(a.weights[k], b.weights[k]) for k in a.weights)
    assert a.summary()["layout"] == b.summary()["layout"]


def test_encoding_overrides():
    src = "m = aggregate(select(indices, 0, ==), tokens_int); res = m + 1;"
    cat = engine.compile(src, vocab=["1", "2"], max_len=3, encodings={"m": "categorical"})
    num = engine.compile(src, vocab=["1", "2"], max_len=3, encodings={"m": "numerical"})
    kinds = {s: {b["name"]: b["kind"] for b in m.summary()["layout"]}["m"] for s, m in (("c", cat), ("n", num))}
    assert kinds == {"c": "categorical", "n": "numerical"}
    assert_exact(cat), assert_exact(num)


def test_joint_means_keep_dyck_tables_small():
    """Means over one selector share their denominator: tables enumerate only realizable pairs."""
    model = engine.compile(find_example("dyck1").source, vocab="()", max_len=20)
    r = model.check(per_length=100)
    assert r["agree"] == r["inputs"]


# ---------------------------------------------------------------- errors

@pytest.mark.parametrize("source, kwargs, message, line", [
    ("x = tokens;", {"output": "y"}, "the program defines no s-op named 'y'", None),
    ("s = select(tokens, tokens, ==);\nx = selector_width(s);", {"output": "s"}, "'s' is a selector", 1),
    ("a = indices;\nx = tokens + 1;", {}, "'x' fails on every input: cannot add str and int", 2),
    ("\nx = aggregate(select(1, 1, ==), tokens);", {}, "averages str values over every position", 2),
    ("x = tokens +;", {}, "", 1),
    ("m = aggregate(select(indices, indices, <=), indicator(tokens == \"a\"));\nn = m + 1;",
     {"encodings": {"m": "categorical"}}, "'m' averages several positions", 1),
    ("x = tokens;", {"encodings": {"x": "numerical"}}, "'x' holds str values", 1),
])
def test_compile_errors_name_the_construct_and_line(source, kwargs, message, line):
    with pytest.raises(RaspError) as info:
        engine.compile(source, vocab="abc", max_len=4, **kwargs)
    assert message in info.value.message
    if line is not None:
        assert info.value.span is not None and info.value.span.line == line


def test_size_limits_are_compile_errors_with_the_line():
    with pytest.raises(RaspError, match="'y' has 8 possible values; a categorical encoding allows 5") as info:
        engine.compile("a = tokens;\nx = indices * 3;\ny = selector_width(select(x, x, <));", vocab="ab", max_len=8,
                       limits=CompileLimits(max_categories=5))
    assert info.value.span.line == 3
    with pytest.raises(RaspError, match="'c' has too many possible values") as info:
        engine.compile("a = aggregate(select(indices, indices, <=), tokens);\n"
                       "b = aggregate(select(indices, indices, >=), tokens);\nc = round(a * b);",
                       vocab=[0, 1, 2, 3], max_len=12, limits=CompileLimits(max_domain=1000))
    assert info.value.span.line == 3


@pytest.mark.parametrize("kwargs, message", [
    ({"vocab": "", "max_len": 3}, "the vocabulary is empty"),
    ({"vocab": "aba", "max_len": 3}, "lists a token twice"),
    ({"vocab": ["<bos>", "a"], "max_len": 3}, "also in the vocabulary"),
    ({"vocab": "ab", "max_len": 0}, "max_len must be an int from 1 to 64"),
    ({"vocab": [1, "a"], "max_len": 3}, "mix"),
])
def test_bad_vocabulary_or_length(kwargs, message):
    with pytest.raises(RaspError, match=message):
        engine.compile("x = tokens;", **kwargs)
