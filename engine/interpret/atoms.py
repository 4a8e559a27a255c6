"""Python-level values (atoms, lists, dicts) with Python's semantics: operators, indexing, the static
type of a value, and how values and operators are named in messages."""
from __future__ import annotations

import math
import operator

from ..lang import ast
from ..lang.errors import RaspError, Span
from ..limits import Limits
from ..program import Aggregate, Full, IndicesInput, Map, Selector, SelectorWidth, SequenceMap, SOp
from .scope import Builtin, Function

ATOM_TYPES = (bool, int, float, str)

_ATOM_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "%": operator.mod,
             "^": operator.pow, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
             "<=": operator.le, ">=": operator.ge}
_SEQUENCES = (str, list, tuple)


def atom_binop(op: str, a, b, span: Span, limits: Limits):
    """`a op b` on Python-level values, with Python's semantics and located, bounded errors."""
    if op == "and":
        return a and b
    if op == "or":
        return a or b
    if isinstance(a, (Function, Builtin)) or isinstance(b, (Function, Builtin)):
        raise RaspError(f"a function cannot be an operand of {op_word(op)}", span, "type")
    if op == "^" and isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a) > 1 and b > 0:
        if b * math.log2(abs(a)) > 4096:
            raise RaspError(f"{a} ^ {b} is too large", span, "limit")
    if op == "*" and (isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES)):
        n, seq = (b, a) if isinstance(a, _SEQUENCES) else (a, b)
        if isinstance(n, int) and isinstance(seq, _SEQUENCES) and n * len(seq) > limits.max_collection:
            raise RaspError("a repeated list or string over the size limit", span, "limit")
    if op in ("+", "-", "*") and isinstance(a, int) and isinstance(b, int) and max(abs(a), abs(b)).bit_length() > 4096:
        raise RaspError("the number is too large", span, "limit")
    try:
        result = _ATOM_OPS[op](a, b)
    except ZeroDivisionError:
        raise RaspError("division by zero", span, "value") from None
    except TypeError:
        raise RaspError(f"cannot {op_word(op)} {type_name(a)} and {type_name(b)}", span, "type") from None
    except OverflowError:
        raise RaspError("the number is too large", span, "value") from None
    if isinstance(result, complex):
        raise RaspError("a negative number to a fractional power is not a real number", span, "value")
    if isinstance(result, (list, str)) and len(result) > limits.max_collection:
        raise RaspError("a list or string over the size limit", span, "limit")
    return result


def atom_index(target, idx, e: ast.Index):
    if isinstance(target, dict):
        if not isinstance(idx, ATOM_TYPES):
            raise RaspError(f"a dict key must be a number, string or bool, not {a_type(idx)}", e.index.span, "type")
        if idx not in target:
            raise RaspError(f"no key {idx!r} in the dict", e.index.span, "value")
        return target[idx]
    if isinstance(target, (list, tuple, str)):
        if not isinstance(idx, int):  # bools index as 0 and 1, as in Python
            raise RaspError(f"{a_type(target)} is indexed by an int, not {a_type(idx)}", e.index.span, "type")
        if not -len(target) <= idx < len(target):
            raise RaspError(f"index {idx} is out of range for {a_type(target)} of length {len(target)}",
                            e.index.span, "value")
        return target[idx]
    raise RaspError(f"{a_type(target)} cannot be indexed", e.target.span, "type")


_BOOL_OPS = {"==", "!=", "<", ">", "<=", ">=", "and", "or", "not", "in", "to_bool"}
_INT_OPS = {"round", "indicator", "to_int"}


def static_type(value, depth: int = 0) -> str | None:
    """The RASP type of a value or s-op when it is known before any input (None when it is not)."""
    if depth > 40:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, ATOM_TYPES):
        return type(value).__name__
    if isinstance(value, Full):
        return static_type(value.value)
    if isinstance(value, (IndicesInput, SelectorWidth)):
        return "int"
    if isinstance(value, (Map, SequenceMap)):
        if value.op == "if":
            then, _, orelse = value.operands(list(value.inputs))
            kind = static_type(then, depth + 1)
            return kind if kind == static_type(orelse, depth + 1) else None
        return "bool" if value.op in _BOOL_OPS else "int" if value.op in _INT_OPS else None
    if isinstance(value, Aggregate):
        return static_type(value.sop, depth + 1)
    return None


def source_text(e: ast.Expr, sources: dict) -> str:
    text = " ".join(e.span.text(sources.get(e.span.source, "")).split())
    return text if len(text) <= 60 else text[:57] + "…"


def show_value(value) -> str:
    text = repr(value) if not isinstance(value, tuple) else ", ".join(map(repr, value))
    return text if len(text) <= 200 else text[:197] + "…"


def check_atom_like(value, span: Span, what: str):
    if not isinstance(value, ATOM_TYPES):
        raise RaspError(f"{what} must be numbers, strings or bools, not {a_type(value)}", span, "type")


_OP_WORDS = {"+": "'+'", "-": "'-'", "*": "'*'", "/": "'/'", "%": "'%'", "^": "'^'", "and": "'and'",
             "or": "'or'", "if": "if/else", "in": "'in'", "getitem": "indexing", "neg": "unary '-'",
             "pos": "unary '+'", "not": "'not'", "round": "round", "indicator": "indicator"}


def op_word(op: str) -> str:
    return _OP_WORDS.get(op, f"'{op}'")


def type_name(value) -> str:
    """The RASP name of a Python-level value's type, for messages."""
    if isinstance(value, SOp):
        return "s-op"
    if isinstance(value, Selector):
        return "selector"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, tuple):
        return f"{len(value)} values"
    if callable(value):
        return "function"
    return type(value).__name__


def a_type(value) -> str:
    """The type name of `value` with its article: 'an s-op', 'a str'."""
    name = type_name(value)
    return ("an " if name[0] in "aeiou" or name.startswith("s-op") else "a ") + name
