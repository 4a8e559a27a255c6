"""Build the length-free sublayers of a program in the length-free fragment (engine.dialect types it).

Finite s-ops are one-hot blocks over their value sets (computed by running engine.elementwise over the
possible inputs, as the max_len compiler does); counts are blocks holding count / D, D the number of
positions the counting head sees (BOS included), with 1/D beside them; comparisons of integer linear
forms M of counts are read by the sign of M -/+ 1/2 (never zero), i.e. of (M -/+ 1/2) / D.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from ... import elementwise
from ...analysis import depths
from ...dialect import Dialect, SelectorShape
from ...lang.errors import RaspError
from ...program import Full, Node, freeze
from ..fused import Fused
from ..fused import elementwise_leaves
from . import runner as R

from .blocks import MAX_COMBOS, MAX_SCALE, PERIODIC_PROBE, Built, Cnt, Fin, Rat, refuse  # noqa: F401
from .counting import CountingMixin
from .position_form import position_form


class Builder(CountingMixin):
    def __init__(self, program, dialect: Dialect):
        self.p = program
        self.d = dialect
        self.b = Built()
        self.nodes = program.interp.graph.ancestors([program.output])
        self.depth = depths(self.nodes)
        self.layer = 0
        self.joint_cache: dict = {}

    # ------------------------------------------------------------ helpers

    def add(self, op):
        self.b.ops.append(op)
        self.b.layer_of.append(self.layer)
        return op

    def fin(self, node: Node) -> Fin:
        if isinstance(node, Full):
            return Fin("not_bos", [node.value])
        info = self.b.info[node.id]
        assert isinstance(info, Fin), node
        return info

    def typed(self, values: list, node: Node) -> np.ndarray:
        try:
            return elementwise.array_from_values(list(values), "the values")
        except RaspError:
            raise refuse(node, f"'{self.p.name(node)}' mixes value types ({', '.join(map(repr, values[:6]))}); "
                               f"a one-hot block needs one type") from None

    def joint(self, nodes: list[Node], user: Node) -> tuple[str, list[tuple]]:
        """A one-hot block over the joint values of `nodes` (zero at BOS)."""
        key = tuple(n.id for n in nodes)
        if key in self.joint_cache:
            return self.joint_cache[key]
        if not nodes:
            out = ("not_bos", [()])
        elif len(nodes) == 1:
            f = self.fin(nodes[0])
            out = (f.block, [(v,) for v in f.values])
        else:
            fins = [self.fin(n) for n in nodes]
            sizes = [len(f.values) for f in fins]
            if math.prod(sizes) > MAX_COMBOS:
                raise refuse(user, f"the joint values of {len(nodes)} s-ops ({math.prod(sizes)}) exceed "
                                   f"{MAX_COMBOS}")
            combos = list(itertools.product(*[range(s) for s in sizes]))
            name = f"joint{len(self.joint_cache)}"
            self.add(R.Table(name, [f.block for f in fins], sizes, combos, list(range(len(combos))),
                             len(combos)))
            out = (name, [tuple(f.values[i] for f, i in zip(fins, c)) for c in combos])
        self.joint_cache[key] = out
        return out

    # ------------------------------------------------------------ the pass

    def build(self) -> Built:
        for n in self.nodes:
            if n.kind in ("select", "select_and", "select_or", "select_not"):
                continue
            self.layer = self.depth[n.id]
            sort = self.d.sorts[n.id]
            if n.kind == "tokens":
                self.b.info[n.id] = Fin("tokens", list(self.p.vocab))
            elif n.kind == "constant":
                self.b.info[n.id] = Fin("not_bos", [n.value])
            elif sort.tag == "idx":
                self.b.info[n.id] = ("idx", sort.offset)
            elif n.kind in ("map", "sequencemap"):
                kids = [self.d.sorts.get(c.id) for c in n.inputs]
                if any(k is not None and k.tag == "idx" for k in kids):
                    self.periodic(n)
                elif any(k is not None and k.tag == "cnt" for k in kids):
                    self.cnt_map(n)
                elif any(k is not None and k.tag == "rat" for k in kids):
                    self.rat_map(n)
                else:
                    self.fin_map(n)
            elif n.kind == "selector_width":
                self.width(n)
            elif n.kind == "aggregate":
                self.aggregate(n)
            else:
                raise refuse(n, f"'{n.kind}' has no length-free construction")
        self.b.analysis_layers = max(self.depth.values(), default=0)
        self.b.notes.append("one attention layer per RASP layer; between them the MLP work runs as several "
                            "sublayers in sequence (count readouts, sign units, tables)")
        out = self.b.info[self.p.output.id]
        if not isinstance(out, Fin):
            raise refuse(self.p.output, "the output is not a finite s-op")
        return self.b

    # ------------------------------------------------------------ finite values

    def periodic(self, n: Node):
        leaves = elementwise_leaves(n)
        if any(x.kind != "indices" for x in leaves):
            raise refuse(n, f"'{self.p.name(n)}' mixes positions with other values")

        def evaluate(t: np.ndarray):
            env = {x.id: t.astype(np.int64) for x in leaves}
            vals, bad = Fused(env, t.size).value(n)
            if np.asarray(bad).any():
                raise refuse(n, f"'{self.p.name(n)}' fails at some position")
            return np.broadcast_to(np.asarray(vals), t.shape)

        probe = evaluate(np.arange(PERIODIC_PROBE))
        values = []
        for v in probe.tolist():
            if freeze(v) not in {freeze(x) for x in values}:
                values.append(v)
        index = {freeze(v): i for i, v in enumerate(values)}
        # the encoding must be eventually periodic: i mod m repeats with period m, i op c is constant past c
        name = f"pe{n.id}"

        def fn(t: np.ndarray, _evaluate=evaluate, _index=index, _node=n):
            vals = _evaluate(t).tolist()
            try:
                return np.array([_index[freeze(v)] for v in vals], dtype=np.int64)
            except KeyError:
                raise refuse(_node, f"'{self.p.name(_node)}' takes a value at a long position that it never takes "
                                    f"in the first {PERIODIC_PROBE} (not a periodic encoding)") from None

        self.b.periodic[name] = (fn, len(values))
        kid = next(c for c in n.inputs if getattr(self.d.sorts.get(c.id), "tag", None) == "idx")
        form = position_form(n, self.d.sorts[kid.id].offset, fn)
        self.b.periodic_form[name] = form if form is not None else f"'{self.p.name(n)}' ({n.describe()})"
        self.b.info[n.id] = Fin(name, values)

    def fin_map(self, n: Node):
        live = [(i, c) for i, c in enumerate(n.inputs) if not isinstance(c, Full)]
        if not live:
            raise refuse(n, f"'{self.p.name(n)}' is a constant computed by an s-op operation; write the constant")
        fins = [self.fin(c) for _, c in live]
        sizes = [len(f.values) for f in fins]
        if math.prod(sizes) > MAX_COMBOS:
            raise refuse(n, f"'{self.p.name(n)}' would tabulate {math.prod(sizes)} input combinations (limit "
                            f"{MAX_COMBOS})")
        combos = list(itertools.product(*[range(s) for s in sizes]))
        arrays = {}
        for j, ((i, c), f) in enumerate(zip(live, fins)):
            arrays[i] = self.typed([f.values[k[j]] for k in combos], c) if combos else None
        operands_in = []
        for i, c in enumerate(n.inputs):
            operands_in.append(arrays[i] if i in arrays else elementwise.as_array(c.value))
        try:
            res = elementwise.apply(n.op, n.operands(operands_in))
        except RaspError as e:
            raise refuse(n, f"'{self.p.name(n)}' fails on every input combination: {e.message}") from None
        vals = np.broadcast_to(res.values, (len(combos),)).tolist()
        bad = np.broadcast_to(res.bad, (len(combos),)) if res.bad is not None else np.zeros(len(combos), bool)
        values, outs, index = [], [], {}
        for v, b in zip(vals, bad.tolist()):
            if b:
                outs.append(None)
                continue
            k = freeze(v)
            if k not in index:
                index[k] = len(values)
                values.append(v)
            outs.append(index[k])
        if not values:
            raise refuse(n, f"'{self.p.name(n)}' fails on every input combination")
        name = f"n{n.id}"
        self.add(R.Table(name, [f.block for f in fins], sizes, combos, outs, len(values)))
        self.b.info[n.id] = Fin(name, values)

    # ------------------------------------------------------------ counting heads

    def finite_parts(self, finite, user: Node):
        """(key nodes, query nodes, predicate(ktuples, qtuples) -> bool array [q, k])."""
        knodes, qnodes = [], []

        def collect(s):
            if s is None:
                return
            if s.kind == "select":
                for side, acc in ((s.keys, knodes), (s.queries, qnodes)):
                    if not isinstance(side, Full) and side.id not in [x.id for x in acc]:
                        acc.append(side)
            else:
                for _, c in s.children():
                    collect(c)
        collect(finite)

        def table(ktuples, qtuples):
            def ev(s):
                if s is None:
                    return np.ones((len(qtuples), len(ktuples)), dtype=bool)
                if s.kind == "select":
                    kv = self.side_values(s.keys, knodes, ktuples, user)
                    qv = self.side_values(s.queries, qnodes, qtuples, user)
                    try:
                        return np.asarray(elementwise.compare(s.predicate, kv[None, :], qv[:, None]), dtype=bool)
                    except RaspError as e:
                        raise refuse(user, f"the selector compares values it cannot: {e.message}") from None
                if s.kind in ("select_and", "and_list"):
                    out = np.ones((len(qtuples), len(ktuples)), dtype=bool)
                    for _, c in s.children():
                        out &= ev(c)
                    return out
                if s.kind == "select_or":
                    return ev(s.left) | ev(s.right)
                if s.kind == "select_not":
                    return ~ev(s.inner)
                raise refuse(user, f"unexpected selector part {s.kind}")
            return ev(finite)
        return knodes, qnodes, table

    def side_values(self, side: Node, nodes: list, tuples: list, user: Node) -> np.ndarray:
        if isinstance(side, Full):
            return elementwise.as_array(side.value).reshape(1).repeat(len(tuples))
        j = [x.id for x in nodes].index(side.id)
        return self.typed([t[j] for t in tuples], side)

    def counting_head(self, n: Node, shape: SelectorShape, value: Node | None):
        """A counting head over [key tuple (+ the aggregated value)]; returns (head, ktuples, query block,
        qtuples, P [q, k-tuple], value index per column or None)."""
        knodes, qnodes, table = self.finite_parts(shape.finite, n)
        extra = [value] if value is not None and not isinstance(value, Full) else []
        kblock, ktuples = self.joint(knodes + extra, n)
        qblock, qtuples = self.joint(qnodes, n)
        base = [t[:len(knodes)] for t in ktuples]
        P = table(base, qtuples) if ktuples else np.zeros((len(qtuples), 0), bool)
        head = f"h{n.id}"
        self.add(R.CountHead(head, kblock, len(ktuples), shape.range))
        self.b.heads.append({"layer": self.layer, "name": self.p.name(n), "kind": "count", "range": shape.range,
                             "keys": [self.p.name(x) for x in knodes], "queries": [self.p.name(x) for x in qnodes]})
        vals = [t[len(knodes)] for t in ktuples] if extra else None
        return head, qblock if qnodes else None, P.astype(np.float64), vals

    def width(self, n: Node):
        shape = self.d.shapes[n.selector.id]
        head, q, P, _ = self.counting_head(n, shape, None)
        name = f"n{n.id}"
        self.add(R.Readout(name, head, q, P, 0.0, 1.0))
        self.b.info[n.id] = Cnt(name, head, 1)

    def aggregate(self, n: Node):
        shape = self.d.shapes[n.selector.id]
        sort = self.d.sorts[n.id]
        if shape.kind in ("shift", "lookup", "tiebreak"):
            return self.lookup(n, shape)
        value = n.sop
        if sort.tag == "rat":
            head, q, P, vals = self.counting_head(n, shape, value)
            if vals is None:                               # a constant value
                vals = [value.value] * P.shape[1]
            try:
                fr = [Fraction(v).limit_denominator(1000) for v in vals]
            except (TypeError, ValueError):
                raise refuse(n, f"'{self.p.name(n)}' averages values that are not numbers") from None
            if any(float(f) != float(v) for f, v in zip(fr, vals)):
                raise refuse(n, f"'{self.p.name(n)}' averages values that are not fractions with small "
                                f"denominators")
            den = math.lcm(*[f.denominator for f in fr]) if fr else 1
            bound = max([1.0] + [abs(float(v)) for v in vals])
            num, wid = f"n{n.id}.N", f"n{n.id}.W"
            self.add(R.Readout(num, head, q, P * np.array([float(v) for v in vals])[None, :], 0.0, bound))
            self.add(R.Readout(wid, head, q, P, 0.0, 1.0))
            if not isinstance(n.default, (int, float, bool)):
                raise refuse(n, f"'{self.p.name(n)}' has a non-numeric default")
            self.b.info[n.id] = Rat(num, wid, head, den, n.default, bound)
            return
        # a categorical copy: which values are present among the selected keys
        head, q, P, vals = self.counting_head(n, shape, value)
        if vals is None:
            vals = [value.value] * P.shape[1]
        out_values, index = [], {}
        for v in vals + [n.default]:
            if freeze(v) not in index:
                index[freeze(v)] = len(out_values)
                out_values.append(v)
        if any(not isinstance(v, str) for v in vals):
            raise refuse(n, f"'{self.p.name(n)}' averages numbers over a selector that may select several keys "
                            f"(a mean); compare the mean with a constant instead")
        bits, slots = [], []
        distinct = list(dict.fromkeys(freeze(v) for v in vals))
        for k, fv in enumerate(distinct):
            cols = np.array([freeze(v) == fv for v in vals], dtype=np.float64)
            cname = f"n{n.id}.c{k}"
            self.add(R.Readout(cname, head, q, P * cols[None, :], 0.0, 1.0))
            bname = f"n{n.id}.b{k}"
            self.add(R.Sign(bname, cname, head, 1.0, -0.5))
            bits.append(bname)
            slots.append(index[fv])
        name = f"n{n.id}"
        self.add(R.AnyOf(name, bits, slots, index[freeze(n.default)], len(out_values)))
        self.b.info[n.id] = Fin(name, out_values)

    def lookup(self, n: Node, shape: SelectorShape):
        value = self.fin(n.sop) if not isinstance(n.sop, Full) else Fin("not_bos", [n.sop.value])
        out_values = list(value.values)
        if freeze(n.default) not in {freeze(v) for v in out_values}:
            out_values.append(n.default)
        index = {freeze(v): i for i, v in enumerate(out_values)}
        width = len(out_values)
        vblock = f"n{n.id}.v"
        remap = [index[freeze(v)] for v in value.values]
        self.add(R.Table(vblock, [value.block], [len(value.values)], [(i,) for i in range(len(value.values))],
                         remap, width))
        name = f"n{n.id}"
        default = index[freeze(n.default)]
        if shape.kind == "shift":
            c = shape.shift
            if c < 0:
                raise refuse(n, f"'{self.p.name(n)}' reads a later position; a next-position head needs the "
                                f"length to know when there is none (only shifts backwards are length-free "
                                f"here)")
            W = np.zeros((4, 3))          # q = [t, t^2, 1/(t+2), 1], k = [t, t^2, 1/(t+2)]
            W[0, 0], W[3, 0], W[3, 1] = 2.0, -2.0 * c, -1.0
            self.add(R.LookupHead(name, ["pos", "one"], ["pos"], W, vblock, width, default, "none",
                                  lambda n_: 1.0))
            kind = f"previous ({c} back): score -(t_k - (t_q - {c}))^2 + const"
        elif shape.kind == "lookup":
            cnt = self.b.info[shape.count.id]
            s = self.d.sorts[shape.count.id]
            if not isinstance(cnt, Cnt) or s.single is None or s.const > -1 or cnt.den != 1:
                raise refuse(n, f"'{self.p.name(n)}' selects the position equal to a count that may point past "
                                f"the last position; write it as a width minus at least 1")
            width_beta = self.b.info[s.single].beta
            W = np.zeros((1 + self._width_of(width_beta), 3))
            W[0, 0] = 2.0
            W[-1, 1] = -1.0
            self.add(R.LookupHead(name, [cnt.block, width_beta], ["pos"], W, vblock, width, default, "none",
                                  lambda n_: 1.0 / (n_ + 1.0)))
            kind = "position named by a count: score (2 t C - t^2) / D"
        else:
            knodes, qnodes, table = self.finite_parts(shape.finite, n)
            kblock, ktuples = self.joint(knodes, n)
            qblock, qtuples = self.joint(qnodes, n)
            P = table(ktuples, qtuples).astype(np.float64)
            m, K = P.shape
            W = np.zeros((m + 1, K + 3 + 1))   # q = [qjoint, 1], k = [kjoint, t, t^2, 1/(t+2), bos]
            W[:m, :K] = P
            W[m, K + 2] = -0.5
            W[m, K + 3] = 0.75
            self.add(R.LookupHead(name, [qblock, "one"], [kblock, "pos", "bos"], W, vblock, width, default,
                                  "past", lambda n_: 0.5 / (n_ * (n_ + 1.0))))
            kind = "rightmost selected key: score [selected] - 1/(2(p+1)), BOS 1/4"
        self.b.heads.append({"layer": self.layer, "name": self.p.name(n), "kind": shape.kind, "score": kind})
        self.b.info[n.id] = Fin(name, out_values)

    def _width_of(self, block: str) -> int:
        for op in self.b.ops:
            if isinstance(op, R.CountHead) and op.name == block:
                return op.w_v.shape[0]
        raise KeyError(block)
