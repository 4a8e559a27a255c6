"""Fidelity round 2 (issues 26 and 27): programs others wrote, and random programs, give the values
the original RASP (tech-srl/RASP) gives. Each expected value below is what the original interpreter
printed for the same program (bench/corpus_against_original.py, bench/fuzz_against_original.py)."""

import pytest

from rasplay import engine
from rasplay.engine.lang.errors import RaspError
from rasplay.engine.limits import DEFAULT_LIMITS

from support.evaluation import errors, value, values


def result(source, inputs, name, **kw):
    return engine.evaluate(source, list(inputs), **kw)["results"][name]


# ------------------------------------------------------------------ per-position types (mixed)

def test_an_if_else_may_hold_an_int_and_a_bool():
    r = result("m = 1 if indices == 0 else True;", ["abc"], "m")
    assert r["values"] == [[1, True, True]] and r["type"] == "mixed"
    assert [type(v) for v in r["values"][0]] == [int, bool, bool]


def test_an_aggregate_default_of_another_type_is_kept_where_nothing_is_selected():
    r = result('b = aggregate(select(indices, indices - 1, ==), tokens == "a");', ["abc"], "b")
    assert r["values"] == [[0, True, False]] and [type(v) for v in r["values"][0]] == [int, bool, bool]


def test_an_aggregate_that_selects_nothing_anywhere_gives_its_default():
    # strings where something is selected, the int default where nothing is: per input, as the original
    r = result("x = aggregate(select(indices, 1, ==), tokens);", ["abc", "a"], "x")
    assert r["values"] == [["b", "b", "b"], [0]] and r["type"] == "mixed"


def test_strings_beside_numbers_on_one_input_fail_there_as_in_the_original():
    (err,) = errors("x = aggregate(select(indices, indices + 1, ==), tokens);", ["ab"], "x")
    assert "selects nothing" in err and "default 0" in err


def test_branches_of_different_types_hold_the_chosen_values():
    r = result('h = 1 if length > 3 else "x";', ["abc", "abcd"], "h")
    assert r["values"] == [["x", "x", "x"], [1, 1, 1, 1]] and r["type"] == "mixed"


def test_a_list_lookup_may_mix_ints_and_bools():
    assert value("o = [1, True][indices % 2];", "abc", "o") == [1, True, 1]


def test_an_index_that_is_an_int_at_some_positions_and_a_float_at_others():
    # [0, 0.5, 1.0]: 0 is an int (one selected value), the others means
    (err,) = errors('a = aggregate(select(indices, indices, <=), indices); s = "abcdef"[a];', ["abc"], "s")
    assert "positions 1, 2" in err
    assert values("a = aggregate(select(indices, indices, <=), indices);", ["abc"], "a") == [[0, 0.5, 1.0]]


def test_json_tokens_keep_ints_as_ints():
    doc = engine.evaluate("tokens = tokens_asis; s = tokens_str; t = tokens + 1;", ["[1, 2.5, 3]"],
                          input_format="json")
    assert doc["results"]["s"]["values"] == [["1", "2.5", "3"]]
    assert doc["results"]["t"]["values"] == [[2, 3.5, 4]]
    assert [type(v) for v in doc["results"]["t"]["values"][0]] == [int, float, int]


def test_tokens_bool_is_python_bool_of_each_token():
    assert values("y = tokens_bool;", ["10", "a0"], "y") == [[True, True], [True, True]]


def test_compiling_or_training_a_mixed_sop_is_refused_with_its_line():
    src = "x = indices;\nm = 1 if indices == 0 else True;"
    with pytest.raises(RaspError) as e:
        engine.compile(src, "m", vocab="abc", max_len=4)
    assert "'m' (line 2)" in e.value.message and "several types" in e.value.message
    assert e.value.span.line == 2
    from rasplay.engine.train.data import TrainError, load_task
    with pytest.raises(TrainError, match=r"'m' \(line 2\)"):
        load_task(src, "m")


# ------------------------------------------------------------------ the library with s-op arguments

@pytest.mark.parametrize("source, inp, want", [
    ("x = count(tokens, tokens);", "hello", [5, 5, 5, 5, 5]),
    ("x = count(tokens, tokens);", "abc", [3, 3, 3]),
    ('x = count(tokens, "l");', "hello", [2, 2, 2, 2, 2]),
    ("x = shift(indices, indices, 9);", "abc", [0, 9, 1]),
    ('x = shift(tokens, 1, "_");', "abc", ["_", "a", "b"]),
    ("x = contains(indices, length - indices - 1);", "ab", [False, False]),
    ("x = contains(indices, length - indices - 1);", "abc", [True, True, True]),
    ('x = contains(tokens, "b");', "abc", [True, True, True]),
])
def test_library_functions_take_sops_where_the_original_does(source, inp, want):
    assert value(source, inp, "x") == want


