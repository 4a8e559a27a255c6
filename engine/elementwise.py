"""Elementwise operations on numpy arrays, with the semantics of Python (which the original RASP
interpreter uses per element), vectorised.

Values are numpy arrays whose dtype kind is the RASP type: 'b' bool, 'i' int (int64), 'f' float
(float64), 'U' str. `apply(op, operands)` broadcasts its operands and returns an OpResult:
the values, and, where some elements fail (division by zero, a missing dict key), a mask of
those elements and a message. A type error of the whole operation raises RaspError(kind="type").

The evaluator applies these to (batch, n) arrays; the compiler applies them to value sets.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import mixed as _mixed
from .distinct import distinct
from .lang.errors import RaspError
from .mixed import objects

TYPE_NAMES = {"b": "bool", "i": "int", "f": "float", "U": "str", "O": "mixed"}
NUMERIC = "bif"
INT_LIMIT = float(2 ** 62)  # int results beyond this are reported as overflow


@dataclass
class OpResult:
    values: np.ndarray
    bad: np.ndarray | None = None   # bool mask of failed elements (same shape as values)
    message: str | None = None      # what went wrong there

    def merge_bad(self, bad: np.ndarray, message: str) -> "OpResult":
        if not bad.any():
            return self
        if self.bad is None:
            return OpResult(self.values, bad, message)
        return OpResult(self.values, self.bad | bad, self.message)


def type_of(a: np.ndarray) -> str:
    return TYPE_NAMES.get(a.dtype.kind, a.dtype.kind)


def _type_error(message: str) -> RaspError:
    return RaspError(message, None, "type")


def as_array(value: Any) -> np.ndarray:
    """A Python atom (or array) as a typed numpy array."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, bool):
        return np.asarray(value, dtype=np.bool_)
    if isinstance(value, int):
        if abs(value) >= 2 ** 63:
            raise RaspError(f"the integer {value} does not fit in 64 bits", None, "value")
        return np.asarray(value, dtype=np.int64)
    if isinstance(value, float):
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, str):
        return np.asarray(value, dtype=np.str_)
    raise _type_error(f"a {type(value).__name__} cannot be used as an element of an s-op")


def array_from_values(values: list, what: str = "values", mixed: bool = False) -> np.ndarray:
    """A typed array from Python atoms, all of one type (ints and floats mix to float). With mixed,
    values of several types give an object array holding them as they are (see engine/mixed.py)."""
    kinds = {_atom_kind(v) for v in values}
    if not kinds:
        return np.zeros(0, dtype=np.int64)
    if None in kinds:
        bad = next(v for v in values if _atom_kind(v) is None)
        raise _type_error(f"{what} must be numbers, strings or bools, not {type(bad).__name__}")
    if mixed and len(kinds) > 1:
        if any(isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 2 ** 63 for v in values):
            raise RaspError(f"{what}: an integer does not fit in 64 bits", None, "value")
        return objects([v.item() if isinstance(v, np.generic) else v for v in values])
    kind = _join_kinds(kinds, what)
    if kind == "i" and any(abs(v) >= 2 ** 63 for v in values):
        raise RaspError(f"{what}: an integer does not fit in 64 bits", None, "value")
    return np.array(values, dtype={"b": np.bool_, "i": np.int64, "f": np.float64, "U": np.str_}[kind])


def _atom_kind(v) -> str | None:
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if isinstance(v, (int, np.integer)):
        return "i"
    if isinstance(v, (float, np.floating)):
        return "f"
    if isinstance(v, (str, np.str_)):
        return "U"
    return None


def _join_kinds(kinds: set, what: str) -> str:
    if len(kinds) == 1:
        return next(iter(kinds))
    if kinds <= {"i", "f"}:
        return "f"
    names = " and ".join(sorted(TYPE_NAMES[k] for k in kinds))
    raise _type_error(f"{what} mix {names}; an s-op's values must share one type")


def join_types(a: np.ndarray, b: np.ndarray, what: str) -> str:
    """The common type of two arrays for a choice between them (if/else, and, or)."""
    ka, kb = a.dtype.kind, b.dtype.kind
    if ka == kb:
        return ka
    if ka in NUMERIC and kb in NUMERIC:
        return "f" if "f" in (ka, kb) else "i"
    raise _type_error(f"{what} have types {TYPE_NAMES[ka]} and {TYPE_NAMES[kb]}; "
                      "an s-op's values must share one type")


