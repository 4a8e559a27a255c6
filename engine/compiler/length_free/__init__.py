"""Length-free compilation: programs in the counting/temporal fragment (engine.dialect) -> sublayers whose
weights do not depend on the input length, run at any length (docs/every_length.md).

    validate -> type (dialect) -> refuse outside the fragment -> build sublayers -> model
"""
from __future__ import annotations

import time

from ...dialect import dialect_document, span_of, type_program
from ...lang.errors import RaspError
from ..validate import DEFAULT_COMPILE_LIMITS, validate_program
from .build import Builder
from .length_free_model import LengthFreeModel
from .study import length_study


def compile_length_free(source: str, output: str | None = None, *, vocab, bos: str = "<bos>", causal: bool = False,
                        limits=None, eval_limits=None, load_dirs=None) -> LengthFreeModel:
    """A model whose output on "BOS + input" equals the evaluator's value of `output` on every input over
    `vocab`, of any length. Refused (a RaspError naming the line) when the program is outside the
    length-free fragment, with the dialect check's reason; with causal=True, also when a selector may look
    ahead."""
    start = time.perf_counter()
    program = validate_program(source, output, vocab, 1, bos, None, limits or DEFAULT_COMPILE_LIMITS, eval_limits,
                               load_dirs)
    typed = type_program(program.interp, program.output)
    doc = dialect_document(program.interp, program.output_name, typed)
    if typed.outside is not None:
        raise RaspError(f"length-free compilation needs the length-free fragment: {typed.outside.message}",
                        span_of(typed.outside.node), "compile")
    if causal and typed.causal_reason is not None:
        node, reason = typed.causal_reason
        raise RaspError(f"causal mode: {reason}; a causal model needs every selector to look only at the "
                        f"query's position and before it", span_of(node), "compile")
    built = Builder(program, typed).build()
    if causal:
        for op in built.ops:
            if getattr(op, "mask", None) == "none":
                op.mask = "past"        # a previous-position head reads only earlier keys anyway
    return LengthFreeModel(program, built, doc, causal, time.perf_counter() - start)


__all__ = ["compile_length_free", "LengthFreeModel", "length_study"]
