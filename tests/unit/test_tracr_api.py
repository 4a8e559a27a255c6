"""Tracr programs in: rasplay's implementation of Tracr's `rasp` API, its lowering to RASP, the import
alias and `rasplay eval|compile --tracr`. The programs of Tracr's lib.py (written for the API in
bench/tracr_api/lib_programs.py) must give the values of our RASP versions (bench/tracr_programs/)."""
from __future__ import annotations

import importlib
import itertools
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import rasplay
import rasplay.tracr as tracr
from rasplay.cli.main import main as cli_main
from rasplay.tracr import rasp

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "bench" / "tracr_api" / "lib_programs.py"
sys.path.insert(0, str(ROOT / "bench" / "tracr_api"))
from pairs import PAIRS  # noqa: E402


@pytest.fixture(scope="module")
def lib():
    tracr.install_alias()
    return importlib.import_module("lib_programs")


def all_inputs(vocab, max_len):
    tokens = list(vocab)
    for n in range(1, max_len + 1):
        for combo in itertools.product(tokens, repeat=n):
            yield list(combo)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_lib_program_values_equal_our_rasp_version(lib, name):
    """Every input up to length 4 (5 for two-token vocabularies): the Tracr-API program lowered
    by rasplay and our RASP version agree at every position where Tracr has a value."""
    file, vocab = PAIRS[name]
    source = (ROOT / "bench" / "tracr_programs" / file).read_text()
    max_len = 5 if len(vocab) <= 2 else 4
    inputs = list(all_inputs(vocab, max_len))
    if name == "sort_unique":   # keys must be unique (the RASP version fails on repeats, Tracr's misorders)
        inputs = [x for x in inputs if len(set(x)) == len(x)]
    program = getattr(lib, name)()
    low = tracr.to_rasp(program, vocab, max_len)
    ours, errors, expected = [], [], []
    for start in range(0, len(inputs), 200):   # the evaluator takes at most 256 inputs at once
        batch = inputs[start:start + 200]
        doc = rasplay.evaluate(low.source, batch, names=[low.output], limits=tracr.LIMITS)["results"][low.output]
        ours += doc["values"]
        errors += doc["errors"]
        theirs = rasplay.evaluate(source, batch)["results"]
        expected += theirs[list(theirs)[-1]]["values"]
    assert len(ours) == len(expected) == len(inputs)
    compared = 0
    for x, got, want, err in zip(inputs, ours, expected, errors):
        assert err is None and want is not None, (x, err)
        got = low.decode(low.output, got)
        for g, w in zip(got, want):
            if g is None:          # Tracr's None (shift_by, detect_pattern padding)
                continue
            assert g == pytest.approx(w, abs=1e-12), (name, x, got, want)
            compared += 1
    assert compared >= len(inputs)


def test_lib_examples_from_tracr_docs(lib):
    """The examples in lib.py's documentation, through Tracr's own entry point rasp.evaluate."""
    assert rasp.evaluate(lib.make_length(), "abcdefg") == [7] * 7
    assert lib.make_reverse(rasp.tokens)("Hello") == list("olleH")
    assert rasp.evaluate(lib.make_pair_balance(rasp.tokens, "(", ")"), "a()b(c))") == \
        pytest.approx([0, 1 / 2, 0, 0, 1 / 5, 1 / 6, 0, -1 / 8])
    assert lib.make_shuffle_dyck2()("({)}") == [1, 1, 1, 1]
    assert lib.make_shuffle_dyck2()("(){)}") == [0, 0, 0, 0, 0]
    assert lib.make_hist()("abac") == [2, 1, 2, 1]
    assert lib.make_sort_unique(rasp.tokens, rasp.tokens)([2, 4, 3, 1]) == [1, 2, 3, 4]
    assert lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1)([2, 4, 1, 2]) == [1, 2, 2, 4]
    assert lib.make_sort_freq(5)([2, 4, 2, 1]) == [2, 2, 4, 1]
    assert lib.make_frac_prevs(rasp.tokens == "l")("hello") == pytest.approx([0, 0, 1 / 3, 1 / 2, 2 / 5])
    assert lib.detect_pattern(rasp.tokens, "abc")("abcabc") == [None, None, True, False, False, True]
    assert lib.make_count_less_freq(2)(list("aaabbc")) == [3] * 6
    assert lib.make_count_less_freq(2)(list("aacbbc")) == [6] * 6
    assert lib.make_count(rasp.tokens, "a")(list("aaabbc")) == [3] * 6
    assert lib.make_count(rasp.tokens, "a")(list("cabc")) == [1] * 4


