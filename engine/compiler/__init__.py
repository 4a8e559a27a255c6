"""The RASP compiler: a program -> transformer weights that reproduce the evaluator exactly.

    validate -> extract graph [-> check causal] -> infer value sets -> choose encodings -> allocate residual
             -> build heads -> build MLPs -> assemble

Each pass is a module of its own name; docs/compiler.md explains the construction.
"""
from __future__ import annotations

import time

from ..lang.errors import RaspError
from ..limits import Limits
from ..numpy_transformer import NumpyTransformer
from .assemble import assemble_model, describe_heads, describe_mlps
from .causal import check_causal
from .compiled import DEFAULT_BETA, CompiledModel
from .encodings import choose_encodings
from .extract import extract_graph
from .heads import build_heads
from .mlps import build_mlps
from .residual import allocate_residual, layout
from .reuse import apply_reuse
from .validate import DEFAULT_COMPILE_LIMITS, CompileLimits, validate_program
from .value_sets import infer_value_sets, rounding_warnings


def compile(source: str, output: str | None = None, *, vocab, max_len: int | None = None, bos: str = "<bos>",
            encodings: dict | None = None, limits: CompileLimits | None = None, load_dirs=None,
            eval_limits: Limits | None = None, causal: bool = False, length_free: bool = False,
            reuse_residual: bool = True):
    """Compile `source` so that the model's output on "BOS + input" equals the evaluator's value of
    `output` (default: the program's default output, its `# output:` header or else its last s-op)
    on every input over `vocab` of length 1..max_len.

    vocab: a string (one token per character) or a list of tokens. encodings: {s-op name:
    "categorical" | "numerical"} overrides. Raises RaspError (with the line of the construct)
    when the program cannot be compiled. Deterministic.

    causal: compile to a causal (autoregressive) model, whose output at position i is the evaluator's
    value at i on the prefix of length i + 1; refused (naming the selector) unless every selector
    looks only backwards.

    length_free: compile a program of the length-free fragment (engine.dialect) to a model whose weights
    do not depend on the input length and that runs at any length (max_len is not used; docs/every_length.md);
    a program outside the fragment is refused with the dialect check's reason.

    reuse_residual: give the dimensions of a value with no later reader to a value written later (erased by
    MLP units first; engine/compiler/reuse.py) when that makes the residual narrower; False: one dimension
    range per block for the whole model.
    """
    if length_free:
        from .length_free import compile_length_free
        if encodings:
            raise RaspError("encodings apply to max_len models; a length-free model chooses its own", None, "input")
        return compile_length_free(source, output, vocab=vocab, bos=bos, causal=causal, limits=limits,
                                   eval_limits=eval_limits, load_dirs=load_dirs)
    if max_len is None:
        raise RaspError("max_len is needed (or compile with length_free for a program in the length-free "
                        "fragment)", None, "input")
    start = time.perf_counter()
    limits = limits or DEFAULT_COMPILE_LIMITS
    program = validate_program(source, output, vocab, max_len, bos, encodings, limits, eval_limits, load_dirs)
    graph = extract_graph(program)
    if causal:
        check_causal(program, graph)
    values = infer_value_sets(program, graph)
    plan = choose_encodings(program, graph, values)
    width = allocate_residual(plan)
    heads = build_heads(plan, width)
    mlps = build_mlps(plan, width, plan.name_of, limits)
    output_values = values.values.get(program.output.id) if plan.output.encoding == "numerical" else None
    config, weights = assemble_model(program, plan, width, heads, mlps, DEFAULT_BETA, causal, output_values)
    offset = 1 if plan.pre_mlp else 0
    live, reuse_doc = {}, None
    if reuse_residual:
        reuse, reuse_doc = apply_reuse(plan, config, weights, heads, mlps, offset)
        if reuse is not None:
            width, live = reuse.width, reuse.live
            config, weights = assemble_model(program, plan, width, heads, mlps, DEFAULT_BETA, causal, output_values)
    model = CompiledModel(program, graph, plan, NumpyTransformer(config, weights),
                          describe_heads(plan, heads, plan.name_of),
                          describe_mlps(plan, mlps, config["n_layers"]),
                          layout(plan, offset, live, config["n_layers"]), plan.notes,
                          time.perf_counter() - start, values.values.get(program.output.id), live)
    model.warnings = rounding_warnings(program, graph, values)
    model.residual_reuse = reuse_doc
    return model


def compile_spec(spec: dict, **options) -> CompiledModel:
    """compile() from a stored model spec (the REST API's compile request): {"source", "output"?,
    "vocab", "max_len", "bos"?, "causal"?, "length_free"?, "reuse_residual"?}."""
    return compile(spec["source"], spec.get("output"), vocab=spec["vocab"], max_len=spec.get("max_len"),
                   bos=spec.get("bos", "<bos>"), causal=bool(spec.get("causal", False)),
                   length_free=bool(spec.get("length_free", False)),
                   reuse_residual=bool(spec.get("reuse_residual", True)), **options)


__all__ = ["compile", "compile_spec", "CompiledModel", "CompileLimits", "DEFAULT_COMPILE_LIMITS"]
