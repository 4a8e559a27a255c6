"""S-ops whose values mix types per position, as the original RASP lets them.

The original interpreter keeps each position's value as Python made it: an s-op may hold `1` at one
position and `True` or `0.5` at another (bools count as ints there), and on different inputs it may
hold values of different types (an aggregate's default where nothing is selected, the chosen branch
of an if/else). Only strings never share one input's s-op with other types: the original refuses
such a sequence, and so does rasplay, for that input.

Such values are numpy arrays of dtype object holding the Python values themselves. Operations on
them apply the Python operation per element (the original's semantics exactly); this is the one
place the evaluator loops in Python over positions, and only for s-ops whose types are mixed. Typed
arrays (bool, int, float, str) keep the vectorised paths of `elementwise`.
"""
from __future__ import annotations

import math
import operator

import numpy as np

INT_LIMIT = 2 ** 62
KIND_OF_TYPE = {bool: "b", int: "i", float: "f", str: "U"}
DTYPES = {"b": np.bool_, "i": np.int64, "f": np.float64, "U": np.str_}


def is_mixed(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "O"


def to_objects(a: np.ndarray, int_like: np.ndarray | None = None) -> np.ndarray:
    """An array as Python values (positions in int_like, float there, become ints, as the
    original holds them)."""
    out = a if a.dtype.kind == "O" else a.astype(object)
    if int_like is not None and int_like.any():
        out = out.copy()
        mask = np.broadcast_to(int_like, out.shape)
        out[mask] = [int(x) for x in out[mask].tolist()]
    return out


def objects(values: list, shape=None) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out if shape is None else out.reshape(shape)


def settle(a: np.ndarray) -> np.ndarray:
    """An object array whose values all have one type becomes a typed array again."""
    if a.dtype.kind != "O" or a.size == 0:
        return a
    kinds = {KIND_OF_TYPE.get(type(v)) for v in a.ravel().tolist()}
    if len(kinds) == 1 and None not in kinds:
        return np.array(a.tolist(), dtype=DTYPES[kinds.pop()]).reshape(a.shape)
    return a


def row_kinds(row: list) -> set:
    return {KIND_OF_TYPE.get(type(v), "?") for v in row}


def mixes_strings(kinds: set) -> bool:
    """Would the original refuse a sequence of values of these kinds? (Strings with anything else.)"""
    return "U" in kinds and len(kinds) > 1


def _power(a, b):
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and b * math.log2(abs(a)) > 64:
        raise OverflowError
    r = a ** b
    if isinstance(r, complex):
        raise ValueError("a negative number to a fractional power is not a real number")
    return r


_PY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "%": operator.mod,
    "^": _power,
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt, "<=": operator.le,
    ">=": operator.ge,
    "and": lambda a, b: bool(a) and bool(b), "or": lambda a, b: bool(a) or bool(b),
    "neg": operator.neg, "pos": operator.pos, "not": operator.not_, "round": round,
    "indicator": lambda a: 1 if a else 0,
    "if": lambda then, cond, orelse: then if cond else orelse,
}


def _check(r):
    if isinstance(r, bool) or isinstance(r, str):
        if isinstance(r, str) and len(r) > 100_000:
            raise OverflowError
        return r
    if isinstance(r, int):
        if abs(r) >= INT_LIMIT:
            raise OverflowError
        return r
    if isinstance(r, float):
        if not math.isfinite(r):
            raise OverflowError
        return r
    raise TypeError


def _describe(op: str, args: tuple, exc: Exception) -> str:
    if isinstance(exc, ZeroDivisionError):
        return "division by zero"
    if isinstance(exc, OverflowError):
        return "the result is too large or not finite (ints are 64-bit)"
    if isinstance(exc, ValueError) and str(exc):
        return str(exc)
    types = " and ".join(type(a).__name__ for a in args)
    return f"cannot apply {op} to {types}"


def apply(op: str, arrays: list) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """`op` per element, as Python computes it. Returns (values, failed-mask or None, message)."""
    fn = _PY[op]
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    cols = [np.broadcast_to(to_objects(a), shape).ravel().tolist() for a in arrays]
    out, bad, message = [], [], None
    for args in zip(*cols):
        try:
            out.append(_check(fn(*args)))
            bad.append(False)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError) as e:
            out.append(None)
            bad.append(True)
            message = message or _describe(op, args, e)
    if message is not None:  # a failed element holds a good one's value, so that it does not change the type
        filler = next((v for v in out if v is not None), 0)
        out = [filler if v is None else v for v in out]
    values = settle(objects(out, shape))
    if message is None:
        return values, None, None
    return values, np.array(bad, dtype=np.bool_).reshape(shape), message


def mean(values: list):
    """The original's mean of several selected values: their sum (in position order) times 1.0 over
    their number."""
    return sum(values) * 1.0 / len(values)
