"""The language's semantics, construct by construct (see docs/language.md)."""
import math

import pytest

from rasplay import engine
from support.evaluation import diagnostics, errors, value, values


# ------------------------------------------------------------------ select and selectors

def test_select_orientation_rows_are_queries_columns_keys():
    # entry (q, k) is true iff keys[k] < queries[q]
    sel = value("s = select(indices, indices, <);", "abc", "s")
    assert sel == [[0, 0, 0], [1, 0, 0], [1, 1, 0]]


def test_select_broadcasts_atoms():
    assert value("s = select(indices, 0, ==);", "abc", "s") == [[1, 0, 0]] * 3
    assert value("s = select(1, indices, ==);", "abc", "s") == [[0] * 3, [1] * 3, [0] * 3]


@pytest.mark.parametrize("op,expected", [("==", [[1, 0], [0, 1]]), ("!=", [[0, 1], [1, 0]]),
                                         ("<", [[0, 0], [1, 0]]), (">", [[0, 1], [0, 0]]),
                                         ("<=", [[1, 0], [1, 1]]), (">=", [[1, 1], [0, 1]])])
def test_every_select_comparison(op, expected):
    assert value(f"s = select(indices, indices, {op});", "ab", "s") == expected


def test_selector_and_or_not():
    src = "a = select(indices, indices, <=); b = select(indices, indices, >=); both = a and b; any_ = a or b; neither = not a;"
    assert value(src, "ab", "both") == [[1, 0], [0, 1]]
    assert value(src, "ab", "any_") == [[1, 1], [1, 1]]
    assert value(src, "ab", "neither") == [[0, 1], [0, 0]]


def test_string_selects_compare_lexicographically():
    assert value("s = select(tokens, tokens, <);", "ba", "s") == [[0, 1], [0, 0]]


# ------------------------------------------------------------------ aggregate

def test_aggregate_one_selected_passes_any_type_through():
    src = 'i = aggregate(select(indices, 0, ==), indices); t = aggregate(select(indices, 0, ==), tokens); b = aggregate(select(indices, 0, ==), tokens == "x");'
    assert value(src, "xy", "i") == [0, 0]
    assert value(src, "xy", "t") == ["x", "x"]
    assert value(src, "xy", "b") == [True, True]
    doc = engine.evaluate(src, ["xy"])
    assert [doc["results"][n]["type"] for n in "itb"] == ["int", "str", "bool"]


def test_aggregate_several_selected_average_to_float():
    doc = engine.evaluate("m = aggregate(select(indices, indices, <=), indices);", ["abcd"])
    assert doc["results"]["m"]["values"] == [[0.0, 0.5, 1.0, 1.5]]
    assert doc["results"]["m"]["type"] == "float"


def test_aggregate_empty_rows_get_the_default():
    assert value("m = aggregate(select(indices, indices, <), indices);", "abc", "m") == [0, 0.0, 0.5]
    assert value('m = aggregate(select(indices, indices + 1, ==), tokens, "~");', "abc", "m") == ["b", "c", "~"]


def test_averaging_strings_is_an_error_for_that_input_only():
    src = "m = aggregate(select(tokens, tokens, ==), tokens);"
    doc = engine.evaluate(src, ["abc", "abb"])
    res = doc["results"]["m"]
    assert res["values"][0] == ["a", "b", "c"] and res["values"][1] is None
    assert "query positions 1, 2 select several str values" in res["errors"][1]
    assert "(line 1, col 5)" in res["errors"][1]


def test_averaging_bools_is_an_error():
    (err,) = errors("m = aggregate(select(1, 1, ==), tokens == \"a\");", ["ab"], "m")
    assert "several bool values" in err


def test_default_of_another_type_is_a_clear_error():
    (err,) = errors("m = aggregate(select(indices, indices + 1, ==), tokens);", ["ab"], "m")
    assert "query position 1 selects nothing and gets the default 0 (int), but the values are strs" in err


def test_selector_width_counts_selected_keys():
    assert value("w = selector_width(select(tokens, tokens, ==));", "hello", "w") == [1, 1, 2, 2, 1]
    assert value("w = selector_width(select(indices, indices, <));", "abc", "w") == [0, 1, 2]


# ------------------------------------------------------------------ elementwise operations

def test_arithmetic_follows_python():
    src = "a = indices + 1; s = indices - 3; m = indices * 2; d = indices / 2; r = (indices - 3) % 4; p = indices ^ 2;"
    assert value(src, "abcd", "a") == [1, 2, 3, 4]
    assert value(src, "abcd", "s") == [-3, -2, -1, 0]
    assert value(src, "abcd", "m") == [0, 2, 4, 6]
    assert value(src, "abcd", "d") == [0.0, 0.5, 1.0, 1.5]
    assert value(src, "abcd", "r") == [1, 2, 3, 0]   # Python's sign rule
    assert value(src, "abcd", "p") == [0, 1, 4, 9]
    assert value("p = (indices + 1) ^ -1;", "ab", "p") == [1.0, 0.5]


