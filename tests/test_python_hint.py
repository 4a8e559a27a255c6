"""A pasted Tracr (Python) program (issue 32 item 8): the first diagnostic says it looks like Python and how
Tracr programs come in (the CLI's --tracr, docs/interop.md), at the first Python line; the program's own
syntax errors follow; a RASP program with a syntax error gets no such hint."""
from __future__ import annotations

import pytest

from rasplay.engine.evaluate import evaluate
from rasplay.engine.lang.python_hint import MESSAGE

TRACR = ("# length, as Tracr writes it\n"
         "from tracr.rasp import rasp\n"
         "def make_length():\n"
         "  all_true = rasp.Select(rasp.tokens, rasp.tokens, rasp.Comparison.TRUE)\n"
         "  return rasp.SelectorWidth(all_true)\n")


def test_a_tracr_program_is_told_it_looks_like_python_and_where_tracr_comes_in():
    diagnostics = evaluate(TRACR, ["ab"])["diagnostics"]
    first = diagnostics[0]
    assert (first["message"], first["line"], first["col"], first["severity"]) == (MESSAGE, 2, 1, "error")
    assert "--tracr" in first["message"] and "docs/interop.md" in first["message"]
    assert len(diagnostics) > 1   # its own syntax errors still come, with their lines


@pytest.mark.parametrize("line", ["import numpy as np", "def f(x):", "y = rasp.Aggregate(sel, x)"])
def test_each_kind_of_python_line_gives_the_hint(line):
    assert evaluate(f"{line}\n", ["ab"])["diagnostics"][0]["message"] == MESSAGE


@pytest.mark.parametrize("source", ["x = indices\ny = x + 1;", "def f(a) { return a; }\nx = f(indices;",
                                    "# as rasp.Select(...) in Tracr\nx = (indices;"])
def test_rasp_with_a_syntax_error_gets_no_python_hint(source):
    diagnostics = evaluate(source, ["ab"])["diagnostics"]
    assert diagnostics and all(d["message"] != MESSAGE for d in diagnostics)


def test_a_program_that_parses_gets_no_hint_even_with_a_python_looking_comment():
    assert evaluate("# import this\nx = indices;", ["ab"])["diagnostics"] == []
