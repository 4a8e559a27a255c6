"""The front end: grammar, spans, precedence as in the original REPL, syntax errors and recovery."""
from rasplay.engine.lang import ast
from rasplay.engine.lang.parser import parse

from support.evaluation import diagnostics, value


def test_several_statements_per_line_and_comments():
    p = parse("a = 1; b = 2;  # two\n# only a comment\nc = a;")
    assert [type(s).__name__ for s in p.statements] == ["Assign", "Assign", "Assign"]
    assert not p.syntax_errors


def test_every_node_has_a_span():
    p = parse("x = select(indices, length - indices - 1, ==);")
    sel = p.statements[0].values[0]
    assert isinstance(sel, ast.Select)
    assert (sel.span.line, sel.span.col, sel.span.end_col) == (1, 5, 46)
    opp = sel.queries
    assert opp.span.text(p.source) == "length - indices - 1"


def test_precedence_follows_the_original():
    # prefix operators bind tighter than binary ones; % below * and /; and/or share one level
    assert value("x = -2 ^ 2 + indices;", "a", "x") == [4]
    assert value("x = 7 * 3 % 4 + indices;", "a", "x") == [1]
    assert value("x = (indices == 0) or (indices == 1) and (indices == 2);", "abc", "x") == [False, False, False]
    # `in` binds loosest of all: below and/or and if/else
    assert isinstance(parse('x = a and b in c;').statements[0].values[0], ast.Contains)
    assert isinstance(parse('x = a if b else c in d;').statements[0].values[0], ast.Contains)


def test_string_and_number_literals():
    assert value("x = 1.5 + .5 + 2e1 + indices;", "ab", "x") == [22.0, 23.0]
    assert value("x = 'single' + tokens;", "ab", "x") == ["singlea", "singleb"]


def test_repl_commands_are_accepted():
    p = parse('set example "hey"\nshow example\nfull seq display on\nexamples off\nx = indices;')
    assert not p.syntax_errors
    assert isinstance(p.statements[0], ast.SetExample)


def test_repl_words_stay_names():
    assert value("full = 2; set = 3; examples = full + set + indices;", "a", "examples") == [5]


def test_syntax_error_names_expected_token_and_place():
    (d,) = diagnostics("x = (1 + 2;\n")
    assert d["kind"] == "syntax" and (d["line"], d["col"]) == (1, 11)
    assert "expected ')'" in d["message"]


def test_missing_semicolon_is_reported_and_the_rest_runs():
    src = "a = indices\nb = a + 1;\n"
    (d,) = diagnostics(src)
    assert d["message"] == "missing ';' at the end of line 1" and d["line"] == 1
    assert value(src, "ab", "b") == [1, 2]


def test_a_broken_statement_does_not_hide_the_others():
    src = "a = indices;\nb = a +* 2;\nc = a * 3;\n"
    ds = diagnostics(src)
    assert [d["line"] for d in ds] == [2]
    assert value(src, "ab", "c") == [0, 3]


def test_unterminated_string_and_bad_character():
    (d,) = diagnostics('x = "abc;\n')
    assert "unterminated string" in d["message"] and d["line"] == 1 and d["col"] == 5
    (d,) = diagnostics("x = 1 @ 2;")
    assert d["message"] == "unexpected character '@'" and d["col"] == 7


def test_program_ending_early():
    (d,) = diagnostics("def f(a) { return a;")
    assert "ends too early" in d["message"] and "'}'" in d["message"]


def test_select_needs_a_comparison():
    (d,) = diagnostics("s = select(indices, indices, +);")
    assert "'=='" in d["message"] and d["col"] == 30
