"""Pass 1, validate (engine/compiler/validate.py), alone: the vocabulary, BOS, max_len and encodings it
accepts or refuses, and which s-op it picks as the output."""
from __future__ import annotations

import pytest

from rasplay.engine import RaspError
from rasplay.engine.compiler.validate import CompileLimits

from support.compiler_stages import node, validated

TWO = "a = tokens == \"a\";\nb = indices + 1;\nsel = select(indices, indices, ==);\n"


def refusal(**kw) -> RaspError:
    with pytest.raises(RaspError) as info:
        validated(**kw)
    return info.value


def test_a_string_vocabulary_is_one_token_per_character_a_list_gives_tokens():
    assert validated(TWO, vocab="abc").vocab == ["a", "b", "c"]
    assert validated(TWO, vocab=[3, 1, 2]).vocab == [3, 1, 2]
    assert validated(TWO, vocab=[3, 1, 2]).vocab_array.dtype.kind == "i"


@pytest.mark.parametrize("kw, says", [
    ({"vocab": ""}, "vocabulary is empty"),
    ({"vocab": "aba"}, "lists a token twice"),
    ({"vocab": [1, "1"]}, "mix int and str"),
    ({"vocab": [1, 1.0]}, None),                      # 1 and 1.0 are two tokens (their reprs differ)
    ({"vocab": "ab", "bos": "a"}, "also in the vocabulary"),
    ({"bos": ""}, "non-empty string"),
    ({"max_len": 0}, "max_len must be an int from 1"),
    ({"max_len": True}, "max_len must be an int from 1"),
    ({"max_len": 65, "limits": CompileLimits(max_len=64)}, "from 1 to 64"),
    ({"vocab": "abcd", "limits": CompileLimits(max_vocab=3)}, "the compiler's limit is 3"),
    ({"encodings": {"b": "onehot"}}, "unknown encoding"),
    ({"encodings": {"nope": "numerical"}}, "does not define"),
])
def test_inputs_it_refuses_with_a_reason(kw, says):
    if says is None:
        validated(TWO, **kw)
        return
    assert says in refusal(source=TWO, **kw).message


def test_max_len_at_the_limit_is_accepted():
    assert validated(TWO, max_len=64, limits=CompileLimits(max_len=64)).max_len == 64


def test_the_output_is_the_header_s_op_else_the_last_s_op():
    assert validated(TWO).output_name == "b"
    assert validated("# output: a\n" + TWO).output_name == "a"
    assert validated(TWO, "a").output_name == "a"


def test_a_name_defined_twice_compiles_its_last_definition():
    program = validated("x = indices;\nx = indices + 1;\n", "x")
    assert program.output is node(program, "x") and program.output.kind == "map"


def test_a_selector_output_is_refused_with_its_line():
    err = refusal(source=TWO, output="sel")
    assert "is a selector" in err.message and err.span.line == 3


def test_an_unknown_output_lists_the_programs_s_ops():
    err = refusal(source=TWO, output="c")
    assert "no s-op named 'c'" in err.message and "a, b" in err.message


def test_a_program_error_is_refused_at_its_line():
    err = refusal(source="a = tokens;\nb = nothing + 1;\n")
    assert err.span.line == 2 and "nothing" in err.message
