"""The dialect check: which fragments of RASP a program belongs to, and why not the smaller ones.

Fragments, smallest first (docs/every_length.md gives the theorems behind each):

- **B-RASP** (Yang, Strobl, Chiang, Angluin): finite (Boolean) values; attention picks the leftmost or
  rightmost selected key; counts only as "is there any?" tests.
- **C-RASP** (Yang and Chiang, "Counting like transformers"): counts over prefix selectors (key <= query),
  compared linearly with each other and with constants; no tie-breaking, no previous-position lookup.
- **TL[#]** (Yang, Strobl, Chiang, Angluin, "Simulating hard attention using soft attention"): temporal
  logic with counting terms: previous/next (a shift by a constant), since/until with leftmost/rightmost
  tie-breaking, counts over the past, the future or the whole string compared linearly.
- **length-free**: TL[#] plus the position encodings that paper allows (i mod m through (-1)^i, tests
  i = c, and a lookup of the position equal to a count through the unbounded encodings i and i^2):
  what `compile(..., length_free=True)` builds, with weights that do not depend on the input length.
- **RASP**: everything; a compiled model needs a max_len.

Orthogonally, **causal**: every selector looks only at the query's position and before it.

The check is structural, over the operation graph. A node's *sort* says what its values are:
``fin`` (a finite set of values that does not grow with the length), ``idx`` (the position i + c),
``cnt`` (an integer linear combination of counts over one range of keys), ``rat`` (a mean over one
selector). The first construct outside every fragment names the line; so does each fragment's reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .lang.errors import RaspError, Span
from .program import Node

# Key ranges of a counting selector: select(indices, indices, op) is true where key op query.
RANGES = {"<=": "past", "<": "strict_past", ">=": "future", ">": "strict_future"}
MAX_DENOMINATOR = 1000           # a constant compared with a mean must be a fraction p/q with q <= this

FRAGMENTS = [
    ("b-rasp", "B-RASP"),
    ("c-rasp", "C-RASP"),
    ("tl-count", "TL[#]"),
    ("length-free", "length-free"),
    ("rasp", "RASP"),
]

THEOREMS = {
    "b-rasp": "B-RASP programs are exactly the masked unique-hard-attention transformers (Yang, Chiang and "
              "Angluin 2024), and soft attention simulates them at every length with the positional encoding "
              "1/(i+1) and temperature scaling (Yang et al., Simulating hard attention using soft attention).",
    "c-rasp": "C-RASP programs compile to softmax transformers whose counting heads are uniform attention, exact "
              "at every length with no temperature at all (Yang and Chiang, Counting like transformers, CoLM "
              "2024).",
    "tl-count": "Temporal logic with counting terms is computed by soft-attention transformers at every length, "
                "with previous/since heads sharpened by temperature scaling (Yang, Strobl, Chiang and Angluin, "
                "Simulating hard attention using soft attention).",
    "length-free": "With the unbounded positional encodings i and i^2 (or temperature scaling by a function of "
                   "n) soft attention selects the position named by a count, so the weights still do not "
                   "depend on the length (Yang et al., Simulating hard attention using soft attention, the "
                   "unbounded-encoding construction).",
    "rasp": "General RASP compiles for one max_len (Weiss et al. 2021; Lindner et al. 2023, Tracr): positions "
            "are one-hot up to max_len and the model is undefined past it.",
}


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


class _Typer:
    def __init__(self, interp):
        self.interp = interp
        self.d = Dialect()

    def name(self, node) -> str:
        return self.interp.display_name(node)

    def feature(self, key: str, node: Node, reason: str):
        self.d.features.setdefault(key, (node, reason))

    def noncausal(self, node: Node, reason: str):
        if self.d.causal_reason is None:
            self.d.causal_reason = (node, reason)

    # ------------------------------------------------------------ s-ops

    def run(self, nodes: list[Node]):
        for n in nodes:
            if n.kind in ("select", "select_and", "select_or", "select_not"):
                continue                       # typed where an aggregate or width uses them
            self.d.sorts[n.id] = self.sop(n)

    def sort(self, n: Node) -> Sort:
        if n.kind == "constant":
            return Sort("fin")
        return self.d.sorts[n.id]

    def sop(self, n: Node) -> Sort:
        k = n.kind
        if k in ("tokens", "constant"):
            return Sort("fin")
        if k == "indices":
            return Sort("idx")
        if k in ("map", "sequencemap"):
            return self.elementwise(n)
        if k == "selector_width":
            shape = self.selector(n.selector, n)
            if shape.kind != "counting":
                raise Outside(n, f"selector_width of a {shape.kind} selector counts at most one key; write the "
                                 f"test as an aggregate")
            return Sort("cnt", range=shape.range, single=n.id)
        if k == "aggregate":
            return self.aggregate(n)
        raise Outside(n, f"'{k}' is not supported by the dialect check")

    def aggregate(self, n: Node) -> Sort:
        shape = self.selector(n.selector, n)
        v = self.sort(n.sop)
        if v.tag != "fin":
            what = {"cnt": "a count", "rat": "a mean", "idx": "a position"}[v.tag]
            raise Outside(n, f"the aggregate averages {what}, whose values grow with the input length: a "
                             f"model with length-independent weights can only move values from a finite set")
        if shape.kind in ("shift", "lookup", "tiebreak"):
            return Sort("fin")
        if _is_numeric_fin(n.sop):
            if n.sop.kind != "constant":
                self.feature("mean", n, f"'{self.name(n)}' is a mean over several keys (a ratio of counts)")
            return Sort("rat", range=shape.range, selector=n.selector.id,
                        fp="exact" if n.sop.kind == "constant" else "once")
        self.feature("unique", n, f"'{self.name(n)}' copies the value of the selected key (counted per value, "
                                  f"not picked leftmost or rightmost)")
        return Sort("fin")

    def elementwise(self, n: Node) -> Sort:
        kids = [self.sort(c) for c in n.inputs]
        tags = {s.tag for s in kids}
        if tags <= {"fin"}:
            return Sort("fin")
        if "idx" in tags:
            return self.index_op(n, kids)
        if tags - {"fin"} == {"cnt"} or tags - {"fin"} == {"rat"}:
            return self.count_op(n, kids, "cnt" if "cnt" in tags else "rat")
        raise Outside(n, f"'{_describe(n)}' mixes counts, means and positions; only linear combinations over one "
                         f"range of keys have a length-free construction")

    def index_op(self, n: Node, kids: list[Sort]) -> Sort:
        op = n.op
        args = [(t, x) for t, x in n.template]
        if len(kids) == 1 and kids[0].tag == "idx":
            base = kids[0]
            if op in ("+", "-") and len(args) == 2:
                (t0, x0), (t1, x1) = args
                if t0 == "arg" and t1 == "const" and _is_int(x1):
                    return Sort("idx", offset=base.offset + (x1 if op == "+" else -x1))
                if op == "+" and t1 == "arg" and t0 == "const" and _is_int(x0):
                    return Sort("idx", offset=base.offset + x0)
            if op == "%" and args[0][0] == "arg" and args[1][0] == "const" and _is_int(args[1][1]) and args[1][1] > 0:
                self.feature("periodic", n, f"'{_describe(n)}' reads a periodic position encoding (i mod "
                                            f"{args[1][1]}, as (-1)^i)")
                return Sort("fin")
            if op in ("==", "!=", "<", ">", "<=", ">=") and any(t == "const" for t, _ in args):
                self.feature("periodic", n, f"'{_describe(n)}' compares the position with a constant (a "
                                            f"position encoding)")
                return Sort("fin")
        raise Outside(n, f"'{_describe(n)}' computes with positions beyond i + c, i mod m and comparisons "
                         f"with a constant; its table would enumerate positions up to a max_len")

    def count_op(self, n: Node, kids: list[Sort], tag: str) -> Sort:
        op = n.op
        live = [s for s in kids if s.tag == tag]
        ranges = {s.range for s in live}
        sels = {s.selector for s in live}
        if len(ranges) > 1 or (tag == "rat" and len(sels) > 1):
            raise Outside(n, f"'{_describe(n)}' combines {'counts' if tag == 'cnt' else 'means'} over "
                             f"different ranges of keys; comparing them would need a product with the "
                             f"length")
        rng = live[0].range
        consts = [x for t, x in n.template if t == "const"]
        if any(not _is_rational(c) for c in consts):
            raise Outside(n, f"'{_describe(n)}' combines a count with a non-numeric or non-rational constant")
        if any(s.tag == "fin" for s in kids):
            raise Outside(n, f"'{_describe(n)}' combines a count with a value that varies by position; only "
                             f"constants keep it linear")
        fp = self.rounding(n, op, live, consts)
        if op in ("+", "-") and len(n.template) == 2:
            single = None
            const = Fraction(0)
            if tag == "cnt" and len(live) == 1:
                s = live[0]
                c = Fraction(consts[0]) if consts else Fraction(0)
                if s.single is not None and n.template[0][0] == "arg":
                    single, const = s.single, s.const + (c if op == "+" else -c)
            return Sort(tag, range=rng, selector=live[0].selector, single=single, const=const, fp=fp)
        if op == "neg" or (op == "*" and len(live) == 1) or (op == "/" and n.template[1][0] == "const"
                                                             and len(live) == 1):
            return Sort(tag, range=rng, selector=live[0].selector, fp=fp)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            if _is_exists_test(n, kids):
                self.feature("exists", n, f"'{_describe(n)}' asks whether any key is selected")
            else:
                self.feature("counting", n, f"'{_describe(n)}' compares counts linearly")
            return Sort("fin")
        what = {"%": "a numerical predicate (MOD) on a count", "*": "a product of two counts",
                "/": "a ratio of two counts", "round": "rounding a count", "indicator": "an indicator of a count"}
        raise Outside(n, f"'{_describe(n)}' is {what.get(op, f'the operation {op!r} on a count')}; counting "
                         f"terms may only be added, scaled by constants and compared")

    def rounding(self, n: Node, op: str, live: list[Sort], consts: list) -> str:
        """The evaluator computes counts as ints and means in floating point. The model computes exactly, so
        it agrees at every tie only where the evaluator's rounding cannot move a value across the tie: ints,
        one correctly rounded division (equal rationals round to equal floats; the constants are dyadic),
        and the sign of a difference of two means of one selector."""
        fps = [s.fp for s in live]
        ks = [Fraction(c) for c in consts]
        pow2 = all(k != 0 and (abs(k).numerator & (abs(k).numerator - 1)) == 0 and
                   (abs(k).denominator & (abs(k).denominator - 1)) == 0 for k in ks)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            if "diff0" in fps and (len(live) > 1 or any(k != 0 for k in ks)):
                return self._unsafe(n)
            return "exact"
        if op in ("+", "-"):
            if len(live) == 2:
                if fps == ["exact", "exact"]:
                    return "exact"
                if op == "-" and fps == ["once", "once"] and live[0].tag == "rat":
                    return "diff0"
                return self._unsafe(n)
            return fps[0] if fps[0] in ("exact", "once") else self._unsafe(n)
        if op == "neg":
            return fps[0]
        if op == "*":
            if fps[0] == "exact" or pow2:
                return fps[0]
            return self._unsafe(n)
        if op == "/":
            if pow2:
                return fps[0]
            return "once" if fps[0] == "exact" else self._unsafe(n)
        return fps[0]

    def _unsafe(self, n: Node):
        raise Outside(n, f"'{_describe(n)}' is computed by the evaluator in floating point with more than one "
                         f"rounding, so at an exact tie its answer depends on the rounding (3 * (3/28) - 2/28 "
                         f"is not 0.25 in floats); a length-free model computes exactly and could disagree")

    # ------------------------------------------------------------ selectors

    def selector(self, sel: Node, user: Node) -> SelectorShape:
        if sel.id in self.d.shapes:
            return self.d.shapes[sel.id]
        shape = self._selector(sel, user)
        self.d.shapes[sel.id] = shape
        if shape.kind == "shift":
            self.feature("shift", user, f"'{self.name(user)}' reads the position {shape.shift} before (a "
                                        f"previous-position head)")
            if shape.shift < 0:
                self.noncausal(user, f"the selector of '{self.name(user)}' reads a later position")
        elif shape.kind == "lookup":
            self.feature("lookup", user, f"'{self.name(user)}' selects the position equal to a count")
            self.noncausal(user, f"the selector of '{self.name(user)}' may select a later position (the "
                                 f"position named by a count)")
        else:
            if shape.kind == "tiebreak":
                self.feature("tiebreak", user, f"'{self.name(user)}' keeps only the {shape.side} selected key "
                                               f"(tie-breaking)")
            if shape.range != "past" and shape.range != "strict_past":
                self.feature("range", user, f"the selector of '{self.name(user)}' counts "
                                            f"{_RANGE_TEXT[shape.range]}, not a prefix")
                self.noncausal(user, f"the selector of '{self.name(user)}' looks at {_RANGE_TEXT[shape.range]}")
        return shape

    def _selector(self, sel: Node, user: Node) -> SelectorShape:
        conj = _conjuncts(sel)
        ranges, special, finite = [], [], []
        for c in conj:
            kind = self.atom_kind(c)
            if kind is None:
                finite.append(c)
            elif kind[0] == "range":
                ranges.append(kind[1])
            else:
                special.append((c, kind))
        if len(set(ranges)) > 1:
            raise Outside(user, f"the selector of '{self.name(user)}' combines several position comparisons")
        rng = ranges[0] if ranges else "all"
        for f in finite:
            self.check_finite(f, user)
        fin_node = _rebuild_and(finite)
        if not special:
            return SelectorShape("counting", rng, fin_node)
        if len(special) > 1:
            raise Outside(user, f"the selector of '{self.name(user)}' combines several lookups")
        atom, kind = special[0]
        if kind[0] == "shift" and not finite and not ranges:
            if kind[1] < 0:
                raise Outside(user, f"the selector of '{self.name(user)}' reads the position {-kind[1]} after the "
                                    f"query; without the length a head cannot tell that there is none (only "
                                    f"previous-position heads are length-free here)")
            return SelectorShape("shift", shift=kind[1])
        if kind[0] == "lookup" and not finite and not ranges:
            return SelectorShape("lookup", count=kind[1])
        if kind[0] == "cnt_eq":
            side = self.tiebreak(atom, rng, fin_node, finite, [c for c in conj if c is not atom])
            if side is not None:
                return SelectorShape("tiebreak", rng, fin_node, side=side)
        raise Outside(user, f"the selector of '{self.name(user)}' compares values that grow with the length at "
                            f"two positions ({_describe(atom)}); attention scores with fixed weights cannot "
                            f"test that at every length")

    def atom_kind(self, c: Node):
        """None for a finite atom (or a not/or of them); else ("range", r) | ("shift", c) | ("lookup", node)
        | ("cnt_eq", None)."""
        if c.kind != "select":
            return None if self._all_finite(c) else ("other", None)
        ks, qs = self.sort(c.keys), self.sort(c.queries)
        if ks.tag == "fin" and qs.tag == "fin":
            return None
        if ks.tag == "idx" and qs.tag == "idx":
            if ks.offset == 0 and qs.offset == 0 and c.predicate in RANGES:
                return ("range", RANGES[c.predicate])
            if c.predicate == "==" and ks.offset != qs.offset:
                # key + ko == query + qo: the key is the position ko - qo before the query (the library's
                # shift writes it as select(n + indices, indices, ==))
                return ("shift", ks.offset - qs.offset)
        if ks.tag == "idx" and ks.offset == 0 and qs.tag == "cnt" and c.predicate == "==":
            return ("lookup", c.queries)
        if ks.tag == "cnt" and qs.tag == "cnt" and c.predicate == "==":
            return ("cnt_eq", None)
        return ("other", None)

    def _all_finite(self, c: Node) -> bool:
        if c.kind == "select":
            return self.sort(c.keys).tag == "fin" and self.sort(c.queries).tag == "fin"
        return all(self._all_finite(x) for _, x in c.children())

    def check_finite(self, f: Node, user: Node):
        if not self._all_finite(f):
            raise Outside(user, f"the selector of '{self.name(user)}' puts a position or count comparison "
                                f"under 'or'/'not' ({_describe(f)}); only a conjunction with one key range "
                                f"has a length-free head")

    def tiebreak(self, atom: Node, rng: str, fin_node, finite: list, rest: list) -> str | None:
        """The rightmost idiom: `S and select(Ck, Cq, ==)` with S = finite P and key <= query, Cq =
        selector_width(S) and Ck the count, at the key, of the keys up to it with the same value (so that
        Ck = Cq singles out the last selected key at or before the query)."""
        if rng != "past" or fin_node is None:
            return None
        ck, cq = atom.keys, atom.queries
        if ck.kind != "selector_width" or cq.kind != "selector_width":
            return None
        s = cq.selector
        shape_q = self.d.shapes.get(s.id)
        if shape_q is None or shape_q.kind != "counting" or shape_q.range != "past":
            return None
        if {c.id for c in _conjuncts(s)} != {c.id for c in rest}:
            return None
        if ck.id == cq.id and _query_free(fin_node):
            return "rightmost"
        shape_k = self.d.shapes.get(ck.selector.id)
        if shape_k is None or shape_k.kind != "counting" or shape_k.range != "past":
            return None
        fk = shape_k.finite
        if len(finite) == 1 and finite[0].kind == "select" and finite[0].predicate == "==" and fk is not None \
                and fk.kind == "select" and fk.predicate == "==" and fk.keys.id == finite[0].keys.id \
                and fk.queries.id == finite[0].keys.id:
            return "rightmost"
        return None


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
    from .program import Full
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


# ------------------------------------------------------------------ the check


def type_program(interp, output_node: Node) -> Dialect:
    """Sorts and selector shapes of everything `output_node` needs; `outside` holds the first construct
    beyond every length-free fragment."""
    typer = _Typer(interp)
    nodes = interp.graph.ancestors([output_node])
    try:
        typer.run(nodes)
        if typer.sort(output_node).tag != "fin":
            what = {"cnt": "a count", "rat": "a mean", "idx": "a position"}[typer.sort(output_node).tag]
            raise Outside(output_node, f"the output '{interp.display_name(output_node)}' is {what}, whose values "
                                       f"grow with the length; a model with fixed weights outputs from a finite "
                                       f"set (compare it, e.g. '> 0')")
    except Outside as e:
        typer.d.outside = e
    return typer.d


def _place(node: Node | None) -> dict:
    span = span_of(node) if node is not None else None
    return {"line": span.line, "col": span.col, "end_line": span.end_line, "end_col": span.end_col} if span else {}


# Which features each fragment lacks (in order of the reason given first).
_EXCLUDES = {
    "b-rasp": ["counting", "mean", "unique", "periodic", "lookup"],
    "c-rasp": ["shift", "tiebreak", "range", "periodic", "lookup"],
    "tl-count": ["periodic", "lookup"],
    "length-free": [],
}


def check_dialect(source: str | None = None, output: str | None = None, *, interp=None, limits=None,
                  load_dirs=None) -> dict:
    """Which fragments the program (its `output`, default: the program's default output) belongs to, each
    with the reason it is not in a smaller one, naming the line."""
    from .header import default_output
    from .interpret import interpret
    from .limits import DEFAULT_LIMITS

    if interp is None:
        interp = interpret(source, limits or DEFAULT_LIMITS, load_dirs)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        d = errors[0]
        raise RaspError(d["message"], Span(d["line"], d["col"], d.get("end_line", d["line"]),
                                           d.get("end_col", d["col"] + 1)) if "line" in d else None,
                        d.get("kind", "value"))
    name = output if output is not None else default_output(interp)
    found = [d for d in interp.definitions if d.name == name] if name else []
    if not found:
        raise RaspError(f"the program defines no s-op named '{name}'" if name else
                        "the program defines no s-op to check", None, "name")
    from .program import SOp
    if not isinstance(found[-1].value, SOp):
        raise RaspError(f"'{name}' is a selector; the dialect check reads an s-op", found[-1].span, "type")
    d = type_program(interp, found[-1].value)
    return dialect_document(interp, name, d)


def dialect_document(interp, name: str, d: Dialect) -> dict:
    fragments = []
    smallest = None
    for fid, fname in FRAGMENTS:
        if fid == "rasp":
            member, reason, node = True, None, None
        elif d.outside is not None:
            member, reason, node = False, d.outside.message, d.outside.node
        else:
            hit = next((d.features[f] for f in _EXCLUDES[fid] if f in d.features), None)
            member = hit is None
            node, reason = hit if hit else (None, None)
        entry = {"id": fid, "name": fname, "member": member, "reason": reason}
        entry.update(_place(node))
        fragments.append(entry)
        if member and smallest is None:
            smallest = fid
    causal_node, causal_reason = d.causal_reason if d.causal_reason else (None, None)
    if d.outside is not None and causal_reason is None:
        causal = {"member": None, "reason": "the program is outside the fragments; run the compiler's causal "
                                            "check (compile with causal) for its selectors"}
    else:
        causal = {"member": causal_reason is None, "reason": causal_reason}
        causal.update(_place(causal_node))
    name_of = dict(FRAGMENTS)
    return {
        "output": name,
        "fragments": fragments,
        "smallest": smallest,
        "smallest_name": name_of[smallest],
        "length_free": d.outside is None,
        "causal": causal,
        "theorem": THEOREMS[smallest],
    }


__all__ = ["check_dialect", "type_program", "Dialect", "Sort", "SelectorShape", "FRAGMENTS", "THEOREMS"]
