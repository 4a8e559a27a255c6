"""Tracr programs under rasplay's alias give the real Tracr's values (recorded by bench/tracr_record.py
under the real Tracr in tests/fixtures/tracr_recorded.json), compiled models carry Tracr's model
surface, and a compiled program's self-check compares with Tracr's evaluation rules (never with the
lowered program)."""
from __future__ import annotations

import json
import statistics
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import rasplay
import rasplay.tracr as tracr
from rasplay.interop import tracr_eval, tracr_lower
from rasplay.cli.main import main as cli_main
from rasplay.tracr import rasp

ROOT = Path(__file__).resolve().parents[2]
RECORDED = json.loads((ROOT / "tests" / "fixtures" / "tracr_recorded.json").read_text())
sys.path.insert(0, str(ROOT / "bench" / "tracr_api"))
tracr.install_alias()
import cases  # noqa: E402  (imports tracr: the alias)

TABLES = {"cases": cases.CASES, "lib": cases.LIB}


def decode(v):
    """The fixture's JSON back to Tracr values (tuples were tagged)."""
    if isinstance(v, dict) and "tuple" in v:
        return tuple(decode(x) for x in v["tuple"])
    if isinstance(v, list):
        return [decode(x) for x in v]
    return v


def same(got, want) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(got, (int, float)) and abs(got - want) <= 1e-6 * max(1.0, abs(want))
    return got == want and type(got) is type(want)


ENTRIES = [(group, name) for group in ("cases", "lib") for name in RECORDED[group]]


@pytest.mark.parametrize("group,name", ENTRIES)
def test_values_equal_the_real_tracrs(group, name):
    """rasp.evaluate under the alias gives the recorded value, or raises the recorded exception."""
    make = TABLES[group][name][0]
    for row in RECORDED[group][name]["values"]:
        x = decode(row["input"])
        if "error" in row:
            with pytest.raises(Exception) as info:
                rasp.evaluate(make(), x)
            assert type(info.value).__name__ == row["error"] and str(info.value) == row["message"], (name, x)
        else:
            got = rasp.evaluate(make(), x)
            assert same(got, decode(row["value"])), (name, x, got, row["value"])


COMPILED = [(g, n) for g, n in ENTRIES if "compiled" in RECORDED[g][n]]


@pytest.mark.parametrize("group,name", COMPILED)
def test_compiled_outputs_equal_the_real_tracrs(group, name):
    """Where Tracr compiles, ours compiles too and `apply` decodes to Tracr's compiled outputs at every
    position where Tracr's evaluator has a value; where Tracr refuses, ours refuses with a reason."""
    make, _, (vocab, max_len) = TABLES[group][name]
    rec = RECORDED[group][name]["compiled"]
    if name == "numerical_mean_of_strings":    # Tracr refuses, and so do we, with the reason
        assert "error" in rec
        with pytest.raises(rasplay.RaspError, match="numerical Aggregate averages numbers"):
            tracr.compile(make(), vocab, max_len)
        return
    if "error" in rec:   # Tracr refuses (Full, tuples as values); rasplay compiles, exactly by its check
        model = tracr.compile(make(), vocab, max_len)
        check = model.check()
        assert check["agree"] == check["inputs"] > 0
        return
    model = tracr.compile(make(), vocab, max_len)
    compared = 0
    for row in rec["outputs"]:
        x = decode(row["input"])
        want_model = decode(row["decoded"])
        reference = rasp.evaluate(make(), x)
        got = model.apply([model.bos, *x]).decoded
        assert got[0] == model.bos
        for g, w, r in zip(got[1:], want_model, reference):
            if r is None:        # Tracr's evaluator has no value here (its model's output is unspecified)
                continue
            assert same(g, w) or (isinstance(w, float) and abs(g - w) < 1e-4), (name, x, got, want_model)
            compared += 1
    assert compared > 0
    check = model.check()
    assert check["agree"] == check["inputs"] > 0 and check["reference"] == "tracr semantics"


def test_the_silent_wrong_value_is_gone():
    """A numerical mean over a Map of an s-op that may be None (a categorical Aggregate selecting nothing):
    Tracr's values, in evaluation and in the compiled model, on every input; the mean reads numbers."""
    rec = {tuple(r["input"]): r["value"] for r in RECORDED["cases"]["none_then_mean"]["values"]}
    assert rec[("a", "c")] == [0, 0] and rec[("b", "b")] == [0, 1] and rec[("a", "b", "b")] == [0, 0, 0.5]
    program = cases.none_then_mean()
    low = tracr.to_rasp(program, "ab", 4)
    assert "holds codes" in low.source    # prev_is_b holds None among numbers: coded, and decoded before the mean
    model = tracr.compile(program, "ab", 4)
    for x, want in rec.items():
        if set(x) <= {"a", "b"}:
            assert same(model.apply([model.bos, *x]).decoded[1:], want), x
    doc = tracr.evaluate(program, [list(x) for x in rec])
    assert doc["tracr"]["differ"] == []
    assert same(doc["results"][low.output]["values"], [rec[x] for x in rec])


