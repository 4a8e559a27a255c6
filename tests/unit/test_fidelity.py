"""Programs written for the original RASP REPL (tech-srl/RASP) give its values here: regressions for
issue 9, each checked against what the original interpreter prints."""
import textwrap

import pytest

from rasplay import engine
from rasplay.engine.lang.parser import parse

from support.evaluation import diagnostics, value, values


def severities(source, inputs=("abc",)):
    return [(d["severity"], d.get("line")) for d in engine.evaluate(source, list(inputs))["diagnostics"]]


# ------------------------------------------------------------------ 1. stray tokens never crash the parser

@pytest.mark.parametrize("source, bad_line", [
    ("x = indices;\n}\ny = tokens;", 2),
    ("x = indices;\n)\ny = tokens;", 2),
    ("def f(a) { return a; }\n}\nx = indices;\ny = tokens;", 2),
    ("x = indices;\n]]\ny = tokens;", 2),
])
def test_a_stray_token_is_a_syntax_error_on_its_line_and_the_rest_runs(source, bad_line):
    doc = engine.evaluate(source, ["ab"])
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert d["kind"] == "syntax" and d["line"] == bad_line and d["col"] == 1
    assert doc["results"]["x"]["values"] == [[0, 1]]
    assert doc["results"]["y"]["values"] == [["a", "b"]]


def test_a_stray_token_at_the_end_is_reported():
    (d,) = diagnostics("x = tokens;\n)")
    assert d["kind"] == "syntax" and (d["line"], d["col"]) == (2, 1)


def test_return_outside_a_def_is_an_error_not_a_crash():
    (d,) = diagnostics("return=4;")
    assert "reserved name 'return'" in d["message"] and d["line"] == 1
    (d,) = diagnostics("x = indices;\nreturn x;\ny = x;")
    assert d["kind"] == "syntax" and d["line"] == 2 and "return ends a def body" in d["message"]


def test_a_syntax_error_inside_braces_drops_only_that_definition():
    src = "a = indices;\ndef f(x) {\n  y = x +* 1;\n  return y;\n}\nb = f(a);\nc = a + 1;\n"
    doc = engine.evaluate(src, ["ab"])
    errs = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert [(d["kind"], d["line"]) for d in errs] == [("syntax", 3), ("name", 6)]
    assert "'f' is not available" in errs[1]["message"] and "line 3" in errs[1]["message"]
    assert doc["results"]["c"]["values"] == [[1, 2]]


def test_an_unclosed_def_keeps_the_statements_after_its_error_line():
    src = "def f(x) {\n  return x;\n\ny = indices;"
    doc = engine.evaluate(src, ["ab"])
    assert doc["results"]["y"]["values"] == [[0, 1]]
    assert [d["line"] for d in doc["diagnostics"] if d["severity"] == "error"] == [4]


def test_a_broken_assignment_marks_its_name():
    src = "x = indices +;\ny = x;"
    ds = diagnostics(src)
    assert [d["line"] for d in ds] == [1, 2] and "'x' is not available" in ds[1]["message"]


def test_an_integer_literal_over_4300_digits_is_a_located_error():
    src = "a = indices;\nx = " + "7" * 5000 + " + indices;\ny = a;"
    doc = engine.evaluate(src, ["ab"])
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert (d["kind"], d["line"], d["col"]) == ("syntax", 2, 5) and "5000 digits" in d["message"]
    assert doc["results"]["y"]["values"] == [[0, 1]]


# ------------------------------------------------------------------ 2. load sees the library

def test_a_loaded_file_sees_the_library_and_exports_public_names(tmp_path):
    (tmp_path / "mylib.rasp").write_text(
        "rev = aggregate(select(indices, length - indices - 1, ==), tokens);\n_hidden = indices;\n")
    src = 'load "mylib";\nr = rev;\n'
    doc = engine.evaluate(src, ["hello"], load_dirs=[tmp_path])
    assert [d for d in doc["diagnostics"] if d["severity"] == "error"] == []
    assert doc["results"]["r"]["values"] == [list("olleh")]
    assert "'_hidden' is not defined" in diagnostics(src + "h = _hidden;", ["ab"], load_dirs=[tmp_path])[0]["message"]