def test_unchanged_program_file_through_the_alias(tmp_path):
    """A file written for Tracr (`from tracr.rasp import rasp`) loads, evaluates and compiles."""
    prog = tmp_path / "prog.py"
    prog.write_text(
        "from tracr.rasp import rasp\n"
        "def make_fn():\n"
        "    smaller = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.LT)\n"
        "    return rasp.numerical(rasp.Aggregate(smaller, rasp.numerical(rasp.Map(lambda t: 1 if t == 'a' else 0,"
        " rasp.tokens)), default=0)).named('frac_a_below')\n")
    program = tracr.load_program(f"{prog}:make_fn")
    assert rasp.evaluate(program, "bab") == [1, 0, 1]
    from tracr.rasp import rasp as aliased   # the alias is installed by load_program
    assert aliased.Map is rasp.Map
    model = tracr.compile(program, vocab="ab", max_len=4)
    check = model.check()
    assert check["agree"] == check["inputs"] == 2 + 4 + 8 + 16


def test_operators_and_selector_combinators():
    t, i = rasp.tokens, rasp.indices
    assert (t + 1)([1, 2]) == [2, 3]
    assert (1 - t)([1, 2]) == [0, -1]
    assert (t * i)([3, 3, 3]) == [0, 3, 6]
    assert (~(t == 1))([1, 2]) == [False, True]
    assert ((t > 1) & (i > 0))([2, 2, 1]) == [False, True, False]
    assert ((t > 1) | (i > 1))([2, 1, 1]) == [True, False, True]
    # ~Select simplifies to a Select with a Python predicate: rasplay tabulates it and finds `!=`
    differ = ~rasp.Select(t, t, rasp.Comparison.EQ)
    assert isinstance(differ, rasp.Select)
    assert rasp.SelectorWidth(differ)("aab") == [1, 1, 2]
    low = tracr.to_rasp(rasp.SelectorWidth(differ), "ab", 3)
    assert "select(tokens, tokens, !=)" in low.source
    both = rasp.Select(i, i, rasp.Comparison.LT) & rasp.Select(t, t, rasp.Comparison.EQ)
    assert isinstance(both, rasp.SelectorAnd)
    assert rasp.SelectorWidth(both)("abab") == [0, 0, 1, 1]
    either = rasp.SelectorOr(rasp.Select(i, i, rasp.Comparison.GT), rasp.Select(t, t, rasp.Comparison.EQ))
    assert rasp.SelectorWidth(either)("abab") == [4, 3, 3, 2]
    assert rasp.SelectorWidth(rasp.SelectorNot(either))("abab") == [0, 1, 1, 2]


def test_an_expression_is_called_through_the_apis_evaluator(monkeypatch):
    """interop/tracr_expr.py's classes answer `expr(xs)` through the rules interop/tracr_rasp.py plugs in
    (Tracr's evaluation rules, interop/tracr_eval.py); without them, a clear refusal, never a value."""
    from rasplay.interop import tracr_eval, tracr_expr

    program = rasp.Map(lambda x: x + 1, rasp.tokens)
    assert program([1, 2]) == rasp.evaluate(program, [1, 2]) == tracr_eval.evaluate(program, [1, 2]) == [2, 3]
    monkeypatch.setattr(tracr_expr, "_evaluator", None)
    with pytest.raises(RuntimeError, match="rasplay.interop.tracr_rasp"):
        program([1, 2])