def test_codes_are_never_numbers():
    """Coded s-ops hold strings in RASP, so a mean of several codes is an evaluation error, never a value."""
    pair = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices)
    low = tracr.to_rasp(pair, "ab", 3)
    doc = rasplay.evaluate(low.source, ["ab"], names=[low.output], limits=tracr.LIMITS)
    values = doc["results"][low.output]["values"][0]
    assert all(isinstance(v, str) for v in values)
    assert low.decode(low.output, values) == [("a", 0), ("b", 1)]
    mean = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), pair)
    with pytest.raises(ValueError, match="Only types int, bool, and float"):
        rasp.evaluate(mean, "ab")
    low = tracr.to_rasp(mean, "ab", 3)
    doc = rasplay.evaluate(low.source, ["ab"], names=[low.output], limits=tracr.LIMITS)
    assert doc["results"][low.output]["values"] == [None] and doc["results"][low.output]["errors"][0]


def test_check_compares_with_tracrs_rules_not_the_lowered_program():
    """check() reads the reference evaluator: a model whose lowered program differs from the Tracr program
    it claims to compile is reported, position by position."""
    right = rasp.Map(lambda x: 1 if x == "a" else 0, rasp.tokens)
    wrong = rasp.Map(lambda x: 1 if x == "b" else 0, rasp.tokens)
    model = tracr.compile(right, "ab", 3)
    assert model.check()["agree"] == model.check()["inputs"] == 2 + 4 + 8
    model.tracr_program = wrong      # the lowered program and the model stay those of `right`
    check = model.check()
    assert check["agree"] == 0 and check["first_mismatch"] is not None


def test_readme_example_runs_verbatim():
    """Tracr's README example (its usage text, run unchanged under the alias)."""
    snippet = textwrap.dedent('''
        from tracr.rasp import rasp

        def make_length():
          all_true_selector = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)
          return rasp.SelectorWidth(all_true_selector)

        length = make_length()  # `length` is not a primitive in our implementation.
        opp_index = length - rasp.indices - 1
        flip = rasp.Select(rasp.indices, opp_index, rasp.Comparison.EQ)
        reverse = rasp.Aggregate(flip, rasp.tokens)

        from tracr.compiler import compiling

        bos = "BOS"
        model = compiling.compile_rasp_to_model(
            reverse,
            vocab={1, 2, 3},
            max_seq_len=5,
            compiler_bos=bos,
        )

        out = model.apply([bos, 1, 2, 3])
        ''')
    scope: dict = {}
    exec(compile(snippet, "tracr_readme", "exec"), scope)   # noqa: S102 - the README's text
    out, model = scope["out"], scope["model"]
    readme = RECORDED["readme"]
    assert out.decoded == readme["decoded"] == ["BOS", 3, 2, 1]
    d = out.residuals[0].shape[-1]
    assert all(r.shape == (1, 4, d) for r in out.residuals + out.layer_outputs)
    assert len(out.residuals) == len(out.layer_outputs) == 2 * model.layers
    assert all(a.shape[0] == 1 and a.shape[2:] == (4, 4) for a in out.attn_logits)
    assert len(out.attn_logits) == model.layers
    np.testing.assert_allclose(out.residuals[-1] + out.layer_outputs[-1], out.transformer_output)
    assert model.input_encoder.encode(["BOS", 1, 2, 3])[0] == model.input_encoder.bos_encoding
    assert model.input_encoder.bos_token == "BOS" and model.input_encoder.pad_token == readme["COMPILER_PAD"]
    assert set(model.output_encoder.decode(list(range(len(model.output_encoder.encoding_map))))) >= {1, 2, 3}