# ------------------------------------------------------------------ names and values

def test_rebinding_a_name_to_an_atom_leaves_no_sop_of_that_name():
    doc = engine.evaluate("x = indices; x = 3; y = x + indices;", ["abc"])
    assert "x" not in doc["results"] and doc["results"]["y"]["values"] == [[3, 4, 5]]


def test_a_function_redefining_an_sop_name_hides_the_sop():
    doc = engine.evaluate("reverse = indices; def reverse(s) { return s; } y = reverse(tokens);", ["ab"])
    assert "reverse" not in doc["results"] and doc["results"]["y"]["values"] == [["a", "b"]]


def test_a_name_keeps_both_values_of_a_function():
    assert value("def f(a) { return a, a + 1; } z = f(indices); w = z[1];", "abc", "w") == [1, 2, 3]


def test_values_the_original_accepts():
    assert value("x = tokens[True];", "abc", "x") == ["b", "b", "b"]
    assert value("x = indices == [1];", "abc", "x") == [False, False, False]
    assert value("x = indices if [] else tokens;", "abc", "x") == ["a", "b", "c"]
    assert value("x = aggregate(full_s, indices, [0]);", "abc", "x") == [1.0, 1.0, 1.0]


def test_names_before_a_reserved_one_are_set():
    doc = engine.evaluate("a, length = indices, 1;", ["abc"])
    assert doc["results"]["a"]["values"] == [[0, 1, 2]]
    assert any("reserved name 'length'" in d["message"] for d in doc["diagnostics"])


def test_loaded_names_are_shown_and_accepted_as_outputs(tmp_path):
    (tmp_path / "lib.rasp").write_text("double = indices * 2;\n")
    doc = engine.evaluate('load "lib";\ny = double + 1;', ["abc"], load_dirs=[tmp_path])
    assert doc["results"]["double"]["values"] == [[0, 2, 4]]
    doc = engine.evaluate('load "lib";', ["abc"], names=["double"], load_dirs=[tmp_path])
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"]


# ------------------------------------------------------------------ program size

def test_the_program_text_limit_is_above_the_largest_published_programs():
    assert DEFAULT_LIMITS.max_source_chars >= 500_000
    body = "".join(f"v{i} = indices + {i};  # a comment to make the line longer, as real programs have\n"
                   for i in range(1800))
    assert len(body) > 125_000
    doc = engine.evaluate(body, ["ab"], names=["v1799"])
    assert doc["results"]["v1799"]["values"] == [[1799, 1800]]


def test_a_program_over_the_limit_says_the_limit():
    doc = engine.evaluate("x = indices;" + " " * 1_000_001, ["ab"])
    (d,) = doc["diagnostics"]
    assert "the limit is 1000000 characters (Limits.max_source_chars" in d["message"]


def test_the_server_takes_the_largest_published_programs_by_default():
    from rasplay.server.api.common import check_source
    from rasplay.server.settings import Settings

    settings = Settings()
    assert settings.max_source_chars >= 125_000 and settings.max_body_bytes >= 2 * settings.max_source_chars
    check_source("#" * 125_000, settings)  # no error
    assert settings.engine_limits().max_source_chars == settings.max_source_chars


def test_an_int_held_in_a_float_sop_stays_an_int_through_further_aggregates():
    # averages make a float s-op; where the default (an int) lands, later single selections keep the int
    src = "v1 = shift(aggregate(full_s, tokens, 0), length, 3)[-1]; v2 = \"abc\"[v1 % 3];"
    doc = engine.evaluate(src, ["[0, 3, 0, 0, 1]"], input_format="json")
    assert doc["results"]["v1"]["values"] == [[3, 3, 3, 3, 3]] and doc["results"]["v1"]["type"] == "int"
    assert doc["results"]["v2"]["values"] == [["a"] * 5]


@pytest.mark.parametrize("source, want", [
    ("x = indices + indicator(1);", [1, 2, 3]),
    ('x = tokens in "ab";', [True, True, False]),
    ('x = tokens in {"a": 1};', [True, False, False]),
    ("x = tokens in tokens;", [True, True, True]),
    ("x = indices + len(zip([1, 2], [3]));", [1, 2, 3]),
    ("on = indices; selector = on + 1; x = selector;", [1, 2, 3]),
    ('x = indices + indices("abc")[2];', [2, 3, 4]),
    ("x = (indices + 1)[1];", [2, 2, 2]),
    ("x = aggregate(select (indices, 0, ==), tokens);", ["a", "a", "a"]),
    ("def f(a, b) { return a; } x = f(indices, tokens + 1);", [0, 1, 2]),
])
def test_what_the_original_refuses_and_rasplay_accepts_as_documented(source, want):
    # docs/language.md, "Accepted here, refused by the original": each gives what Python gives
    assert value(source, "abc", "x") == want


