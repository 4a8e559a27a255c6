"""The expressions of Tracr's `rasp` module, written for rasplay (no Tracr code): the classes, the
annotations (encodings, names) and the operator overloads. The API module, interop/tracr_rasp.py, re-exports
them with `evaluate`; the evaluation rules (interop/tracr_eval.py) read these classes, and calling an
expression on a list answers through the evaluator the API module plugs in (`_use_evaluator`), so neither
rules module imports the other's importer.

A Tracr program is Python that builds an expression graph from these classes: `tokens`,
`indices`, `length`, `Map`, `SequenceMap`, `LinearSequenceMap`, `Full`, `ConstantSOp`,
`Select` with a `Comparison` (or any `predicate(key, query)`), `ConstantSelector`, `Aggregate`,
`SelectorWidth`, `SelectorAnd/Or/Not` and the `selector_and/or/not` helpers, the annotations
(`named`, `annotated`, `numerical`, `categorical`) and the operator overloads on s-ops and
selectors. Nothing here computes with transformers: `interop.tracr_lower` turns a finished
expression into RASP source for rasplay's interpreter (and so into rasplay's own operation
graph), tabulating every Python function on the value sets of its inputs.
"""
from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping
from typing import Any, Callable, Dict, Sequence, Union

from .tracr_comparison import _COMPARE, Comparison, Predicate  # noqa: F401  (part of this module's API)

Value = Any
SelectorValue = list

_ids = itertools.count(1)
_evaluator: Callable | None = None   # Tracr's evaluation rules, plugged in by interop/tracr_rasp.py


def _use_evaluator(evaluate: Callable) -> None:
    """Calling an expression on a list (`expr(xs)`) answers with `evaluate(expr, xs)`."""
    global _evaluator
    _evaluator = evaluate
DEFAULT_ANNOTATORS: Dict[str, Callable[["RASPExpr"], Any]] = {}


class _Annotations(Mapping):
    """Immutable annotations; missing keys come from DEFAULT_ANNOTATORS on first use."""

    def __init__(self, expr: "RASPExpr", **values: Any):
        self._expr = expr
        self._values = dict(values)

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            if key not in DEFAULT_ANNOTATORS:
                raise KeyError(f"no annotation '{key}' (known: {sorted(set(self._values) | set(DEFAULT_ANNOTATORS))})")
            self._values[key] = DEFAULT_ANNOTATORS[key](self._expr)
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)


class RASPExpr:
    """An expression: an s-op or a selector."""

    def __init__(self):
        self._annotations = _Annotations(self)
        self._unique_id = next(_ids)

    def __call__(self, xs: Sequence[Value]):
        if _evaluator is None:
            raise RuntimeError("a Tracr expression is evaluated through rasplay.interop.tracr_rasp (or "
                               "rasplay.tracr.rasp): import it first")
        return _evaluator(self, xs)

    @property
    def annotations(self) -> Mapping:
        return self._annotations

    @annotations.setter
    def annotations(self, values: Mapping) -> None:
        self._annotations = _Annotations(self, **values)

    @property
    def name(self) -> str:
        return self.annotations["name"]

    @property
    def children(self) -> list:
        return []

    @property
    def unique_id(self) -> int:
        return self._unique_id

    @property
    def label(self) -> str:
        return f"{self.name}_{self.unique_id}"

    def copy(self):
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._unique_id = next(_ids)
        return new

    def named(self, name: str):
        return annotate(self, name=name)

    def annotated(self, **annotations):
        return annotate(self, **annotations)


def annotate(expr, **annotations):
    """A copy of `expr` (a new id) with `annotations` added (overwriting equal keys)."""
    new = expr.copy()
    new.annotations = {**expr.annotations, **annotations}
    return new


# ------------------------------------------------------------------ s-ops

def _lift(other, one: Callable, two: Callable, self_first: bool, sop: "SOp"):
    if isinstance(other, SOp):
        return SequenceMap(two, sop, other) if self_first else SequenceMap(two, other, sop)
    return Map(one, sop)


