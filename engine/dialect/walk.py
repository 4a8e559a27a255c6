"""The shared walk of the dialect check: it types every node the output needs (structurally, over the
operation graph) and records each feature's first use; `outside` holds the first construct beyond every
length-free fragment."""
from __future__ import annotations

from fractions import Fraction

from ..program import Node
from .sorts import (_RANGE_TEXT, RANGES, Dialect, Outside, SelectorShape, Sort, _conjuncts, _describe,
                    _is_exists_test, _is_int, _is_numeric_fin, _is_rational, _query_free, _rebuild_and)


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
            if n.kind in ("select", "select_and", "select_or", "select_not", "select_closest"):
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
        if k == "aggregate_sum":
            raise Outside(n, "aggregate_sum (a rasplay extension for learned programs) adds up arbitrary selected "
                             "values; the fragments' definitions have no such sum (C-RASP counts the keys a "
                             "selector selects, which is selector_width here)")
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
        if sel.kind == "select_closest":
            raise Outside(user, "select_closest (a rasplay extension for learned programs) keeps the matching key "
                                "nearest the query, with its own tie-break and position 0 when none matches; "
                                "the fragments' definitions have no such selection (B-RASP's tie-break keeps "
                                "the leftmost or rightmost key)")
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