def test_a_loaded_file_does_not_see_the_loading_programs_names(tmp_path):
    (tmp_path / "lib.rasp").write_text("a = f;\nb = 7;\n")
    doc = engine.evaluate('f = 10;\nload "lib";\nx = indices + b;', ["ab"], load_dirs=[tmp_path])
    assert doc["results"]["x"]["values"] == [[7, 8]]
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert "'f' is not defined" in d["message"] and d["line"] == 2


# ------------------------------------------------------------------ 3. semantics as in the original, with warnings

def test_if_else_chains_group_to_the_left_as_in_the_original():
    src = "x = 1 if indices==0 else 2 if indices==1 else 3;"
    assert value(src, "abc", "x") == [3, 2, 3]        # the original REPL: [3, 2, 3]
    (w,) = [d for d in engine.evaluate(src, ["abc"])["diagnostics"] if d["severity"] == "warning"]
    assert "(1 if indices==0 else 2) if indices==1 else 3" in w["message"] and w["line"] == 1
    assert value("x = 1 if indices==0 else (2 if indices==1 else 3);", "abc", "x") == [1, 2, 3]
    assert severities("x = 1 if indices==0 else (2 if indices==1 else 3);") == []


def test_and_or_between_s_ops_give_bools_with_a_warning():
    assert value("x = indices and 5;", "abc", "x") == [False, True, True]
    assert value('x = (tokens=="a") or tokens;', "ab", "x") == [True, True]
    assert value('x = tokens == "a" or indices;', "ab", "x") == [True, True]
    doc = engine.evaluate("x = indices and 5;", ["abc"])
    (w,) = [d for d in doc["diagnostics"] if d["severity"] == "warning"]
    assert "gives bools" in w["message"] and w["col"] == 5
    # between bools there is nothing to warn about; between atoms, Python's own and/or
    assert severities('x = tokens == "a" and indices > 0;') == []
    assert value("y = 0 or 5; x = indices + y;", "a", "x") == [5]


# ------------------------------------------------------------------ 4. what the original accepts

def test_negative_indexes_of_s_ops_count_from_the_end():
    assert value("x = tokens[-1];", "abc", "x") == ["c", "c", "c"]
    assert value("x = indices[-3];", "abc", "x") == [0, 0, 0]
    assert value("c = selector_width(select(tokens, \",\", ==) and select(indices, indices, <)); n = c[-1];",
                 "a,b,c", "n") == [2] * 5


def test_a_list_unpacks_into_names():
    assert values("a, b = [indices, tokens];", ["ab"], "b") == [["a", "b"]]
    assert "2 values for 3 names" in diagnostics("a, b, c = [indices, tokens];")[0]["message"]


def test_applying_an_s_op_or_selector_to_an_input_gives_its_value():
    src = textwrap.dedent("""\
        reverse = aggregate(select(indices, length - indices - 1, ==), tokens);
        r = reverse("hello");
        h = select(tokens, tokens, ==);
        m = h("aab");
        n = aggregate(select(indices, indices, <=), indices)([1, 2, 3]);
        set example r
    """)
    doc = engine.evaluate(src)
    infos = [d for d in doc["diagnostics"] if d["severity"] == "info"]
    assert infos == []
    assert doc["inputs"] == [list("olleh")]
    assert doc["results"]["reverse"]["values"] == [list("hello")]
    doc = engine.evaluate(src + "m;\nn;\n", ["ab"])
    shown = {d["line"]: d["message"] for d in doc["diagnostics"] if d["severity"] == "info"}
    assert shown == {7: "m = [[True, True, False], [True, True, False], [False, False, True]]",
                     8: "n = [0, 0.5, 1.0]"}


def test_applying_to_a_bad_input_is_a_located_error():
    (d,) = diagnostics("x = indices([]);")
    assert d["line"] == 1 and "empty" in d["message"]


@pytest.mark.parametrize("name", ["tokens_asis", "tokens_str", "indices", "length", "True", "False", "out",
                                  "range", "zip", "len", "get", "full_s", "sort", "count", "selector_width",
                                  "select_next_identical", "aggregate"])
