"""The values side of the Tracr lowering (interop/tracr_lower.py): its limits, how an s-op's values live in
RASP (`Rep`: as themselves, or as codes into its value set), the lowered program (`Lowered`, which decodes
the evaluator's values back to Tracr's), the names RASP reserves, and value sets (kinds, order, every mean
a numerical aggregate can take)."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ..engine.program import format_constant
from . import tracr_rasp as rasp

MAX_MEANS = 20_000            # possible means of one numerical aggregate that a table may enumerate
MAX_TABLE = 200_000           # entries of one Map/SequenceMap/Select table
MAX_STEPS = 8                 # a Map of numbers that is a step function of at most this many steps is written so
COMPARISONS = {rasp.Comparison.EQ: "==", rasp.Comparison.NEQ: "!=", rasp.Comparison.LT: "<",
               rasp.Comparison.LEQ: "<=", rasp.Comparison.GT: ">", rasp.Comparison.GEQ: ">="}
_PY_COMPARE = {"==": lambda k, q: k == q, "!=": lambda k, q: k != q, "<": lambda k, q: k < q,
               "<=": lambda k, q: k <= q, ">": lambda k, q: k > q, ">=": lambda k, q: k >= q}
RESERVED = set(keyword.kwlist) | {
    "tokens", "indices", "length", "select", "aggregate", "selector_width", "round", "indicator", "range", "zip",
    "len", "load", "get", "out", "draw", "tokens_str", "tokens_int", "tokens_float", "tokens_bool", "tokens_asis",
    "True", "False", "def", "return", "set", "example"}
try:   # the interpreter's own list, where it has one
    from ..engine.interpret import RESERVED_EVERYWHERE as _ENGINE_RESERVED
    RESERVED |= set(_ENGINE_RESERVED)
except ImportError:
    pass


def _library_names() -> set:
    """Names the standard library defines (a program may not set them)."""
    from importlib import resources

    text = resources.files("rasplay.engine").joinpath("library.rasp").read_text(encoding="utf-8")
    return set(re.findall(r"^(?:def\s+)?([A-Za-z_]\w*)\s*[=(]", text, re.M))


RESERVED |= _library_names()


def code_name(i: int) -> str:
    """The RASP value standing for value number i of a coded s-op: a string, so that no arithmetic can
    ever read a code as a number (a mean of several codes is an evaluation error, never a value)."""
    return f"c{i}"


@dataclass
class Rep:
    """How an s-op's values live in RASP: as themselves (plain) or as codes into `values`. A plain
    s-op of strings that may be None holds the string `none` there."""
    values: list | None               # the value set, sorted; None when too large to list
    plain: bool
    code: dict = field(default_factory=dict)   # value -> code, for coded s-ops
    none: str | None = None
    # a numerical mean (or a map of one): Tracr gives a whole number as an int where one value is selected
    # and as a float where several are, which one RASP value cannot tell apart
    int_or_float: bool = False

    def key(self, v) -> str:
        """The RASP constant that stands for value v of this s-op."""
        if self.plain:
            return format_constant(self.none if v is None else v)
        return format_constant(code_name(self.code[v]))


@dataclass
class Lowered:
    """A Tracr program as RASP source, with what is needed to read its values back."""
    source: str
    output: str                          # the RASP name of the program's root
    names: dict                          # Tracr label -> RASP name
    codes: dict                          # RASP name -> list of Python values (code i holds codes[name][i])
    encodings: dict                      # RASP name -> Tracr's annotation ("categorical" | "numerical")
    vocab: list
    max_len: int
    notes: list
    nones: dict = field(default_factory=dict)   # RASP name -> the string standing for None

    def decode(self, name: str, values: list | None) -> list | None:
        """An s-op's values from the evaluator, as Tracr would give them (codes -> values)."""
        if values is None:
            return values
        if name in self.nones:
            return [None if v == self.nones[name] else v for v in values]
        if name not in self.codes:
            return values
        table = self.codes[name]
        return [None if v is None else table[int(v[1:])] for v in values]


_RAISED = object()


def _hashable(v):
    return v


def _explicit(expr, key: str):
    """An annotation the program gave (not a default)."""
    return dict(expr.annotations._values).get(key) if key in expr.annotations._values else None


def _kind(v) -> str | None:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number" if v == v and v not in (float("inf"), float("-inf")) else None
    if isinstance(v, str):
        return "str"
    return None


def _sorted(values) -> list:
    return sorted(values, key=lambda v: (type(v).__name__, v) if _kind(v) else (type(v).__name__, repr(v)))


def _rep(values) -> Rep:
    values = _sorted(set(values))
    kinds = {_kind(v) for v in values if v is not None}
    if values and None not in kinds and len(kinds) == 1:
        if None not in values:
            return Rep(values, True)
        if kinds == {"str"}:   # strings or None: None is the string "None" (or "None_", ... if taken)
            none = "None"
            while none in values:
                none += "_"
            return Rep(values, True, none=none)
    return Rep(values, False, {v: i for i, v in enumerate(values)})


def _means(values: list, max_len: int, limit: int = MAX_MEANS) -> list | None:
    """Every mean of 1..max_len values from `values` (numbers), exact; None beyond `limit`."""
    fracs = sorted({Fraction(v) for v in values})
    sums, out = {Fraction(0)}, set()
    for n in range(1, max_len + 1):
        sums = {s + v for s in sums for v in fracs}
        out |= {s / n for s in sums}
        if len(sums) > limit or len(out) > limit:
            return None
    return [int(m) if m.denominator == 1 else float(m) for m in out]


def _components(rows: list, n_keys: int) -> list[int]:
    """Component of each key: keys that share a row are in one component (union-find)."""
    parent = list(range(n_keys))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i
    for r in rows:
        r = sorted(r)
        for i in r[1:]:
            parent[find(i)] = find(r[0])
    return [find(i) for i in range(n_keys)]