def test_bankers_rounding():
    assert value("r = round(indices / 2 + 0.5);", "abcdef", "r") == [0, 1, 2, 2, 2, 3]
    assert value("r = round(-0.5 - indices);", "ab", "r") == [0, -2]


def test_strings_join_and_compare():
    assert value('j = tokens + "!"; lt = tokens < "c"; eq = tokens == "b";', "abc", "j") == ["a!", "b!", "c!"]
    assert value('lt = tokens < "c";', "abc", "lt") == [True, True, False]
    assert value('r = tokens * 2;', "ab", "r") == ["aa", "bb"]


def test_comparisons_including_not_equal():
    src = "ne = indices != 1; ge = indices >= 1; le = indices <= 1; gt = indices > 1;"
    assert value(src, "abc", "ne") == [True, False, True]
    assert value(src, "abc", "ge") == [False, True, True]
    assert value(src, "abc", "le") == [True, True, False]
    assert value(src, "abc", "gt") == [False, False, True]


def test_and_or_with_s_ops_give_bools_as_the_original():
    # the original RASP: each side counts by Python truthiness, the result is a bool
    assert value("x = indices and 7;", "abc", "x") == [False, True, True]
    assert value("x = indices or 0;", "abc", "x") == [False, True, True]
    assert value('x = (tokens == "a") and (indices == 0);', "aa", "x") == [True, False]


def test_conditional_elementwise_and_on_atoms():
    assert value('x = "hi" if tokens == "a" else "lo";', "ab", "x") == ["hi", "lo"]
    assert value("x = indices if 1 > 2 else indices + 10;", "ab", "x") == [10, 11]


def test_unary_operators_and_indicator():
    assert value("x = -indices; y = +indices; z = not (indices == 1); w = indicator(indices == 1);", "abc", "x") == [0, -1, -2]
    assert value("z = not (indices == 1);", "abc", "z") == [True, False, True]
    assert value("w = indicator(indices == 1);", "abc", "w") == [0, 1, 0]


def test_membership_and_lookups():
    src = '''d = {"a": 10, "b": 20}; l = [5, 6, 7];
    in_list = tokens in ["a", "c"]; looked = d[tokens]; picked = l[indices]; in_str = tokens in "abc";'''
    assert value(src, "ab", "in_list") == [True, False]
    assert value(src, "ab", "looked") == [10, 20]
    assert value(src, "ab", "picked") == [5, 6]
    assert value(src, "ab", "in_str") == [True, True]


def test_atom_in_sop_and_sop_index_go_through_attention():
    doc = engine.evaluate('has_b = "b" in tokens; second = tokens[1]; via = tokens[length - indices - 1];', ["abc"])
    r = doc["results"]
    assert r["has_b"]["values"] == [[True, True, True]] and r["has_b"]["layer"] == 1
    assert r["second"]["values"] == [["b", "b", "b"]] and r["second"]["layer"] == 1
    assert r["via"]["values"] == [["c", "b", "a"]] and r["via"]["layer"] == 2


def test_strings_beside_other_types_on_one_input_are_an_error():
    # the original refuses a sequence holding strings beside other types (numbers and bools may mix)
    (err,) = errors('x = indices if tokens == "a" else "z";', ["ab"], "x")
    assert "mix int and str" in err
    (err,) = errors("x = tokens + 1;", ["ab"], "x")
    assert "cannot add str and int" in err


def test_ints_and_floats_mix_to_float():
    doc = engine.evaluate("x = indices if indices == 0 else 0.5;", ["ab"])
    assert doc["results"]["x"]["values"] == [[0.0, 0.5]] and doc["results"]["x"]["type"] == "float"


# ------------------------------------------------------------------ inputs

def test_token_conversions():
    assert value("tokens = tokens_int; y = tokens * 2;", "123", "y") == [2, 4, 6]
    assert value("y = tokens_str + \"!\";", [1, 2], "y") == ["1!", "2!"]
    assert value("y = tokens_float / 2;", "12", "y") == [0.5, 1.0]
    assert value("y = tokens_bool;", "10", "y") == [True, True]  # Python's bool(), as the original
    (err,) = errors("tokens = tokens_int; y = tokens;", ["1x"], "y")
    assert "'x' cannot be read as an int" in err and "position 1" in err


def test_json_inputs_keep_their_types():
    assert value("y = tokens * 2;", [1, 2.5], "y") == [2.0, 5.0]
    assert value("y = not tokens;", [True, False], "y") == [False, True]
    assert values("y = tokens;", ["[3, 4]"], "y", input_format="json") == [[3, 4]]


def test_bad_inputs_are_reported_per_input():
    doc = engine.evaluate("y = indices;", ["ab", [1, "a"], "", "[1,", [[1]]], input_format=None)
    errs = doc["results"]["y"]["errors"]
    assert errs[0] is None
    assert "mix int and str" in errs[1]
    assert "empty" in errs[2]
    assert doc["results"]["y"]["values"][3] == [0, 1, 2]  # without input_format, "[1," is a plain string
    assert "not a number, bool or string" in errs[4]
    doc = engine.evaluate("y = indices;", ["[1,"], input_format="json")
    assert "not valid JSON" in doc["results"]["y"]["errors"][0]