def test_tracr_modules_scripts_import():
    from tracr.compiler import compiling, lib, validating
    from tracr.rasp import causal_eval

    assert compiling.COMPILER_BOS == RECORDED["readme"]["COMPILER_BOS"]
    assert compiling.COMPILER_PAD == RECORDED["readme"]["COMPILER_PAD"]
    assert set(cases.LIB) <= set(dir(lib)) and lib.length("abc") == [3, 3, 3]
    width = rasp.SelectorWidth(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE))
    assert causal_eval.evaluate(width, "abc") == [1, 2, 3]
    assert causal_eval.CausalEvaluator().evaluate(width, "ab") == [1, 2]
    bad = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ), rasp.tokens))
    reasons = [u.reason for u in validating.static_validate(bad)]
    assert len(reasons) == 1 and "encoding must match" in reasons[0]
    nonzero_default = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.EQ),
                                                    rasp.numerical(rasp.tokens == "a"), default=1))
    assert [u.reason for u in validating.static_validate(nonzero_default)] == [
        "Numerical aggregate only supports 0 as default value."]
    averaging = rasp.Aggregate(rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE), rasp.tokens)
    assert [u.reason for u in validating.validate(averaging, [1, 2])] == [
        "Categorical aggregate does not support Selectors with width > 1 that require aggregation (eg. averaging)."]
    assert validating.validate(lib.make_reverse(rasp.tokens), [1, 2, 3]) == []
    with pytest.raises(ValueError, match="BOS token must not be present"):
        compiling.compile_rasp_to_model(width, vocab={"BOS", "a"}, max_seq_len=3, compiler_bos="BOS")


def test_apply_refuses_a_missing_bos_and_takes_padding():
    model = tracr.compile(cases.LIB["make_reverse"][0](), "abc", 5, bos="BOS")
    with pytest.raises(rasplay.RaspError, match="BOS token"):
        model.apply(list("abc"))
    out = model.apply(["BOS", "a", "b", "compiler_pad", "compiler_pad"])
    assert out.decoded == ["BOS", "b", "a", None, None]
    assert out.residuals[0].shape[1] == 5


def test_causal_compile_through_the_alias():
    from tracr.compiler import compiling, lib

    model = compiling.compile_rasp_to_model(lib.make_frac_prevs(rasp.tokens == "a"), vocab={"a", "b"},
                                            max_seq_len=4, compiler_bos="BOS", causal=True)
    check = model.check()
    assert model.causal and check["agree"] == check["inputs"] == 30
    # a selector that looks ahead is masked to key <= query, as Tracr's causal models are: reverse then reads
    # position 0 everywhere (the reverse of each prefix, at its last position)
    model = compiling.compile_rasp_to_model(lib.make_reverse(rasp.tokens), vocab={"a", "b"}, max_seq_len=3,
                                            compiler_bos="BOS", causal=True)
    assert any("causal" in n for n in model.lowered.notes)
    assert model.apply(["BOS", "a", "b", "b"]).decoded == ["BOS", "a", "a", "a"]
    check = model.check()
    assert check["agree"] == check["inputs"] == 2 + 4 + 8


def test_tracr_semantics_where_they_differ():
    prev = cases.LIB["shift_by"][0]()     # None in the first two positions
    with pytest.raises(ValueError, match="key is None!"):
        rasp.evaluate(rasp.Select(prev, prev, rasp.Comparison.EQ), "abc")
    assert rasp.Full(3)("abc") == [3, 3, 3]
    with pytest.raises(ValueError, match="Constant len 2 doesn't match input len 3"):
        rasp.ConstantSOp([1, 2])("abc")
    assert rasp.Map(lambda x: str(x), rasp.tokens)([1, "a", True]) == ["1", "a", "True"]
    with pytest.raises(rasplay.RaspError, match="numerical Aggregate averages numbers"):
        tracr.compile(cases.numerical_mean_of_strings(), "ab", 3)
    with pytest.raises(rasplay.RaspError, match="mixes kinds"):   # compiling a mixed vocabulary: refused clearly
        tracr.compile(rasp.tokens == 1, [1, "a"], 3)


def test_plain_evaluation_has_no_table_limit():
    """Evaluation follows Tracr's rules directly: 600 tokens (a reverse) and a SequenceMap over more pairs
    than the lowering's table limit evaluate."""
    from tracr.compiler import lib

    xs = [i % 7 for i in range(600)]
    assert rasp.evaluate(lib.make_reverse(rasp.tokens), xs) == xs[::-1]
    pairs = rasp.SequenceMap(lambda a, b: a * b, rasp.indices, rasp.indices + 0)
    n = 600
    assert n * n > tracr_lower.MAX_TABLE
    assert pairs(list(range(n))) == [i * i for i in range(n)]


def test_batch_evaluator_matches_one_by_one():
    """The batched reference (used by check()) gives each input's own value and error."""
    from tracr.compiler import lib

    program = lib.make_sort_freq(4)
    inputs = [list(x) for x in ["abca", "bbbb", "cabc", "aacb"]]
    values, errors = tracr_eval.evaluate_batch(program, inputs)
    assert errors == [None] * 4 and values == [rasp.evaluate(program, x) for x in inputs]
    shifted = cases.compare_none()
    values, errors = tracr_eval.evaluate_batch(rasp.Map(lambda x: x, shifted), [["a", "b"]])
    assert values == [None] and isinstance(errors[0], ValueError)


