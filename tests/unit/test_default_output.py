"""A program's default output (its `# output:` header, else its last s-op) is read by one parser in the
engine, and the evaluation document, the compiler (library and CLI) and the trainer's task agree on it."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from rasplay import engine
from rasplay.engine.compiler.validate import DEFAULT_COMPILE_LIMITS, validate_program
from rasplay.engine.examples import load_examples
from rasplay.engine.header import header_output, parse_header
from rasplay.engine.program import SOp
from rasplay.engine.train.data import load_task

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = load_examples()
# examples whose header names an s-op other than the last one defined (the case the parsers disagreed on)
NOT_LAST = [e for e in EXAMPLES if e.output and e.output != [
    d.name for d in engine.interpret(e.source, engine.DEFAULT_LIMITS).definitions if isinstance(d.value, SOp)][-1]]


def test_header_fields_and_continuation_lines():
    source = ("# title: Shift\n# description: one line\n#   and its continuation\n# output: prev_token\n"
              "x = tokens;\n# output: not_header\n")
    assert parse_header(source) == {"title": "Shift", "description": "one line and its continuation",
                                    "output": "prev_token"}
    assert header_output(source) == "prev_token"


@pytest.mark.parametrize("source", [
    "x = tokens;\n# output: x\n",            # below the first statement: a comment, not a header
    "# output: two words\nx = tokens;",      # not a name
    "y = 1;  # output: y\nx = tokens;",      # not at the start of a line
])
def test_output_fields_that_are_not_headers(source):
    assert header_output(source) is None
    assert engine.evaluate(source, ["ab"])["output"] == "x"


def test_without_a_header_the_last_sop_is_the_default():
    doc = engine.evaluate("a = tokens;\ns = select(indices, indices, ==);\nb = indices;\nc = select(b, b, <);", ["ab"])
    assert doc["output"] == "b"
    assert engine.evaluate("s = select(indices, indices, ==);", ["ab"])["output"] is None


def test_a_header_naming_no_sop_is_reported_and_a_warning():
    doc = engine.evaluate("# output: nothing\nx = tokens;", ["ab"])
    assert doc["output"] == "nothing"
    assert any(d["severity"] == "warning" and "nothing" in d["message"] for d in doc["diagnostics"])


def test_several_examples_name_an_output_other_than_their_last_sop():
    assert len(NOT_LAST) >= 5 and "shift" in {e.id for e in NOT_LAST}


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_document_compiler_and_trainer_agree_on_the_default_output(example):
    assert example.output is not None, "every example names its output"
    doc = engine.evaluate(example.source, [example.input], input_format=example.input_format)
    assert doc["output"] == example.output
    vocab = "ab" if example.input_format == "str" else [0, 1]
    program = validate_program(example.source, None, vocab, 3, "<bos>", None, DEFAULT_COMPILE_LIMITS)
    assert program.output_name == example.output
    assert load_task(example.source).output == example.output


def test_rasplay_compile_uses_the_header():
    out = subprocess.run([sys.executable, "-m", "rasplay.cli", "compile", "examples/shift.rasp", "--vocab", "abc",
                          "--max-len", "4", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["summary"]["output"] == "prev_token"


def test_compile_spec_is_compile_of_the_spec():
    spec = {"source": (ROOT / "examples" / "shift.rasp").read_text(), "vocab": "ab", "max_len": 3}
    a, b = engine.compile_spec(spec).summary(), engine.compile(spec["source"], vocab="ab", max_len=3).summary()
    assert a["output"] == b["output"] == "prev_token"
    assert (a["layers"], a["residual_width"], a["params"]) == (b["layers"], b["residual_width"], b["params"])