def cast(a: np.ndarray, kind: str) -> np.ndarray:
    if a.dtype.kind == kind:
        return a
    return a.astype({"b": np.bool_, "i": np.int64, "f": np.float64, "U": np.str_}[kind])


def truthy(a: np.ndarray) -> np.ndarray:
    """Python truthiness per element."""
    k = a.dtype.kind
    if k == "b":
        return a
    if k in "if":
        return a != 0
    if k == "U":
        return np.strings.str_len(a) > 0
    if k == "O":
        return np.array([bool(v) for v in a.ravel().tolist()], dtype=np.bool_).reshape(a.shape)
    raise _type_error(f"cannot take the truth of {type_of(a)} values")


def _numeric(a: np.ndarray) -> np.ndarray:
    return a.astype(np.int64) if a.dtype.kind == "b" else a


def _check_int_overflow(result: OpResult, estimate: np.ndarray) -> OpResult:
    bad = ~np.isfinite(estimate) | (np.abs(estimate) >= INT_LIMIT)
    return result.merge_bad(bad, "integer overflow (ints are 64-bit)")


def _check_finite(result: OpResult) -> OpResult:
    if result.values.dtype.kind == "f":
        return result.merge_bad(~np.isfinite(result.values), "the result is not a finite number")
    return result


# ------------------------------------------------------------------ binary operations

_VERBS = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "%": "take the remainder of",
          "^": "raise"}


def _arith_type_error(op: str, a: np.ndarray, b: np.ndarray) -> RaspError:
    ta, tb = type_of(a), type_of(b)
    if op == "^":
        return _type_error(f"cannot raise {ta} to the power of {tb}")
    if op == "+" and "str" in (ta, tb):
        return _type_error(f"cannot add {ta} and {tb} (+ joins two strings, or adds two numbers)")
    return _type_error(f"cannot {_VERBS[op]} {ta} and {tb}")


def _arith(op: str, a: np.ndarray, b: np.ndarray) -> OpResult:
    ka, kb = a.dtype.kind, b.dtype.kind
    if op == "+" and ka == kb == "U":
        return OpResult(np.strings.add(a, b))
    if op == "*" and "U" in (ka, kb) and (ka + kb).replace("U", "", 1) in ("i", "b"):
        s, n = (a, b) if ka == "U" else (b, a)
        n = _numeric(n)
        big = n > 100_000
        res = np.strings.multiply(s, np.where(big, 0, np.maximum(n, 0)))
        return OpResult(res).merge_bad(np.broadcast_to(big, res.shape), "string repetition too long")
    if ka not in NUMERIC or kb not in NUMERIC:
        raise _arith_type_error(op, a, b)
    a, b = _numeric(a), _numeric(b)
    both_int = a.dtype.kind == "i" and b.dtype.kind == "i"
    with np.errstate(all="ignore"):
        if op in "+-*":
            fn = {"+": np.add, "-": np.subtract, "*": np.multiply}[op]
            res = OpResult(fn(a, b))
            if both_int:
                return _check_int_overflow(res, fn(a.astype(np.float64), b.astype(np.float64)))
            return _check_finite(res)
        if op == "/":
            zero = b == 0
            res = OpResult(np.true_divide(a, np.where(zero, 1, b)).astype(np.float64))
            res = res.merge_bad(np.broadcast_to(zero, res.values.shape), "division by zero")
            return _check_finite(res)
        if op == "%":
            zero = b == 0
            res = OpResult(np.mod(a, np.where(zero, 1, b)))
            return res.merge_bad(np.broadcast_to(zero, res.values.shape), "remainder of division by zero")
        if op == "^":
            return _power(a, b, both_int)
    raise _type_error(f"unknown operation {op}")


