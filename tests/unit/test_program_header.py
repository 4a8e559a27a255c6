"""The program header's parser (engine/header.py) on the lines mutation testing found unpinned:
a comment without a key, and an indented line that looks like a key (a continuation, not a field)."""
from rasplay.engine.header import header_output, parse_header


def test_a_comment_without_a_key_before_any_field_is_skipped():
    assert parse_header("# just a note\n# output: prev\n") == {"output": "prev"}


def test_an_indented_key_continues_the_field_before_it():
    source = "# description: one\n#   output: not_this\nx = tokens;\n"
    assert parse_header(source) == {"description": "one output: not_this"}
    assert header_output(source) is None


def test_the_header_ends_at_the_first_line_that_is_not_a_comment():
    assert parse_header("x = 1;\n# output: late\n") == {}
    assert parse_header("# output: a b\n") == {"output": "a b"} and header_output("# output: a b\n") is None
    assert header_output("# output:  spaced  \n") == "spaced"


def test_an_empty_comment_line_adds_nothing_to_a_field():
    assert parse_header("# title: Shift\n#\n# output: x\n") == {"title": "Shift", "output": "x"}