def test_constants_annotations_and_names():
    c = rasp.ConstantSOp([5, 6, 7])
    assert (c + rasp.Full(1))("abc") == [6, 7, 8]
    sel = rasp.ConstantSelector([[1, 0], [1, 1]])
    assert rasp.SelectorWidth(sel)("xy") == [1, 2]
    assert sel("xy") == [[True, False], [True, True]]
    m = rasp.numerical(rasp.Map(lambda x: x, rasp.tokens)).named("ident")
    assert rasp.is_numerical(m) and not rasp.is_categorical(m) and m.name == "ident"
    assert rasp.is_categorical(rasp.tokens) and rasp.default_name(rasp.Select(rasp.tokens, rasp.tokens,
                                                                               rasp.Comparison.EQ)) == "select"
    assert m.label.startswith("ident_")
    low = tracr.to_rasp(m, [1, 2], 2)
    assert low.encodings == {"ident": "numerical"} and low.output == "ident"


def test_tuples_are_coded_and_decoded():
    pair = rasp.SequenceMap(lambda a, b: (a, b), rasp.tokens, rasp.indices)
    assert pair("ab") == [("a", 0), ("b", 1)]
    low = tracr.to_rasp(pair, "ab", 2)
    assert low.codes[low.output] == [("a", 0), ("a", 1), ("b", 0), ("b", 1)]


def test_lowering_refuses_clearly():
    with pytest.raises(rasplay.RaspError, match="vocabulary mixes"):
        tracr.to_rasp(rasp.tokens + 1, ["a", 1], 3)
    with pytest.raises(rasplay.RaspError, match="max_len"):
        tracr.to_rasp(rasp.tokens + 1, [1], 0)
    with pytest.raises(rasplay.RaspError, match="FILE.py:NAME"):
        tracr.load_program("no_colon.py")


@settings(max_examples=40, deadline=None)
@given(table=st.dictionaries(st.sampled_from("abcd"), st.integers(-3, 3), min_size=4, max_size=4),
       inp=st.lists(st.sampled_from("abcd"), min_size=1, max_size=6), offset=st.integers(0, 3))
def test_map_and_custom_select_match_python(table, inp, offset):
    """A Map is its Python function at every position; a custom predicate selects what Python says."""
    mapped = rasp.Map(lambda x: table[x], rasp.tokens)
    assert mapped(inp) == [table[x] for x in inp]
    sel = rasp.Select(mapped, rasp.indices, lambda k, q: (k + q) % 3 == offset % 3)
    values = [table[x] for x in inp]
    want = [sum((values[k] + q) % 3 == offset % 3 for k in range(len(inp))) for q in range(len(inp))]
    assert rasp.SelectorWidth(sel)(inp) == want