class SOp(RASPExpr):
    """A sequence operation: one value per position. Comparisons and arithmetic with a constant
    give a Map; with another s-op a SequenceMap (as in Tracr)."""

    __hash__ = RASPExpr.__hash__  # `==` builds an s-op, so hashing stays by identity

    def __lt__(self, other):
        return Map(lambda x: x < other, self)

    def __le__(self, other):
        return Map(lambda x: x <= other, self)

    def __eq__(self, other):  # type: ignore[override]
        return Map(lambda x: x == other, self)

    def __ne__(self, other):  # type: ignore[override]
        return Map(lambda x: x != other, self)

    def __gt__(self, other):
        return Map(lambda x: x > other, self)

    def __ge__(self, other):
        return Map(lambda x: x >= other, self)

    def __add__(self, other):
        return _lift(other, lambda x: x + other, lambda x, y: x + y, True, self)

    def __radd__(self, other):
        return _lift(other, lambda x: other + x, lambda x, y: x + y, False, self)

    def __sub__(self, other):
        return _lift(other, lambda x: x - other, lambda x, y: x - y, True, self)

    def __rsub__(self, other):
        return _lift(other, lambda x: other - x, lambda x, y: x - y, False, self)

    def __mul__(self, other):
        return _lift(other, lambda x: x * other, lambda x, y: x * y, True, self)

    def __rmul__(self, other):
        return _lift(other, lambda x: other * x, lambda x, y: x * y, False, self)

    def __truediv__(self, other):
        return _lift(other, lambda x: x / other, lambda x, y: x / y, True, self)

    def __rtruediv__(self, other):
        return _lift(other, lambda x: other / x, lambda x, y: x / y, False, self)

    def __invert__(self):
        return Map(lambda x: not x, self)

    def __and__(self, other):
        return _lift(other, lambda x: x and other, lambda x, y: x and y, True, self)

    def __or__(self, other):
        return _lift(other, lambda x: x or other, lambda x, y: x or y, True, self)

    def __rand__(self, other):
        return _lift(other, lambda x: other and x, lambda x, y: x and y, False, self)

    def __ror__(self, other):
        return _lift(other, lambda x: x or other, lambda x, y: x or y, False, self)


class TokensType(SOp):
    """The input tokens."""

    def __repr__(self):
        return "tokens"


class IndicesType(SOp):
    """The positions 0..n-1."""

    def __repr__(self):
        return "indices"


class LengthType(SOp):
    """The input length, at every position."""

    def __repr__(self):
        return "length"


tokens = TokensType()
indices = IndicesType()
length = LengthType()


class Map(SOp):
    """f applied to every position of `inner`. With simplify, a Map of a Map becomes one Map."""

    def __init__(self, f: Callable[[Value], Value], inner: SOp, simplify: bool = True):
        super().__init__()
        if not isinstance(inner, SOp):
            raise TypeError(f"Map needs an s-op, not {type(inner).__name__}")
        if not callable(f) or isinstance(f, RASPExpr):
            raise TypeError("Map needs a function of one value")
        self.f, self.inner = f, inner
        if simplify and isinstance(inner, Map):
            first, then = inner.f, f
            self.f = lambda x: then(first(x))
            self.inner = inner.inner

    @property
    def children(self):
        return [self.inner]


class SequenceMap(SOp):
    """f applied to the values of two s-ops at every position."""

    def __init__(self, f: Callable[[Value, Value], Value], fst: SOp, snd: SOp):
        super().__init__()
        if not (isinstance(fst, SOp) and isinstance(snd, SOp)):
            raise TypeError("SequenceMap needs two s-ops")
        if not callable(f) or isinstance(f, RASPExpr):
            raise TypeError("SequenceMap needs a function of two values")
        self.f, self.fst, self.snd = f, fst, snd

    @property
    def children(self):
        return [self.fst, self.snd]


class LinearSequenceMap(SequenceMap):
    """fst_fac * fst + snd_fac * snd."""

    def __init__(self, fst: SOp, snd: SOp, fst_fac: float, snd_fac: float):
        super().__init__(lambda x, y: fst_fac * x + snd_fac * y, fst, snd)
        self.fst_fac, self.snd_fac = fst_fac, snd_fac


class Full(SOp):
    """`fill` at every position."""

    def __init__(self, fill: Value):
        super().__init__()
        self.fill = fill


ConstantSOpFill = Full


class ConstantSOp(SOp):
    """A fixed sequence (for tests): position i holds value[i]."""

    def __init__(self, value: Sequence[Value], check_length: bool = True):
        super().__init__()
        self.value, self.check_length = list(value), check_length


def sop_not(sop: SOp) -> SOp:
    return Map(lambda x: not x, sop)


# ------------------------------------------------------------------ selectors



class Selector(RASPExpr):
    """A selection matrix (query rows, key columns). `&`, `|`, `~` combine selectors."""

    def __and__(self, other):
        return selector_and(self, other)

    def __rand__(self, other):
        return selector_and(other, self)

    def __or__(self, other):
        return selector_or(self, other)

    def __ror__(self, other):
        return selector_or(other, self)

    def __invert__(self):
        return selector_not(self)


class Select(Selector):
    """Entry (q, k) is predicate(keys[k], queries[q])."""

    def __init__(self, keys: SOp, queries: SOp, predicate: Predicate):
        super().__init__()
        if not (isinstance(keys, SOp) and isinstance(queries, SOp)):
            raise TypeError("Select needs two s-ops (keys, queries)")
        self.keys, self.queries, self.predicate = keys, queries, predicate

    @property
    def children(self):
        return [self.keys, self.queries]


class ConstantSelector(Selector):
    """A fixed selection matrix (for tests)."""

    def __init__(self, value: SelectorValue, check_length: bool = True):
        super().__init__()
        self.value, self.check_length = [list(map(bool, row)) for row in value], check_length


class SelectorWidth(SOp):
    """The number of keys each query selects."""

    def __init__(self, selector: Selector):
        super().__init__()
        if not isinstance(selector, Selector):
            raise TypeError("SelectorWidth needs a selector")
        self.selector = selector

    @property
    def children(self):
        return [self.selector]


