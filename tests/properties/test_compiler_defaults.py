"""An aggregate's default where its selector selects nothing: the compiled model gives exactly the
evaluator's value there (also a default of another type, as the original RASP's default 0 of an
aggregate of strings), or compile refuses with the line and the reason; never a wrong value."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rasplay import engine

EMPTY_AT_0 = "sel2 = select(indices, indices, <) and select(indices, 0, ==);\n"


def _exact(source, output=None, vocab="ab", max_len=3, **kw):
    model = engine.compile(source, output, vocab=vocab, max_len=max_len, **kw)
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"], (source, r["first_mismatch"])
    return model, r


def test_a_string_aggregate_gives_its_default_0_where_nothing_is_selected():
    model, r = _exact(EMPTY_AT_0 + "y = aggregate(sel2, tokens);")
    assert r["inputs"] == 2 and r["evaluator_errors"] == 12     # longer inputs mix 0 with strings: errors
    assert 0 in model.classes.tolist()
    run = model.run(["a", "b"], trace=False)
    assert run["outputs"] == [[0], [0]] and run["agree"] == [True, True]
    assert all(type(v[0]) is int for v in run["outputs"])


def test_elementwise_ops_read_the_real_default():
    for expr in ('y == "a"', "y == 0", 'y != "b"', 'y if y == "a" else "c"'):
        _exact(EMPTY_AT_0 + f"y = aggregate(sel2, tokens);\nz = {expr};", "z")


def test_a_default_of_the_values_type_stays_exact():
    model, r = _exact(EMPTY_AT_0 + 'y = aggregate(sel2, tokens, "z");')
    assert r["inputs"] == 14 and "z" in model.classes.tolist()


def test_a_string_default_beside_numbers_is_a_class():
    model, r = _exact(EMPTY_AT_0 + 'y = aggregate(sel2, indices, "x");')
    assert model.output_encoding == "categorical" and "x" in model.classes.tolist()
    _exact(EMPTY_AT_0 + 'y = aggregate(sel2, indices, "x");\nz = y == "x";', "z")


@pytest.mark.parametrize("source, words", [
    # a mean over numbers with a string default: a numerical encoding cannot hold the string
    ('y = aggregate(select(indices, indices, <), indices, "x");', ["line 1", "averages", "'x'"]),
    # a mean over several positions of an s-op that mixes strings with numbers
    (EMPTY_AT_0 + 'y = aggregate(sel2, indices, "x");\nz = aggregate(select(indices, indices, <=), y);',
     ["line 3", "mix types"]),
])
def test_what_a_model_cannot_hold_is_refused_with_the_line(source, words):
    with pytest.raises(engine.RaspError) as e:
        engine.compile(source, vocab="ab", max_len=3)
    assert e.value.kind == "type" and e.value.span is not None
    for w in words:
        assert w in e.value.message, e.value.message


def test_a_numerical_encoding_of_a_mixed_aggregate_is_refused():
    with pytest.raises(engine.RaspError) as e:
        engine.compile(EMPTY_AT_0 + 'y = aggregate(sel2, indices, "x");', vocab="ab", max_len=3,
                       encodings={"y": "numerical"})
    assert e.value.kind == "type" and e.value.span.line == 2 and "'x'" in e.value.message


@pytest.mark.parametrize("source", [
    # reverse: the mirror position always exists
    "n = selector_width(select(1, 1, ==));\nm = n - indices - 1;\nr = aggregate(select(indices, m, ==), tokens);",
    # sort: the width of a strict total order is a permutation of the positions
    "b = select(tokens, tokens, <) or (select(tokens, tokens, ==) and select(indices, indices, <));\n"
    "t = selector_width(b);\nr = aggregate(select(t, indices, ==), tokens);",
    # most_frequent: exactly one position is first in a strict total order
    "h = selector_width(select(tokens, tokens, ==));\n"
    "beats = select(h, h, >) or (select(h, h, ==) and select(indices, indices, <));\n"
    "win = not has_focus(beats);\nr = aggregate(select(win, True, ==), tokens);",
    # sort_unique: an empty row forces another to select several strings, an error in the evaluator
    "t = selector_width(select(tokens, tokens, <));\nr = aggregate(select(t, indices, ==), tokens);",
])
def test_a_selector_proved_to_select_needs_no_default(source):
    model, _ = _exact(source, vocab="abc", max_len=4)
    assert model.classes.tolist() == ["a", "b", "c"]


def test_a_selector_that_may_select_nothing_keeps_its_default():
    model, _ = _exact("r = aggregate(select(indices, indices - 1, ==), tokens);", vocab="abc", max_len=4)
    assert model.classes.tolist() == [0, "a", "b", "c"]


# ------------------------------------------------------------------ property

SOPS = [("tokens", "str"), ("indices", "int"), ('tokens == "a"', "bool"), ("indices + 1", "int"),
        ('"c" if tokens == "a" else tokens', "str")]
SELECT_SIDES = {"str": ["tokens", '"a"', '"b"'], "int": ["indices", "indices - 1", "indices + 1", "0", "1"]}
DEFAULTS = [None, "0", "1", "2.5", '"z"', '"a"', "True", "False"]
AFTER = ["y", 'y == "a"', "y == 0", "y == True", "y != 1", "y + 1", 'y + "x"',
         "aggregate(select(indices, indices, ==), y)", "aggregate(select(indices, 0, ==), y)",
         "aggregate(select(indices, indices, <=), y)", "selector_width(select(y, y, ==))",
         "aggregate(select(y, y, ==), indices)", "aggregate(select(indices, indices - 1, ==), y)",
         'aggregate(select(indices, indices - 1, ==), y, "q")', "aggregate(select(y, 0, ==), tokens)",
         'y if indices == 0 else "c"']


@st.composite
def default_programs(draw):
    side = draw(st.sampled_from(sorted(SELECT_SIDES)))
    atoms = []
    for _ in range(draw(st.integers(1, 2))):
        k = draw(st.sampled_from(SELECT_SIDES[side]))
        q = draw(st.sampled_from(SELECT_SIDES[side]))
        op = draw(st.sampled_from(["==", "<", ">", "!="]))
        atoms.append(f"select({k}, {q}, {op})")
    sel = f" {draw(st.sampled_from(['and', 'or']))} ".join(atoms)
    sop, _ = draw(st.sampled_from(SOPS))
    default = draw(st.sampled_from(DEFAULTS))
    args = f"s, {sop}" + (f", {default}" if default is not None else "")
    after = draw(st.sampled_from(AFTER))
    return f"s = {sel};\ny = aggregate({args});\nres = {after};"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(default_programs(), st.integers(1, 3))
def test_compiled_defaults_equal_the_evaluator_or_compile_refuses(source, max_len):
    try:
        model = engine.compile(source, "res", vocab="ab", max_len=max_len)
    except engine.RaspError as e:
        # refused: with the line of the construct and a reason
        assert e.kind in ("type", "limit", "value") and e.span is not None and e.message, (source, e.message)
        return
    r = model.check()
    assert r["exhaustive"] and r["agree"] == r["inputs"], (source, r["first_mismatch"])


def _never_empty(source, max_len=4):
    from rasplay.engine.compiler.extract import extract_graph
    from rasplay.engine.compiler.validate import DEFAULT_COMPILE_LIMITS, validate_program
    from rasplay.engine.compiler.value_sets import infer_value_sets

    program = validate_program(source, "r", "abc", max_len, "<bos>", None, DEFAULT_COMPILE_LIMITS)
    graph = extract_graph(program)
    return program.output.id in infer_value_sets(program, graph).never_empty


@pytest.mark.parametrize("selector, proved", [
    ("select(indices, n - indices - 1, ==)", True),             # positional: enumerated per length
    ("select(t, indices, ==)", True),                           # a permutation of the positions as keys
    ("select(indices, t, ==)", True),                           # positions as queries
    ("select(win, True, ==)", True),                            # a value present on every input
    ("select(indices, 0, ==) or select(tokens, \"a\", ==)", True),
    ("select(indices, indices - 1, ==)", False),
    ("select(u, indices, ==)", False),                          # ties: a number row may be empty
    ("select(tokens, \"a\", ==)", False),
    ("select(win, False, ==)", False),
])
def test_the_never_empty_proof(selector, proved):
    source = ("n = length;\n"
              "t = selector_width(select(tokens, tokens, <) or (select(tokens, tokens, ==) and "
              "select(indices, indices, <)));\n"
              "u = selector_width(select(tokens, tokens, <));\n"
              "win = not has_focus(select(t, t, <));\n"
              f"r = aggregate({selector}, indices + 1);")
    assert _never_empty(source) is proved


def test_the_config_names_mixed_classes(tmp_path):
    model = engine.compile(EMPTY_AT_0 + "y = aggregate(sel2, tokens);", vocab="ab", max_len=3)
    assert model.config["output"] == {"kind": "categorical", "classes": [0, "a", "b"], "type": "mixed"}
    model.export_npz(tmp_path / "m.npz")


@pytest.mark.parametrize("value, default, output", [('"x"', None, "y"), ('"x"', None, "z"), ("1", '"no"', "y")])
def test_a_split_selector_over_a_constant_gives_a_default_of_another_type(value, default, output):
    """An 'or' no single head can score: heads look for a key in disjoint parts; where none finds one
    the value is the default, of another type than the constant."""
    sel = ('s = select(tokens, tokens, ==) and select(indices, indices, <) or '
           'select(indices, indices, >) and select(tokens, "a", ==);\n')
    args = value + (f", {default}" if default else "")
    model, r = _exact(sel + f"y = aggregate(s, {args});\nz = y == 0;", output, max_len=4)
    assert any("no single head" in n for n in model.notes) and r["inputs"] >= 11


def test_if_else_branches_of_two_types_are_computed_per_position():
    """Where the branches' types are known only from the value sets (a mean, a string), each position is
    computed as the evaluator computes it: the model is exact where the evaluator gives a value."""
    source = ('s = select("a", "b", ==) or select("a", "b", !=);\ny = aggregate(s, indices + 1, True);\n'
              'res = y if indices == 0 else "c";')
    model, r = _exact(source, "res", max_len=3)
    assert r["inputs"] == 2 and model.classes.dtype.kind == "O"
