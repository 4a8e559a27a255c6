"""A name used before the program defines it (issue 32 item 8): `x = x + 1;` and a use above the definition
say "used before it is defined" with the line and column of the use (and the line of the definition), not
"'x' is not defined"; a name the program never defines still says "not defined"."""
from __future__ import annotations

import pytest

from rasplay.engine.evaluate import evaluate


def errors(source: str) -> list[tuple[str, int, int]]:
    doc = evaluate(source, ["ab"])
    return [(d["message"], d["line"], d["col"]) for d in doc["diagnostics"] if d["severity"] == "error"]


def test_a_name_used_in_its_own_first_definition():
    [(message, line, col)] = errors("x = x + 1;")
    assert (line, col) == (1, 5)
    assert message.startswith("'x' is used before it is defined: this statement defines it")


def test_a_name_used_above_its_definition_names_the_line_that_defines_it():
    [(message, line, col)] = errors("y = x + 1;\nx = indices;")
    assert (line, col) == (1, 5)
    assert message == "'x' is used before it is defined (on line 2): define it above its first use"


def test_a_function_called_before_a_name_it_reads_is_defined():
    [(message, line, col)] = errors("def f(a) {\n  return a + q;\n}\nw = f(indices);\nq = 2;")
    assert (line, col) == (2, 14)
    assert "'q' is used before it is defined (on line 5)" in message


@pytest.mark.parametrize("source", ["x = indices;\nx = x + 1;", "def f(a) { return a + q; }\nq = 2;\nw = f(indices);"])
def test_a_use_after_the_definition_runs(source):
    assert errors(source) == []


def test_a_name_never_defined_is_still_not_defined():
    assert errors("y = zz + 1;") == [("'zz' is not defined", 1, 5)]