def test_cli_builders_with_arguments(capsys, tmp_path):
    lib_file = ROOT / "bench" / "tracr_api" / "lib_programs.py"
    assert cli_main(["eval", "--tracr", f"{lib_file}:make_frac_prevs(rasp.tokens == 'l')", "-i", "hello",
                     "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"]["frac_prevs"]["values"] == [[0, 0, 1 / 3, 0.5, 0.4]]
    assert cli_main(["eval", "--tracr", f"{lib_file}:shift_by", "--arg", "1", "--arg", "rasp.tokens", "-i", "abc",
                     "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"]["shift_by_1"]["values"] == [[None, "a", "b"]]
    with pytest.raises(SystemExit, match=r"make_frac_prevs\(bools\) needs arguments"):
        cli_main(["eval", "--tracr", f"{lib_file}:make_frac_prevs", "-i", "ab"])
    cases_file = ROOT / "bench" / "tracr_api" / "cases.py"
    assert cli_main(["eval", "--tracr", f"{cases_file}:tuple_values", "-i", "ab", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"]["first_pair"]["values"] == [[["a", 0], ["a", 0]]]
    assert cli_main(["eval", "--tracr", f"{cases_file}:tuple_values", "-i", "ab"]) == 0
    assert "[('a', 0), ('a', 0)]" in capsys.readouterr().out
    assert cli_main(["compile", "--tracr", f"{cases_file}:none_then_mean", "--vocab", "ab", "--max-len", "4",
                     "--check", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"]["reference"] == "tracr semantics" and out["check"]["agree"] == out["check"]["inputs"] == 30


def test_program_shapes_third_party_programs_use():
    """Shapes that failed in InterpBench's programs (our own programs in their spirit): a Map giving one value
    on many numbers stays an s-op; a custom predicate over (token, index) tuples is one head; chained
    'take the first' Aggregates of numbers copy (no mean); all compile exactly by Tracr's rules."""
    zero = rasp.Map(lambda x: 0, rasp.tokens)
    assert zero(list(range(9))) == [0] * 9
    model = tracr.compile(zero, list(range(12)), 3)
    assert model.check()["agree"] == model.check()["inputs"]

    pairs = rasp.SequenceMap(lambda x, i: (x, i), rasp.tokens, rasp.indices)
    seen = rasp.SelectorWidth(rasp.Select(pairs, pairs, lambda k, q: k[0] == q[0] and k[1] <= q[1]))
    model = tracr.compile(seen, "abc", 5, causal=True)
    check = model.check()
    assert check["agree"] == check["inputs"] == 3 + 9 + 27 + 81 + 243
    assert model.summary()["heads_per_layer"][-1] == 1

    first = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == 0)
    doubled = rasp.Map(lambda x: x * 2 + 0.5, rasp.Aggregate(first, rasp.tokens))
    last = rasp.Select(rasp.indices, rasp.indices, lambda k, q: k == q)
    chained = rasp.Aggregate(first, rasp.SequenceMap(lambda a, b: a + b, rasp.Aggregate(last, doubled),
                                                     rasp.tokens))
    model = tracr.compile(chained, [0.5, 1.25, 2.0, 3.75, 7.5], 7)
    check = model.check(exhaustive_limit=2000, per_length=40)
    assert check["agree"] == check["inputs"] > 0


def test_interpbench_figures_recorded():
    """The recorded InterpBench figures (bench/interpbench_figures.json, see docs/interop.md) say what the docs
    say: every case loads, gives Tracr's values, compiles and checks exactly, never deeper than Tracr's."""
    doc = json.loads((ROOT / "bench" / "interpbench_figures.json").read_text())
    ours = {r["case"]: r for r in doc["rasplay"]}
    theirs = {r["case"]: r for r in doc["tracr"]}
    assert len(ours) == len(theirs) == 129
    assert all(r["loaded"] and r["compiled"] and r["check"]["agree"] == r["check"]["inputs"] for r in ours.values())
    assert all(ours[c]["layers"] <= theirs[c]["layers"] for c in ours)
    # smaller weights (issue 36): against the previous compiler in the same run, never wider, deeper or larger
    before = {r["case"]: r for r in doc["rasplay_before"]}
    assert set(before) == set(ours)
    assert all(ours[c][k] <= before[c][k] for c in ours for k in ("d_model", "layers"))
    # residual reuse: narrower in 64, median 26 -> 22; its erasure units are the only added non-zeros (2 each)
    assert all(ours[c]["nonzero"] - 2 * ours[c]["erase_units"] == before[c]["nonzero"] for c in ours)
    assert sum(ours[c]["d_model"] < before[c]["d_model"] for c in ours) == 64
    assert statistics.median(ours[c]["d_model"] for c in ours) == 22
    assert sum(ours[c]["nonzero"] <= theirs[c]["nonzero"] for c in ours) == 102
