"""Tracr's `Comparison` (the predicates of `Select`) and the `Predicate` type, part of the API of
interop/tracr_rasp.py, which re-exports both (interop/tracr_expr.py uses them)."""
from __future__ import annotations

import enum
from typing import Any, Callable

Value = Any


class Comparison(enum.Enum):
    """A predicate on (key, query)."""
    EQ = "=="
    LT = "<"
    LEQ = "<="
    GT = ">"
    GEQ = ">="
    NEQ = "!="
    TRUE = "True"
    FALSE = "False"

    def __call__(self, key: Value, query: Value) -> bool:
        if key is None:
            raise ValueError("key is None!")
        if query is None:
            raise ValueError("query is None!")
        return _COMPARE[self](key, query)


_COMPARE = {
    Comparison.EQ: lambda k, q: k == q, Comparison.LT: lambda k, q: k < q,
    Comparison.LEQ: lambda k, q: k <= q, Comparison.GT: lambda k, q: k > q,
    Comparison.GEQ: lambda k, q: k >= q, Comparison.NEQ: lambda k, q: k != q,
    Comparison.TRUE: lambda k, q: True, Comparison.FALSE: lambda k, q: False,
}
Predicate = Callable[[Value, Value], bool]
