"""The parser's limits and its recovery after a syntax error (issue 24's mutants): the cap on
repaired missing ';' per statement group, the cap on reported syntax errors (the statements after
still parse), and nested def/for blocks dropped whole so that the statements after them run."""
from rasplay.engine import evaluate
from rasplay.engine.lang import ast
from rasplay.engine.lang.parser import MAX_RECOVERIES, MAX_SYNTAX_ERRORS, parse


def missing_semicolons(n: int) -> str:
    return "".join(f"a{i} = {i}\n" for i in range(n)) + "z = indices;\n"


def test_up_to_the_cap_every_missing_semicolon_is_repaired():
    p = parse(missing_semicolons(MAX_RECOVERIES))
    assert [e.message for e in p.syntax_errors] == [f"missing ';' at the end of line {i}"
                                                    for i in range(1, MAX_RECOVERIES + 1)]
    assert [type(s) for s in p.statements] == [ast.Assign] * (MAX_RECOVERIES + 1)


def test_past_the_cap_the_group_is_a_syntax_error_not_more_repairs():
    p = parse(missing_semicolons(MAX_RECOVERIES + 1))
    messages = [e.message for e in p.syntax_errors]
    assert not any(m.startswith("missing ';'") for m in messages)
    assert messages == ["unexpected name 'z'; expected one of ';', ','"]
    assert [type(s) for s in p.statements] == [ast.Invalid]


def test_the_cap_counts_per_statement_group():
    """A ';' starts a new group: 2 x 15 missing ';' are all repaired."""
    half = "".join(f"a{i} = {i}\n" for i in range(15))
    p = parse(half + "b = 1;\n" + half.replace("a", "c") + "z = indices;\n")
    assert len(p.syntax_errors) == 30 and all(e.message.startswith("missing ';'") for e in p.syntax_errors)


def test_syntax_errors_are_capped_and_the_statements_after_still_parse():
    n = MAX_SYNTAX_ERRORS + 5
    src = "".join(f"b{i} = +;\n" for i in range(n)) + "z = indices;\n"
    p = parse(src)
    assert len(p.syntax_errors) == MAX_SYNTAX_ERRORS
    assert [e.span.line for e in p.syntax_errors] == list(range(1, MAX_SYNTAX_ERRORS + 1))
    assert len(p.statements) == n + 1
    assert all(isinstance(s, ast.Invalid) for s in p.statements[:n]) and isinstance(p.statements[-1], ast.Assign)
    doc = evaluate(src, ["ab"])
    assert doc["results"]["z"]["values"] == [[0, 1]]
    assert MAX_SYNTAX_ERRORS == 200


def test_as_many_errors_as_the_cap_are_all_reported():
    src = "".join(f"b{i} = +;\n" for i in range(MAX_SYNTAX_ERRORS))
    assert len(parse(src).syntax_errors) == MAX_SYNTAX_ERRORS


NESTED = """def f(x) {
  for i in [1, 2] {
    y = +;
  }
  return x;
}
z = indices;
def g(x) { return x + 1; }
w = g(z);
"""


def test_an_error_inside_a_nested_for_drops_the_whole_def_and_the_rest_runs():
    p = parse(NESTED)
    assert [(e.message, e.span.line, e.span.col) for e in p.syntax_errors] == [
        ("unexpected ';'; expected an expression", 3, 10)]
    assert [type(s).__name__ for s in p.statements] == ["Invalid", "Assign", "FuncDef", "Assign"]
    assert p.statements[0].names == ["f"]
    doc = evaluate(NESTED, ["ab"])
    assert doc["results"]["z"]["values"] == [[0, 1]] and doc["results"]["w"]["values"] == [[1, 2]]
    assert [d["line"] for d in doc["diagnostics"]] == [3]


def test_a_def_whose_brace_never_closes_does_not_swallow_the_statements_after_its_error():
    src = """def f(x) {
  a = { "k": 1 };
  for i in [1, 2] {
    y = 1 +* 2;
  }
z = indices;
w = z + 1;
"""
    p = parse(src)
    first = p.syntax_errors[0]
    assert (first.message, first.span.line, first.span.col) == ("unexpected '*'; expected an expression", 4, 12)
    assert [type(s).__name__ for s in p.statements][-2:] == ["Assign", "Assign"]
    doc = evaluate(src, ["ab"])
    assert doc["results"]["z"]["values"] == [[0, 1]] and doc["results"]["w"]["values"] == [[1, 2]]


def test_an_error_after_a_nested_block_in_a_def_drops_only_that_def():
    src = "def f(x) {\n  for i in [1, 2] { y = i; }\n  return x +;\n}\nw = indices + 2;\n"
    p = parse(src)
    assert [(e.span.line, e.span.col) for e in p.syntax_errors] == [(3, 13)]
    assert [type(s).__name__ for s in p.statements] == ["Invalid", "Assign"]
    assert evaluate(src, ["ab"])["results"]["w"]["values"] == [[2, 3]]


def test_a_stray_closing_brace_is_its_own_broken_statement():
    src = "a = indices;\n}\nb = a + 1;\n"
    p = parse(src)
    assert [e.span.line for e in p.syntax_errors] == [2]
    assert evaluate(src, ["ab"])["results"]["b"]["values"] == [[1, 2]]


def test_a_stray_closing_brace_mid_line_leaves_the_statement_after_it():
    src = "a = indices; } b = a + 1;\n"
    p = parse(src)
    assert [(e.span.line, e.span.col) for e in p.syntax_errors] == [(1, 14)]
    assert [type(s).__name__ for s in p.statements] == ["Assign", "Invalid", "Assign"]
    assert evaluate(src, ["ab"])["results"]["b"]["values"] == [[1, 2]]


def test_in_a_def_that_never_closes_parsing_resumes_at_the_error():
    """The unclosed def is not a block whose body could hide what follows: the rest of the line parses."""
    src = "def f(x) {\n  y = +; z = indices;\nw = indices;\n"
    p = parse(src)
    assert [(e.message, e.span.line, e.span.col) for e in p.syntax_errors] == [
        ("unexpected ';'; expected an expression", 2, 8)]
    results = evaluate(src, ["ab"])["results"]
    assert results["z"]["values"] == [[0, 1]] and results["w"]["values"] == [[0, 1]]


def test_the_documented_caps():
    assert (MAX_RECOVERIES, MAX_SYNTAX_ERRORS) == (20, 200)
