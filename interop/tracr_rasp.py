"""The API of Tracr's `rasp` module, written for rasplay (no Tracr code).

A Tracr program is Python that builds an expression graph from the classes of interop/tracr_expr.py
(`tokens`, `indices`, `length`, `Map`, `SequenceMap`, `Select`, `Aggregate`, ..., the annotations and
the operator overloads), all re-exported here with `Comparison` and `Predicate`
(interop/tracr_comparison.py).

`evaluate(expr, xs)` (and calling an expression on a list) follows Tracr's evaluation rules directly
(interop/tracr_eval.py): the reference that compiled Tracr programs are checked against. This module joins
the two: the rules read the expression classes, and the classes answer `expr(xs)` through the rules this
module plugs in, so no module of the three imports one that imports it.
"""
from __future__ import annotations

from typing import Sequence

from . import tracr_eval as _rules
from . import tracr_expr as _expr
from .tracr_comparison import Comparison, Predicate  # noqa: F401  (part of this module's API)
from .tracr_expr import *  # noqa: F401,F403  (the expression classes, annotations and helpers)
from .tracr_expr import DEFAULT_ANNOTATORS, RASPExpr, Value, annotate  # noqa: F401  (named for readers)


def evaluate(expr: RASPExpr, xs: Sequence[Value]):
    """The value of `expr` on the input `xs` by Tracr's rules (interop/tracr_eval.py, numpy, no tables):
    a list (s-op, None where Tracr gives None) or a list of bool rows (selector). Raises what Tracr raises."""
    return _rules.evaluate(expr, xs)


_expr._use_evaluator(evaluate)


class DefaultRASPEvaluator:
    """Tracr's evaluator interface, answered by rasplay's evaluator."""

    def evaluate(self, expr: RASPExpr, xs: Sequence[Value]):
        return evaluate(expr, xs)


RASPEvaluator = DefaultRASPEvaluator
