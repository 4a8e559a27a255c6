"""`tracr.compiler.validating` under rasplay's alias: which expressions Tracr's compiler cannot compile,
and why (the rules of Tracr's documentation; rasplay's own code). rasplay's compiler accepts more
(see docs/interop.md); these checks answer what *Tracr* would refuse, for programs meant for both.

    static_validate(program)      -> [TracrUnsupportedExpr(expr, reason)]   (encodings and defaults)
    dynamic_validate(program, xs) -> [...]   (aggregates that average where Tracr copies, or average
                                              values other than 0 and 1, on the input xs)
    validate(program, xs)         -> both
"""
from __future__ import annotations

from dataclasses import dataclass

from . import tracr_eval
from . import tracr_rasp as rasp


@dataclass
class TracrUnsupportedExpr:
    expr: object
    reason: str


def _walk(program):
    seen, stack, out = set(), [program], []
    while stack:
        e = stack.pop()
        if e.unique_id in seen:
            continue
        seen.add(e.unique_id)
        out.append(e)
        stack.extend(e.children)
    return out


def _static(expr) -> TracrUnsupportedExpr | None:
    if isinstance(expr, (rasp.TokensType, rasp.IndicesType)) and rasp.is_numerical(expr):
        return TracrUnsupportedExpr(expr, f"{expr.name} must be categorical.")
    if isinstance(expr, rasp.Select):
        for side, sop in (("keys", expr.keys), ("queries", expr.queries)):
            if not rasp.is_categorical(sop):
                return TracrUnsupportedExpr(expr, f"Select {side} must be categorical.")
    if isinstance(expr, rasp.Aggregate):
        if rasp.get_encoding(expr) != rasp.get_encoding(expr.sop):
            return TracrUnsupportedExpr(expr, "An aggregate's output encoding must match its input encoding "
                                              f"(output {rasp.get_encoding(expr).value}, input "
                                              f"{rasp.get_encoding(expr.sop).value}).")
        if rasp.is_categorical(expr) and expr.default is not None:
            return TracrUnsupportedExpr(expr, "Categorical aggregate only supports None as default value.")
        if rasp.is_numerical(expr) and expr.default != 0:
            return TracrUnsupportedExpr(expr, "Numerical aggregate only supports 0 as default value.")
    if isinstance(expr, rasp.LinearSequenceMap):
        if not all(rasp.is_numerical(x) for x in (expr.fst, expr.snd, expr)):
            return TracrUnsupportedExpr(expr, "LinearSequenceMap only supports numerical inputs/outputs.")
    elif isinstance(expr, rasp.SequenceMap):
        if not all(rasp.is_categorical(x) for x in (expr.fst, expr.snd, expr)):
            return TracrUnsupportedExpr(expr, "(Non-linear) SequenceMap only supports categorical inputs/outputs.")
    return None


def static_validate(program) -> list:
    return [u for u in (_static(e) for e in _walk(program)) if u is not None]


def _subset(a: list, b: list) -> bool:
    try:
        return set(a) <= set(b)
    except TypeError:
        return all(any(x == y for y in b) for x in a)


def dynamic_validate(program, xs) -> list:
    out = []
    for e in _walk(program):
        if not isinstance(e, rasp.Aggregate):
            continue
        agg_in, agg_out = tracr_eval.evaluate(e.sop, xs), tracr_eval.evaluate(e, xs)
        if rasp.is_categorical(e) and not _subset(agg_out, list(agg_in) + [None]):
            out.append(TracrUnsupportedExpr(e, "Categorical aggregate does not support Selectors with width > 1 "
                                               "that require aggregation (eg. averaging)."))
        if rasp.is_numerical(e) and not set(agg_in) <= {0, 1}:
            out.append(TracrUnsupportedExpr(e, f"Numerical aggregate only supports binary inputs 0, 1. But got "
                                               f"{set(agg_in)}."))
    return out


def validate(program, xs) -> list:
    return static_validate(program) + dynamic_validate(program, xs)


class DynamicValidationEvaluator:
    """Tracr's class of that name: evaluate() also collects `unsupported_exprs`."""

    def __init__(self):
        self.unsupported_exprs: list = []

    def evaluate(self, expr, xs):
        self.unsupported_exprs.extend(dynamic_validate(expr, xs))
        return tracr_eval.evaluate(expr, xs)
