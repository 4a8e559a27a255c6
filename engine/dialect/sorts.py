"""The dialect check's types: a node's sort, a selector's shape, the typing of a program, and the small
structural helpers the walk and the fragments share."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from ..lang.errors import Span
from ..program import Node

# Key ranges of a counting selector: select(indices, indices, op) is true where key op query.
RANGES = {"<=": "past", "<": "strict_past", ">=": "future", ">": "strict_future"}
MAX_DENOMINATOR = 1000           # a constant compared with a mean must be a fraction p/q with q <= this


class Outside(Exception):
    """A construct outside every length-free fragment."""

    def __init__(self, node: Node, message: str):
        super().__init__(message)
        self.node = node
        self.message = message


@dataclass(frozen=True)
class Sort:
    tag: str                      # fin | idx | cnt | rat | sel
    range: str | None = None      # cnt, rat, sel: the key range ("all", "past", ...)
    offset: int = 0               # idx: i + offset
    selector: int | None = None   # rat: the selector it averages over
    single: int | None = None     # cnt: the selector_width node when the count is one width (+ const)
    const: Fraction = Fraction(0)  # cnt: the added constant when single
    fp: str = "exact"             # cnt, rat: how the evaluator's float value relates to the exact one: "exact",
                                  # "once" (one correct rounding), "diff0" (a difference of two once-rounded
                                  # means of one selector: only its sign is exact)


@dataclass
class SelectorShape:
    """A selector the length-free compiler can build: a key range and a finite predicate, or one of
    the special heads."""
    kind: str                     # counting | shift | lookup | tiebreak
    range: str = "all"            # counting / tiebreak: which keys
    finite: Node | None = None    # counting / tiebreak: the finite part (None: every key)
    shift: int = 0                # shift: key = query - shift
    count: Node | None = None     # lookup: the query count node
    side: str = "rightmost"       # tiebreak


@dataclass
class Dialect:
    """The typing of one program's graph (for the output and what it needs)."""
    sorts: dict = field(default_factory=dict)          # node id -> Sort
    shapes: dict = field(default_factory=dict)         # selector id (of an attention op) -> SelectorShape
    features: dict = field(default_factory=dict)       # feature -> (node, reason) of its first use
    outside: Outside | None = None
    causal_reason: tuple | None = None                 # (node, reason) or None when causal


def span_of(node: Node) -> Span | None:
    for s in (node.origin, node.span):
        if s is not None and s.source == "<program>":
            return s
    return node.origin or node.span


_RANGE_TEXT = {"all": "every position", "future": "the query's position and after it",
               "strict_future": "positions after the query", "past": "the prefix", "strict_past": "the prefix"}


def _range_atom(sel: Node):
    for c in _conjuncts(sel):
        if c.kind == "select" and c.keys.kind == "indices" and c.queries.kind == "indices":
            return c
    return None


def _query_free(fin) -> bool:
    """Whether a finite selector's truth depends on the key only (its queries are constants)."""
    if fin.kind == "select":
        return fin.queries.kind == "constant"
    return all(_query_free(c) for _, c in fin.children())


def _conjuncts(sel: Node) -> list[Node]:
    if sel.kind == "select_and":
        return _conjuncts(sel.left) + _conjuncts(sel.right)
    return [sel]


def _rebuild_and(parts: list[Node]):
    """The finite part as a tuple-free description: a list of conjunct nodes (None when empty)."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    return _And(parts)


class _And:
    """The conjunction of several finite selector nodes (not a graph node)."""
    kind = "and_list"

    def __init__(self, parts):
        self.parts = parts
        self.id = ("and",) + tuple(p.id for p in parts)

    def children(self):
        return [(str(i), p) for i, p in enumerate(self.parts)]


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_rational(x) -> bool:
    if isinstance(x, bool):
        return True
    if isinstance(x, int):
        return True
    if isinstance(x, float):
        import math
        return math.isfinite(x) and Fraction(x).limit_denominator(MAX_DENOMINATOR) == Fraction(x)
    return False


def _is_numeric_fin(n: Node) -> bool:
    """Whether a finite s-op's values are numbers or bools (so that an aggregate of it is a mean); tokens
    count as symbols here (the compiler decides by the vocabulary)."""
    from ..program import Full
    if isinstance(n, Full):
        return isinstance(n.value, (int, float, bool))
    if n.kind in ("map", "sequencemap"):
        if n.op in ("indicator", "==", "!=", "<", ">", "<=", ">=", "and", "or", "not", "to_int", "to_float",
                    "to_bool", "in"):
            return True
        if n.op in ("+", "-", "*", "/", "%", "^", "neg", "pos", "round"):
            return all(_is_numeric_fin(c) for c in n.inputs)
        if n.op == "if":
            branches = [n.template[0], n.template[2]]
            return all(isinstance(x, (int, float, bool)) if t == "const" else _is_numeric_fin(n.inputs[x])
                       for t, x in branches)
        return False
    if n.kind == "aggregate":
        return _is_numeric_fin(n.sop)
    return False


def _is_exists_test(n: Node, kids: list[Sort]) -> bool:
    """count > 0, count == 0, count != 0, count >= 1, count < 1, mean > 0 and the like (one count or mean,
    one constant)."""
    if len(n.template) != 2 or len([s for s in kids if s.tag in ("cnt", "rat")]) != 1:
        return False
    (t0, x0), (t1, x1) = n.template
    if t0 == "arg" and t1 == "const":
        op, c = n.op, x1
    elif t1 == "arg" and t0 == "const":
        op, c = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(n.op, n.op), x0
    else:
        return False
    arg = n.inputs[0]
    s = kids[0]
    if s.tag == "cnt" and s.single is None:
        return False
    if s.tag == "cnt" and s.const != 0:
        return False
    if s.tag == "rat" and not (arg.kind == "aggregate" and arg.sop.kind == "constant"):
        return False
    return (op in ("==", "!=", ">", "<=") and c == 0) or (op in (">=", "<") and c == 1 and s.tag == "cnt")


def _describe(n) -> str:
    try:
        return n.label or n.describe()
    except AttributeError:
        return str(n)
