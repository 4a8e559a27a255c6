"""The built-in functions: aggregate, aggregate_sum (a rasplay extension), selector_width, round, indicator, range, zip, len.

Each takes (interp, args, spans, span): the Interpreter (interpreter.py) that calls it, the argument
values, their spans and the call's span."""
from __future__ import annotations

from typing import Callable

from .. import elementwise
from ..lang.errors import RaspError, Span
from ..program import Aggregate, AggregateSum, Selector, SelectorWidth, SOp
from .atoms import ATOM_TYPES, a_type
from .scope import Builtin, Function


def _arity(name: str, args: list, low: int, high: int, span: Span):
    if not low <= len(args) <= high:
        want = str(low) if low == high else f"{low} to {high}"
        raise RaspError(f"{name} takes {want} arguments, given {len(args)}", span, "type")


def _b_aggregate(interp, args, spans, span):
    _arity("aggregate", args, 2, 3, span)
    sel, values = args[0], args[1]
    default = args[2] if len(args) == 3 else 0
    if not isinstance(sel, Selector):
        raise RaspError(f"the first argument of aggregate must be a selector, not {a_type(sel)}",
                        spans[0], "type")
    sop = interp.as_sop(values, spans[1], "the second argument of aggregate")
    if isinstance(default, (SOp, Selector, Function, Builtin)):
        raise RaspError(f"the default of aggregate must be a value, not {a_type(default)}", spans[2], "type")
    if isinstance(default, ATOM_TYPES):
        elementwise.as_array(default)
    else:  # a list or dict: the original accepts it; an input where some query selects nothing fails
        default = _frozen(default)
    return interp.add(Aggregate(sel, sop, default, span=span), span)


def _b_aggregate_sum(interp, args, spans, span):
    _arity("aggregate_sum", args, 2, 2, span)
    if not isinstance(args[0], Selector):
        raise RaspError(f"the first argument of aggregate_sum must be a selector, not {a_type(args[0])}",
                        spans[0], "type")
    sop = interp.as_sop(args[1], spans[1], "the second argument of aggregate_sum")
    return interp.add(AggregateSum(args[0], sop, span=span), span)


def _frozen(value):
    """A list or dict default, as a hashable value (graph nodes are interned by their fields)."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _b_selector_width(interp, args, spans, span):
    _arity("selector_width", args, 1, 1, span)
    if not isinstance(args[0], Selector):
        raise RaspError(f"selector_width needs a selector, not {a_type(args[0])}", spans[0], "type")
    return interp.add(SelectorWidth(args[0], span=span), span)


def _unary_builtin(name: str):
    def fn(interp, args, spans, span):
        _arity(name, args, 1, 1, span)
        x = args[0]
        if isinstance(x, SOp):
            return interp.elementwise(name, [x], span)
        if isinstance(x, bool):
            x = int(x)
        if name == "indicator":
            if not isinstance(x, ATOM_TYPES):
                raise RaspError(f"indicator needs an s-op or a value, not {a_type(x)}", spans[0], "type")
            return 1 if x else 0
        if not isinstance(x, (int, float)):
            raise RaspError(f"round needs a number or an s-op, not {a_type(x)}", spans[0], "type")
        try:
            return round(x)
        except (OverflowError, ValueError):
            raise RaspError(f"cannot round {x}", spans[0], "value") from None
    return fn


def _b_range(interp, args, spans, span):
    _arity("range", args, 1, 3, span)
    for a, s in zip(args, spans):
        if isinstance(a, bool) or not isinstance(a, int):
            raise RaspError(f"range takes ints, not {a_type(a)}", s, "type")
    try:
        r = range(*args)
    except ValueError:
        raise RaspError("range's step cannot be 0", span, "value") from None
    if len(r) > interp.limits.max_collection:
        raise RaspError(f"range of {len(r)} elements is over the limit of {interp.limits.max_collection}",
                        span, "limit")
    return list(r)


def _b_zip(interp, args, spans, span):
    for a, s in zip(args, spans):
        if not isinstance(a, (list, tuple, str)):
            raise RaspError(f"zip takes lists, not {a_type(a)}", s, "type")
    return [list(t) for t in zip(*args)]


def _b_len(interp, args, spans, span):
    _arity("len", args, 1, 1, span)
    x = args[0]
    if isinstance(x, SOp):
        raise RaspError("len takes a list; the length of the input is the s-op 'length'", spans[0], "type")
    if not isinstance(x, (list, tuple, dict, str)):
        raise RaspError(f"len takes a list, dict or string, not {a_type(x)}", spans[0], "type")
    return len(x)


BUILTINS: dict[str, Callable] = {
    "aggregate": _b_aggregate,
    "aggregate_sum": _b_aggregate_sum,
    "selector_width": _b_selector_width,
    "round": _unary_builtin("round"),
    "indicator": _unary_builtin("indicator"),
    "range": _b_range,
    "zip": _b_zip,
    "len": _b_len,
}