def test_set_example_gives_the_default_input():
    doc = engine.evaluate('set example "abc"\ny = indices;', None)
    assert doc["inputs"] == [["a", "b", "c"]] and doc["results"]["y"]["values"] == [[0, 1, 2]]


def test_inputs_of_different_lengths_and_types_in_one_call():
    doc = engine.evaluate("y = aggregate(select(indices, length - indices - 1, ==), tokens);", ["abc", [1, 2], "xy", [True]])
    assert doc["results"]["y"]["values"] == [["c", "b", "a"], [2, 1], ["y", "x"], [True]]


# ------------------------------------------------------------------ functions, loops, collections

def test_functions_closures_and_multiple_returns():
    src = """
    def shifter(n) {
        def apply(sop) { return aggregate(select(indices, indices - n, ==), sop, "_"); }
        return apply;
    }
    back1 = shifter(1);
    b = back1(tokens);
    def two(x) { return x + 1, x - 1; }
    up, down = two(indices);
    """
    assert value(src, "abc", "b") == ["_", "a", "b"]
    assert value(src, "abc", "up") == [1, 2, 3]
    assert value(src, "abc", "down") == [-1, 0, 1]


def test_recursion_on_atoms():
    assert value("def f(n) { return 1 if n == 0 else n * f(n - 1); } x = indices + f(4);", "a", "x") == [24]


def test_for_loops_and_comprehensions():
    src = """
    total = indices;
    for i in range(3) { total = total + i; }
    squares = [i * i for i in range(4)];
    sq = squares[indices];
    weights = {c: i for i, c in zip(range(3), ["a", "b", "c"])};
    w = weights[tokens];
    n = len(squares) + indices;
    """
    assert value(src, "abc", "total") == [3, 4, 5]
    assert value(src, "abc", "sq") == [0, 1, 4]
    assert value(src, "cab", "w") == [2, 0, 1]
    assert value(src, "ab", "n") == [4, 5]


def test_loops_can_build_sops_from_lists():
    src = """
    acc = indices * 0;
    for letter in ["a", "b"] { acc = acc + indicator(tokens == letter); }
    """
    assert value(src, "abc", "acc") == [1, 1, 0]


def test_load_files_relative_to_the_program(tmp_path):
    (tmp_path / "helpers.rasp").write_text("def double(x) { return x + x; }\n_hidden = 1;\npublic = 2;\n")
    src = 'load "helpers";\ny = double(indices) + public;\n'
    doc = engine.evaluate(src, ["ab"], load_dirs=[tmp_path])
    assert doc["results"]["y"]["values"] == [[2, 4]]
    ds = [d for d in engine.evaluate('load "helpers"; z = _hidden;', ["a"], load_dirs=[tmp_path])["diagnostics"]]
    assert any("'_hidden' is not defined" in d["message"] for d in ds)


def test_load_errors_are_clear(tmp_path):
    (tmp_path / "broken.rasp").write_text("x = ;\n")
    (d,) = diagnostics('load "broken";', load_dirs=[tmp_path])
    assert "broken.rasp" in d["message"] and d["line"] == 1
    (d,) = diagnostics('load "../etc/passwd";', load_dirs=[tmp_path])
    assert "only files beside the program" in d["message"]
    (d,) = diagnostics('load "absent";', load_dirs=[tmp_path])
    assert "no file absent.rasp" in d["message"]


# ------------------------------------------------------------------ results document

def test_results_hold_every_named_sop_and_selector_in_order():
    doc = engine.evaluate("b = indices; a = select(indices, indices, ==); c = 3; b2 = b + 1;", ["ab"])
    assert list(doc["results"]) == ["b", "a", "b2"]
    assert doc["results"]["a"]["kind"] == "selector" and doc["results"]["a"]["head"] is None


def test_redefinition_keeps_the_last_value():
    doc = engine.evaluate("x = indices; y = x; x = x + 10;", ["ab"])
    assert list(doc["results"]) == ["y", "x"]
    assert doc["results"]["x"]["values"] == [[10, 11]] and doc["results"]["y"]["values"] == [[0, 1]]


def test_names_argument_limits_the_results():
    doc = engine.evaluate("a = indices; b = a + 1; c = b * 2;", ["ab"], names=["c", "nope"])
    assert list(doc["results"]) == ["c"]
    assert any("no s-op or selector named 'nope'" in d["message"] for d in doc["diagnostics"])


def test_expression_statements_are_shown():
    doc = engine.evaluate("length - indices;", ["ab"])
    assert doc["results"]["length - indices"]["values"] == [[2, 1]]


def test_float_results_are_finite_numbers():
    doc = engine.evaluate("x = aggregate(select(indices, indices, <=), indices) / 3;", ["abc"])
    assert all(math.isfinite(v) for v in doc["results"]["x"]["values"][0])