def test_reserved_names_cannot_be_set(name):
    doc = engine.evaluate(f"{name} = 1;\nx = indices;", ["ab"])
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert f"cannot set reserved name '{name}'" in d["message"] and d["line"] == 1
    assert doc["results"]["x"]["values"] == [[0, 1]]


def test_reserved_names_keep_their_meaning_after_a_refused_assignment():
    assert value("length = 1;\nindices = 2;\nx = length + indices;", "ab", "x") == [2, 3]


def test_tokens_may_be_reassigned_and_functions_may_use_library_names_locally():
    assert value("tokens = tokens_int; x = tokens + 1;", [1, 2], "x") == [2, 3]
    assert value("def f(x) { length = 2; return x + length; } y = f(indices);", "ab", "y") == [2, 3]
    assert "reserved name 'indices'" in diagnostics("def f(indices) { return 1; }")[0]["message"]
    assert "reserved name 'sort'" in diagnostics("def sort(a) { return a; }")[0]["message"]
    assert "reserved name 'length'" in diagnostics("for length in [1] { }")[0]["message"]


# ------------------------------------------------------------------ 5. cold start

def test_an_interpretation_that_times_out_reports_it_once():
    src = "a = indices;\n" + "for i in range(100000) { for j in range(100) { y = i; } }\n" + "b = a;\nc = a;\n"
    doc = engine.evaluate(src, ["ab"], limits=engine.Limits(eval_seconds=0.2))
    kinds = [d["kind"] for d in doc["diagnostics"] if d["severity"] == "error"]
    assert kinds == ["timeout"]
    assert "time limit" in doc["results"]["a"]["errors"][0]


# ------------------------------------------------------------------ 6. smaller

def test_a_conversion_error_points_at_the_conversion():
    doc = engine.evaluate("a = indices;\nx = tokens_float + 1;", ["1a"])
    (d,) = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert (d["line"], d["col"]) == (2, 5) and "'a' cannot be read as a float" in d["message"]
    assert "(line 2, col 5)" in doc["results"]["x"]["errors"][0]


def test_single_key_aggregates_keep_ints_as_the_original():
    # the original REPL: [0, 0.5, 1.0] (the first position selects one int, and keeps it)
    got = value("x = aggregate(select(indices, indices, <=), indices);", "abc", "x")
    assert got == [0, 0.5, 1.0] and type(got[0]) is int and type(got[1]) is float
    # an int default stays an int among floats; ints stay ints through + - * and if/else
    got = value("x = aggregate(select(indices, 1, ==), tokens_float);", "123", "x")
    assert got == [2.0, 2.0, 2.0] and type(got[0]) is float
    got = value("y = aggregate(select(indices, indices, <=), indices); x = y * 2 - 1;", "abc", "x")
    assert got == [-1, 0.0, 1.0] and type(got[0]) is int and type(got[1]) is float
    doc = engine.evaluate("x = aggregate(select(indices, indices, <=), indices);", ["a", "abc"])
    assert doc["results"]["x"]["values"][0] == [0] and type(doc["results"]["x"]["values"][0][0]) is int


def test_mark_first_instance_looks_at_earlier_positions_like_the_original():
    assert value('x = mark_first_instance(tokens, "l");', "hello", "x") == [False, False, True, False, False]
    assert value('x = mark_last_instance(tokens, "l");', "hello", "x") == [False, False, False, True, False]


def test_the_parser_collects_warnings_and_invalid_statements():
    p = parse("x = 1 if a else 2 if b else 3;\n}\ny = 2;")
    assert [type(s).__name__ for s in p.statements] == ["Assign", "Invalid", "Assign"]
    assert len(p.warnings) == 1 and len(p.syntax_errors) == 1


def test_exit_ends_the_program_as_it_ends_the_repl():
    doc = engine.evaluate("x = indices;\nexit\ny = tokens;\nfodfd", ["ab"])
    assert list(doc["results"]) == ["x"]
    assert [d["severity"] for d in doc["diagnostics"]] == ["info"]
    assert list(engine.evaluate("quit()\nz = tokens;", ["ab"])["results"]) == []
