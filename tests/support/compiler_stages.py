"""The compiler's passes run one at a time on a small program, for the per-pass unit tests
(tests/test_compiler_<pass>.py): each stage is the input of the next, as engine.compile chains them."""
from __future__ import annotations

from rasplay.engine.compiler.encodings import choose_encodings
from rasplay.engine.compiler.extract import extract_graph
from rasplay.engine.compiler.validate import DEFAULT_COMPILE_LIMITS, validate_program
from rasplay.engine.compiler.value_sets import infer_value_sets


def validated(source: str, output: str | None = None, vocab="abc", max_len: int = 4, bos: str = "<bos>",
              encodings: dict | None = None, limits=DEFAULT_COMPILE_LIMITS):
    return validate_program(source, output, vocab, max_len, bos, encodings, limits)


def extracted(source: str, output: str | None = None, **kw):
    program = validated(source, output, **kw)
    return program, extract_graph(program)


def value_sets(source: str, output: str | None = None, **kw):
    program, graph = extracted(source, output, **kw)
    return program, graph, infer_value_sets(program, graph)


def planned(source: str, output: str | None = None, **kw):
    program, graph, vs = value_sets(source, output, **kw)
    return program, graph, vs, choose_encodings(program, graph, vs)


def node(program, name: str):
    """The graph node a top-level name is bound to."""
    return next(d.value for d in program.interp.definitions if d.name == name)