class SelectorAnd(Selector):
    def __init__(self, fst: Selector, snd: Selector):
        super().__init__()
        if not (isinstance(fst, Selector) and isinstance(snd, Selector)):
            raise TypeError("SelectorAnd needs two selectors")
        self.fst, self.snd = fst, snd

    @property
    def children(self):
        return [self.fst, self.snd]


class SelectorOr(SelectorAnd):
    pass


class SelectorNot(Selector):
    def __init__(self, inner: Selector):
        super().__init__()
        if not isinstance(inner, Selector):
            raise TypeError("SelectorNot needs a selector")
        self.inner = inner

    @property
    def children(self):
        return [self.inner]


def selector_not(inner: Selector, simplify: bool = True) -> Selector:
    """~inner; a Select stays a Select with the negated predicate when simplifying."""
    if simplify and isinstance(inner, Select):
        p = inner.predicate
        return Select(inner.keys, inner.queries, lambda k, q: not p(k, q))
    return SelectorNot(inner)


def selector_and(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge_selects(fst, snd, lambda a, b: a and b)
        if merged is not None:
            return merged
    return SelectorAnd(fst, snd)


def selector_or(fst: Selector, snd: Selector, simplify: bool = True) -> Selector:
    if simplify and isinstance(fst, Select) and isinstance(snd, Select):
        merged = _merge_selects(fst, snd, lambda a, b: a or b)
        if merged is not None:
            return merged
    return SelectorOr(fst, snd)


def _merge_selects(fst: Select, snd: Select, combine) -> Select | None:
    """One Select for two over the same keys and queries (a Full side matches anything)."""
    def side(a: SOp, b: SOp):
        if a is b:
            return a
        if isinstance(a, Full):
            return b
        if isinstance(b, Full):
            return a
        return None

    keys, queries = side(fst.keys, snd.keys), side(fst.queries, snd.queries)
    if keys is None or queries is None:
        return None

    def bind(sel: Select):
        p = sel.predicate
        fixed_k = sel.keys.fill if isinstance(sel.keys, Full) and sel.keys is not keys else None
        fixed_q = sel.queries.fill if isinstance(sel.queries, Full) and sel.queries is not queries else None
        k_full = isinstance(sel.keys, Full) and sel.keys is not keys
        q_full = isinstance(sel.queries, Full) and sel.queries is not queries
        return lambda k, q: p(fixed_k if k_full else k, fixed_q if q_full else q)

    first, second = bind(fst), bind(snd)
    return Select(keys, queries, lambda k, q: combine(first(k, q), second(k, q)))


# ------------------------------------------------------------------ aggregate

class Aggregate(SOp):
    """Per query: the selected value (one), their mean (several, numbers), `default` (none)."""

    def __init__(self, selector: Selector, sop: SOp, default: Value = None):
        super().__init__()
        if not isinstance(selector, Selector) or not isinstance(sop, SOp):
            raise TypeError("Aggregate needs a selector and an s-op")
        if default is not None and not isinstance(default, (str, float, bool, int)):
            raise TypeError("an Aggregate's default is a str, float, bool, int or None")
        self.selector, self.sop, self.default = selector, sop, default

    @property
    def children(self):
        return [self.selector, self.sop]


# ------------------------------------------------------------------ encodings and names

class Encoding(enum.Enum):
    CATEGORICAL = "categorical"
    NUMERICAL = "numerical"


def numerical(sop):
    return annotate(sop, encoding=Encoding.NUMERICAL)


def categorical(sop):
    return annotate(sop, encoding=Encoding.CATEGORICAL)


def get_encoding(sop) -> Encoding:
    return sop.annotations["encoding"]


def is_numerical(sop) -> bool:
    return get_encoding(sop) == Encoding.NUMERICAL


def is_categorical(sop) -> bool:
    return get_encoding(sop) == Encoding.CATEGORICAL


def default_encoding(expr) -> Encoding:
    if not isinstance(expr, SOp):
        raise TypeError(f"{expr!r} is not an s-op")
    return Encoding.CATEGORICAL


_DEFAULT_NAMES = [
    (TokensType, "tokens"), (IndicesType, "indices"), (LengthType, "length"),
    (LinearSequenceMap, "linear_sequence_map"), (SequenceMap, "sequence_map"), (Map, "map"), (Full, "full"),
    (ConstantSOp, "constant_sop"), (SelectorWidth, "selector_width"), (Aggregate, "aggregate"), (SOp, "sop"),
    (Select, "select"), (SelectorOr, "selector_or"), (SelectorAnd, "selector_and"), (SelectorNot, "selector_not"),
    (ConstantSelector, "constant_selector"), (Selector, "selector"),
]


def default_name(expr) -> str:
    for cls, name in _DEFAULT_NAMES:
        if isinstance(expr, cls):
            return name
    raise NotImplementedError(f"{expr!r} has no default name")


DEFAULT_ANNOTATORS["encoding"] = default_encoding
DEFAULT_ANNOTATORS["name"] = default_name

NumericValue = Union[int, float]