def _power(a: np.ndarray, b: np.ndarray, both_int: bool) -> OpResult:
    af, bf = a.astype(np.float64), b.astype(np.float64)
    shape = np.broadcast_shapes(a.shape, b.shape)
    zero_neg = np.broadcast_to((af == 0) & (bf < 0), shape)
    if both_int and not (b < 0).any():
        estimate = np.power(np.abs(af), bf)
        over = np.broadcast_to(~np.isfinite(estimate) | (estimate >= INT_LIMIT), shape)
        res = OpResult(np.power(a, np.where(over, 0, b)))
        return res.merge_bad(over, "integer overflow (ints are 64-bit)")
    complex_ = np.broadcast_to((af < 0) & (bf != np.floor(bf)), shape)
    safe_a = np.where(zero_neg | complex_, 1.0, af)
    res = OpResult(np.power(safe_a, bf))
    res = res.merge_bad(zero_neg, "0 cannot be raised to a negative power")
    res = res.merge_bad(complex_, "a negative number to a fractional power is not a real number")
    return _check_finite(res)


_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, ">": np.greater,
            "<=": np.less_equal, ">=": np.greater_equal}


def compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise comparison `a op b`, broadcasting, with Python's rules across types."""
    ka, kb = a.dtype.kind, b.dtype.kind
    if "O" in (ka, kb):
        values, bad, message = _mixed.apply(op, [a, b])
        if bad is not None:
            raise _type_error(message)
        return values.astype(np.bool_)
    comparable = (ka in NUMERIC and kb in NUMERIC) or (ka == kb == "U")
    if not comparable:
        if op in ("==", "!="):
            shape = np.broadcast_shapes(a.shape, b.shape)
            return np.full(shape, op == "!=", dtype=np.bool_)
        raise _type_error(f"cannot compare {type_of(a)} with {type_of(b)} using {op}")
    if ka == "b" and kb == "b" and op not in ("==", "!="):
        a, b = a.astype(np.int64), b.astype(np.int64)
    return _COMPARE[op](a, b)


def _choose(cond: np.ndarray, then: np.ndarray, orelse: np.ndarray, what: str) -> OpResult:
    kind = join_types(then, orelse, what)
    return OpResult(np.where(cond, cast(then, kind), cast(orelse, kind)))


# ------------------------------------------------------------------ unary operations

def _unary(op: str, a: np.ndarray) -> OpResult:
    k = a.dtype.kind
    if op == "not":
        return OpResult(~truthy(a))
    if op == "indicator":
        return OpResult(truthy(a).astype(np.int64))
    if k not in NUMERIC:
        word = {"neg": "negate", "pos": "apply unary + to", "round": "round"}[op]
        raise _type_error(f"cannot {word} {type_of(a)} values")
    a = _numeric(a)
    if op == "neg":
        return OpResult(np.negative(a))
    if op == "pos":
        return OpResult(a)
    if op == "round":
        if a.dtype.kind == "i":
            return OpResult(a)
        bad = ~np.isfinite(a) | (np.abs(a) >= INT_LIMIT)
        rounded = np.round(np.where(bad, 0.0, a)).astype(np.int64)  # np.round: half to even, like Python
        return OpResult(rounded).merge_bad(bad, "cannot round a number this large or not finite")
    raise _type_error(f"unknown operation {op}")


# ------------------------------------------------------------------ per-distinct-value operations

def per_value(a: np.ndarray, fn: Callable[[Any], Any], failure: str, what: str, mixed: bool = False,
              found: tuple | None = None) -> OpResult:
    """Apply a Python function to each distinct value of `a` (a handful, usually) and spread the
    results back: vectorised over positions, Python only per distinct value. `found`: `a`'s
    distinct(a.ravel()) where the caller has it already."""
    if a.size == 0:
        return OpResult(np.zeros(a.shape, dtype=np.int64))
    if found is not None and a.dtype.kind != "O" and len(found[1]) == a.size:
        uniques, inverse = found
    elif a.dtype.kind == "O":  # Python values of several types: distinct by (type, value), as 1 and True differ
        found: dict = {}
        inverse = np.array([found.setdefault((type(v), v), len(found)) for v in a.ravel().tolist()])
        uniques = objects([v for _, v in found])
    else:
        uniques, inverse = distinct(a.reshape(-1))
    results, failed = [], []
    for u in uniques.tolist():
        try:
            results.append(fn(u))
            failed.append(False)
        except (KeyError, IndexError, ValueError, TypeError, OverflowError):
            results.append(None)
            failed.append(True)
    good = [r for r, f in zip(results, failed) if not f]
    if good:
        filler = good[0]
        table = array_from_values([filler if f else r for r, f in zip(results, failed)], what, mixed=mixed)
    else:
        table = np.zeros(len(results), dtype=np.int64)
    out = OpResult(table[inverse].reshape(a.shape))
    if not any(failed):
        return out
    failed_arr = np.array(failed, dtype=np.bool_)
    bad_values = [u for u, f in zip(uniques.tolist(), failed) if f]
    shown = ", ".join(repr(v) for v in bad_values[:3]) + (", …" if len(bad_values) > 3 else "")
    return out.merge_bad(failed_arr[inverse].reshape(a.shape), failure.format(shown))