def test_cli_eval_and_compile_tracr(tmp_path, capsys):
    saved = tmp_path / "reverse.rasp"
    assert cli_main(["eval", "--tracr", f"{LIB}:reverse", "-i", "hello", "--json", "--save-rasp", str(saved)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"]["reverse"]["values"] == [list("olleh")]
    assert rasplay.evaluate(saved.read_text(), ["abc"])["results"]["reverse"]["values"] == [list("cba")]
    assert cli_main(["compile", "--tracr", f"{LIB}:sort_freq", "--vocab", "abc", "--max-len", "4", "--check",
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["check"]["agree"] == out["check"]["inputs"] > 100
    assert out["summary"]["layers"] == 3


def test_analysis_of_a_tracr_program(lib):
    """Analysed (and so drawn) like any RASP program: sort_freq needs 3 layers, Tracr's needs 5."""
    a = tracr.analyze(lib.sort_freq(), "abc", 5)
    assert a["layers"] == 3 and a["heads_per_layer"] == [1, 1, 1]
    kinds = {n["kind"] for n in a["graph"]["nodes"]}
    assert {"select", "selector_width", "aggregate", "sequencemap"} <= kinds
    assert "sort_freq" in a["names"]


def test_alias_refuses_to_shadow_another_tracr(monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "tracr", types.ModuleType("tracr"))
    with pytest.raises(RuntimeError, match="already imported"):
        tracr.install_alias()


def test_cli_reports_a_bad_program_spec(tmp_path):
    with pytest.raises(SystemExit, match="FILE.py:NAME"):
        cli_main(["eval", "--tracr", str(tmp_path / "missing.py"), "-i", "ab"])
    prog = tmp_path / "p.py"
    prog.write_text("from tracr.rasp import rasp\nx = 3\n")
    with pytest.raises(SystemExit, match="not a Tracr s-op"):
        cli_main(["eval", "--tracr", f"{prog}:x", "-i", "ab"])


def test_maps_of_many_numbers_become_steps(lib):
    """`balance < 0` over every difference of two means (thousands of values at max_len 16) is written
    as comparisons with midpoints, not a table: a short program that still compiles exactly."""
    low = tracr.to_rasp(lib.shuffle_dyck2(), "(){}", 16)
    assert len(low.source) < 10_000
    assert " if balance_0 < " in low.source
    assert lib.shuffle_dyck2()("({)}") == [1, 1, 1, 1]
    assert lib.shuffle_dyck2()("({)}}{") == [0] * 6


def test_tracr_compile_entry_point_through_the_alias(lib):
    """`from tracr.compiler import compiling; compiling.compile_rasp_to_model(...)` compiles with rasplay."""
    from tracr.compiler import compiling

    model = compiling.compile_rasp_to_model(lib.make_hist(), vocab={"a", "b", "c"}, max_seq_len=4,
                                            compiler_bos="BOS")
    check = model.check()
    assert check["agree"] == check["inputs"] == 3 + 9 + 27 + 81
    assert model.config["vocab"][model.config["bos_id"]] == "BOS"
    causal = compiling.compile_rasp_to_model(lib.make_hist(), vocab={"a", "b"}, max_seq_len=4, causal=True)
    check = causal.check()     # as Tracr's causal models: each position counts its token in the prefix
    assert causal.causal and check["agree"] == check["inputs"] == 2 + 4 + 8 + 16


def test_page_link_carries_the_lowered_program(lib, tmp_path, capsys):
    import base64
    import zlib

    saved = tmp_path / "hist.rasp"
    assert cli_main(["eval", "--tracr", f"{LIB}:histogram", "-i", "abca", "--save-rasp", str(saved)]) == 0
    err = capsys.readouterr().err
    link = next(w for w in err.split() if "#v1=" in w)
    payload = link.split("#v1=", 1)[1]
    state = json.loads(zlib.decompress(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)), -15))
    assert state == {"source": saved.read_text(), "inputs": ["abca"]}


def test_lowering_limits():
    """Tables are bounded (MAX_TABLE entries, MAX_MEANS possible means), with clear refusals."""
    from rasplay.interop import tracr_lower

    pairs = rasp.SequenceMap(lambda a, b: a * b, rasp.indices, rasp.indices + 0)
    with pytest.raises(rasplay.RaspError, match="over the limit"):
        tracr.to_rasp(pairs, "a", 500)       # 500 x 500 pairs > MAX_TABLE
    assert 500 * 500 > tracr_lower.MAX_TABLE
    every = rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ)
    mean = rasp.numerical(rasp.Aggregate(every, rasp.numerical(rasp.tokens), default=0))
    with pytest.raises(rasplay.RaspError, match="too many to tabulate"):
        tracr.to_rasp(rasp.Map(lambda x: x > 0.5, mean), [0.11, 0.27, 0.35, 0.52, 0.73, 0.91], 14)
    low = tracr.to_rasp(mean, [0.11, 0.27, 0.35, 0.52, 0.73, 0.91], 14)   # the mean alone needs no table
    assert "aggregate(" in low.source


def test_reserved_names_are_renamed():
    """Tracr names that RASP reserves (built-ins, library names) get a trailing underscore."""
    out = rasp.Map(lambda x: x, rasp.tokens).named("out")
    srt = rasp.Map(lambda x: x, out).named("sort")
    low = tracr.to_rasp(rasp.SequenceMap(lambda a, b: a + b, out, srt).named("length"), "ab", 3)
    assert {"out_", "length_"} <= set(low.names.values()) and low.output == "length_"
    assert rasp.evaluate(rasp.SequenceMap(lambda a, b: a + b, out, srt), "ab") == ["aa", "bb"]