def _py_in(container) -> Callable:
    if isinstance(container, str):
        def contains(x):
            if not isinstance(x, str):
                raise TypeError
            return x in container
        return contains
    return lambda x: x in container


def _py_getitem(table) -> Callable:
    if isinstance(table, (list, tuple)):
        def get(i):
            if isinstance(i, float) or isinstance(i, str):
                raise TypeError
            return table[i]
        return get
    if isinstance(table, str):
        return lambda i: table[i]
    return lambda k: table[k]


def _to_int(x):
    if isinstance(x, str):
        return int(x.strip())
    if isinstance(x, float) and not np.isfinite(x):
        raise ValueError
    return int(x)


def _to_bool(x):
    """Python's bool(), as the original makes tokens_bool: a non-empty string is True ("0" too)."""
    return bool(x)


_CONVERSIONS = {
    "to_str": (str, "cannot be read as a string"),
    "to_int": (_to_int, "cannot be read as an int"),
    "to_float": (float, "cannot be read as a float"),
    "to_bool": (_to_bool, "cannot be read as a bool"),
}


# ------------------------------------------------------------------ entry point

def _mixed_choice(arrays: list) -> bool:
    """Do the branches of an if/else have types that only an object array holds (not int and float)?"""
    ka, kb = arrays[0].dtype.kind, arrays[2].dtype.kind
    return ka != kb and not (ka in "if" and kb in "if")


PER_VALUE_OPS = frozenset({"in", "getitem", "to_str", "to_int", "to_float", "to_bool"})   # one s-op operand


def apply(op: str, operands: list, mixed: bool = False, found: tuple | None = None) -> OpResult:
    """Apply elementwise `op` to operands (arrays or Python atoms; containers for in/getitem).
    mixed: the evaluator's semantics, where an s-op may hold values of several types (as in the
    original); without it (the compiler's value sets), such a mix is a type error. found: for the
    PER_VALUE_OPS, the s-op operand's distinct(values.ravel()) where the caller has it."""
    if op in ("in", "getitem"):
        if op == "in":
            x, container = operands
            return per_value(as_array(x), _py_in(container), "cannot test whether {} is in a string", "the results",
                             mixed, found)
        table, x = operands
        if isinstance(table, dict):
            failure = "no key {} in the dict"
        else:
            failure = f"{{}} is not an index of the {'list' if isinstance(table, list) else 'string'} " \
                      f"(of length {len(table)})"
        what = "dict" if isinstance(table, dict) else "list"
        return per_value(as_array(x), _py_getitem(table), failure, f"the {what}'s values", mixed, found)
    if op in _CONVERSIONS:
        fn, failure = _CONVERSIONS[op]
        (x,) = operands
        return _check_finite(per_value(as_array(x), fn, "the input token {} " + failure + f" (tokens_{op[3:]})",
                                       "converted tokens", mixed, found))
    arrays = [as_array(o) for o in operands]
    if mixed and any(a.dtype.kind == "O" for a in arrays) or (mixed and op == "if" and _mixed_choice(arrays)):
        values, bad, message = _mixed.apply(op, arrays)
        return OpResult(values, bad, message)
    if op == "if":
        then, cond, orelse = arrays
        return _choose(truthy(cond), then, orelse, "the two branches of if/else")
    if op in ("and", "or"):
        # as in the original RASP: with an s-op, `and`/`or` compare truth values and give bools
        a, b = arrays
        return OpResult(truthy(a) & truthy(b) if op == "and" else truthy(a) | truthy(b))
    if op in _COMPARE:
        return OpResult(compare(op, *arrays))
    if op in ("+", "-", "*", "/", "%", "^"):
        return _arith(op, *arrays)
    if op in ("neg", "pos", "not", "round", "indicator"):
        return _unary(op, *arrays)
    raise _type_error(f"unknown operation {op}")
