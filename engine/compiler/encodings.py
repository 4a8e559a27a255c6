"""Pass 4, choose encodings: which values get residual blocks, in which encoding, written by which
sublayer; how every head scores and what it reads; what every MLP computes; how the output is read.

Only what attention and the unembedding read needs a block of its own. Elementwise s-ops are fused:
an MLP computes whatever a later head (or the output) needs from the blocks that exist by then, and
an attention head reads any function of a single categorical block directly (the function is folded
into its query, key or value matrix), so `indices - 1` or `tokens == "a"` cost no MLP and no width.

Decisions, in order of the layers: for each head of layer l, each side of each select atom must be
readable from one categorical block, else the value is materialized (categorical) by the MLP of its
own layer (or the latest MLP before l); a selector that is not single-level is split into disjoint
heads (selector_width: widths add; an aggregate of a constant: "any part found a key"), or, for
other aggregates, read through a joint encoding of its key (and query) values built by an MLP.
"""
from __future__ import annotations

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Node
from . import selectors
from .extract import ProgramGraph
from .fused import Constraint, Fused, Virtual, block_domain, lookup, union_values
from .plan import (EMBEDDING, Availability, Block, HeadPlan, OutputPlan, Plan, Reader, Target, ValueRead, attn,
                   mlp)
from .validate import Program
from .value_sets import ValueSets

MAX_OUTPUT_CLASSES = 256
JOINT_COST_FACTOR = 3


class Planner:
    def __init__(self, program: Program, graph: ProgramGraph, vs: ValueSets):
        self.program, self.graph, self.vs = program, graph, vs
        self.N, self.L, self.limits = program.max_len, graph.layers, program.limits
        self.virtual: dict = {}
        self.constraints = list(vs.constraints)
        self.avail = Availability(self.virtual)
        self.blocks: list[Block] = []
        self.heads: list[HeadPlan] = []
        self.head_index: dict = {}
        self.targets: list[Target] = []
        self.notes: list[str] = []
        self.pre_mlp = False
        by_name = {d.name: d.value for d in program.interp.definitions}
        self.overrides = {by_name[n].id: enc for n, enc in program.encodings.items()}
        self.one = self.add(Block("one", "one", None, {}, EMBEDDING))
        self.bos = self.add(Block("bos", "bos", None, {}, EMBEDDING))
        for n in graph.nodes:
            if n.kind in ("tokens", "indices"):
                values = vs.values[n.id]
                self.add(Block(n.kind, "categorical", values, {n.id: values}, EMBEDDING, key=n.id))

    # ---------------------------------------------------------------- bookkeeping

    def add(self, block: Block) -> Block:
        taken = {b.name for b in self.blocks}
        base, i = block.name, 2
        if base in taken:
            block.name = base = f"{base} ({block.kind})"
        while block.name in taken:
            block.name = f"{base} #{i}"
            i += 1
        self.blocks.append(block)
        self.avail.register(block)
        return block

    def name(self, key) -> str:
        if isinstance(key, Node):
            key = key.id
        if isinstance(key, int):
            return self.program.name(self.graph.by_id[key])
        if key[0] == "part":
            return f"{self.name(key[1])} part {key[2] + 1}"
        return "(" + ", ".join(self.name(k) for k in key[1:]) + ")"

    def where(self, node: Node) -> str:
        span = self.program.span_of(node)
        return f" (line {span.line})" if span is not None and span.source == "<program>" else ""

    def depth(self, key) -> int:
        if isinstance(key, tuple) and key[0] == "joint":
            return max(self.graph.depth[k] for k in key[1:])
        return self.graph.depth[key]

    def mlp_layer(self, key, consumer_layer: int) -> int:
        """The MLP that computes `key` for a consumer at attention layer `consumer_layer`: the MLP of the
        key's own layer, or the pre-attention MLP (0) when the consumer is in layer 1."""
        m = max(self.depth(key), 1)
        if m > consumer_layer - 1:
            m = consumer_layer - 1
        if m == 0:
            self.pre_mlp = True
        return m

    # ---------------------------------------------------------------- run

    def run(self) -> Plan:
        for layer in range(1, self.L + 1):
            for node in self.graph.attention_nodes(layer):
                if node.kind == "selector_width":
                    self.plan_width(node, layer)
                else:
                    self.plan_aggregate(node, layer)
        output = self.plan_output()
        if self.pre_mlp:
            self.notes.append("an extra MLP sublayer before the first attention layer computes values the first "
                              "heads read that mix tokens and positions (the embedding can only add them): "
                              "one more layer than the analysis")
        for t in self.targets:
            if t.layer == 0:
                self.notes.append(f"the extra MLP computes '{self.name(t.key)}'")
        return Plan(self.blocks, self.heads, self.targets, output, self.virtual, self.constraints, self.L,
                    self.pre_mlp, self.notes, self.avail, self.name, self.vs.joints)

    # ---------------------------------------------------------------- heads

    def head(self, sel: Node, layer: int, mode: str, tables, part, shared: bool, tag=None) -> HeadPlan:
        key = (sel.id, layer, mode, part, tag)
        if shared and key in self.head_index:
            return self.head_index[key]
        h = HeadPlan(layer, sel, mode, tables, part=part)
        self.heads.append(h)
        if shared:
            self.head_index[key] = h
        return h

    def plan_width(self, node: Node, layer: int):
        sel = node.selector
        boxes, groups = self.selector_boxes(sel, layer)
        lo, hi = self.vs.width_range[node.id]
        name = self.name(node)
        if len(boxes) <= 1:
            tables = selectors.box_tables(boxes[0], groups) if boxes else selectors.never_selects()
            h = self.head(sel, layer, "width", tables, None, shared=False)
            values = np.arange(lo, hi + 1, dtype=np.int64)
            h.out = self.add(Block(f"{name} [1/(w+1)]", "numerical", values, {node.id: values}, attn(layer),
                                   phys=1.0 / (values + 1), key=node.id, note="BOS weight 1/(w+1)"))
            h.serves.append(name)
            return
        # one head over joint values costs about three times their count (the joint block's residual
        # dimensions, the MLP units that write it, the head's score coordinates); split heads cost the
        # MLP that adds the parts, a table over every combination of the parts' widths
        joint = self.joint_cost(sel)
        if joint <= self.limits.max_categories and JOINT_COST_FACTOR * joint < (hi + 1) ** len(boxes):
            boxes, groups = self.joint_boxes(sel, layer, node, "selector_width")
            h = self.head(sel, layer, "width", selectors.box_tables(boxes[0], groups) if boxes
                          else selectors.never_selects(), None, shared=False, tag="joint")
            values = np.arange(lo, hi + 1, dtype=np.int64)
            h.out = self.add(Block(f"{name} [1/(w+1)]", "numerical", values, {node.id: values}, attn(layer),
                                   phys=1.0 / (values + 1), key=node.id, note="BOS weight 1/(w+1)"))
            h.serves.append(name)
            return
        parts = []
        for j, box in enumerate(boxes):
            h = self.head(sel, layer, "width", selectors.box_tables(box, groups), (j, len(boxes)), shared=False)
            pk = ("part", node.id, j)
            values = np.arange(0, hi + 1, dtype=np.int64)
            h.out = self.add(Block(f"{name} part {j + 1}/{len(boxes)} [1/(w+1)]", "numerical", values, {pk: values},
                                   attn(layer), phys=1.0 / (values + 1), key=pk, note="BOS weight 1/(w+1)"))
            h.serves.append(f"{name} (part {j + 1}/{len(boxes)})")
            parts.append(pk)
        self.virtual[node.id] = Virtual("sum", tuple(parts))
        self.constraints.append(Constraint(tuple(parts), lambda *ws, lo=lo, hi=hi: _between(sum(ws), lo, hi),
                                           f"the parts of {name} add up to {lo}..{hi}"))
        self.notes.append(f"selector_width '{name}'{self.where(node)}: no single head can score its selector "
                          f"(an 'or' across different values) and the joint values it reads would cost more than "
                          f"adding the parts, so {len(boxes)} heads count disjoint parts of it and the MLP adds them")

    def plan_aggregate(self, node: Node, layer: int):
        sel, vs = node.selector, self.vs
        encoding = self.aggregate_encoding(node)
        values = vs.values[node.id]
        name = self.name(node)
        if values is None and encoding == "categorical":
            raise RaspError(f"'{name}' has too many possible values to encode ({vs.why_none[node.id]})",
                            self.program.span_of(node), "limit")
        self.check_categories(node.id, values, encoding, node)
        sop_values = vs.values[node.sop.id]
        constant = sop_values is not None and sop_values.size == 1
        boxes, groups = self.selector_boxes(sel, layer)
        tag = None
        if len(boxes) > 1 and not constant:
            boxes, groups = self.joint_boxes(sel, layer, node, "aggregate")
            tag = "joint"
        default_ok = node.id not in vs.dropped_default
        if len(boxes) <= 1:
            tables = selectors.box_tables(boxes[0], groups) if boxes else selectors.never_selects()
            h = self.head(sel, layer, "aggregate", tables, None, shared=True, tag=tag)
            out = self.add(Block(name, encoding, values, {node.id: values}, attn(layer), key=node.id))
            h.reads.append(ValueRead(node.id, out, self.value_reader(node.sop, layer, encoding), node.default,
                                     default_ok))
            h.serves.append(name)
            return
        # an aggregate of a constant over a selector split into boxes: "did any box find a key?"
        c = sop_values[0].item()
        pvals = sop_values
        if default_ok:
            pvals = union_values(sop_values, elementwise.as_array(node.default).reshape(1), exact=True)
        penc = "numerical" if pvals.dtype.kind in "if" else "categorical"
        parts = []
        for j, box in enumerate(boxes):
            h = self.head(sel, layer, "aggregate", selectors.box_tables(box, groups), (j, len(boxes)), shared=True)
            pk = ("part", node.id, j)
            out = self.add(Block(f"{name} part {j + 1}/{len(boxes)}", penc, pvals, {pk: pvals}, attn(layer), key=pk))
            h.reads.append(ValueRead(pk, out, Reader(None, sop_values, np.zeros(1, bool)), node.default, default_ok))
            h.serves.append(f"{name} (part {j + 1}/{len(boxes)})")
            parts.append(pk)
        self.virtual[node.id] = Virtual("any", tuple(parts), c, node.default)
        self.notes.append(f"aggregate '{name}'{self.where(node)}: no single head can score its selector (an 'or' "
                          f"across different values); {len(boxes)} heads each look for a key in one disjoint part "
                          f"and the MLP combines them (the aggregated value is the constant {c!r})")

    def selector_boxes(self, sel: Node, layer: int, keys=None, queries=None):
        atoms = selectors.atoms_of(sel)
        if len(atoms) > self.limits.max_selector_atoms:
            raise RaspError(f"the selector '{self.name(sel)}' combines {len(atoms)} select(...) conditions; the "
                            f"compiler's limit is {self.limits.max_selector_atoms}", self.program.span_of(sel), "limit")
        keys = keys or {a.id: self.select_side(a.keys, layer) for a in atoms}
        queries = queries or {a.id: self.select_side(a.queries, layer) for a in atoms}
        groups = selectors.build_groups(atoms, keys, queries)
        return selectors.decompose(sel, groups), groups

    def joint_cost(self, sel: Node) -> int:
        """An upper bound on the size of the joint blocks `joint_boxes` would build: for each side, the
        product of the value counts of the distinct s-ops the atoms read on that side (one block when
        both sides read the same s-ops). Unknown value sets count as too big."""
        atoms = selectors.atoms_of(sel)
        sizes = []
        for side in ("keys", "queries"):
            nodes = {getattr(a, side).id: getattr(a, side) for a in atoms}
            size = 1
            for n in nodes.values():
                values = self.vs.values.get(n.id)
                if values is None:
                    return np.iinfo(np.int64).max
                size *= len(values)
            sizes.append((tuple(sorted(nodes)), size))
        if sizes[0][0] == sizes[1][0]:
            return sizes[0][1]
        return sizes[0][1] + sizes[1][1]

    def joint_boxes(self, sel: Node, layer: int, node: Node, what: str):
        """Read the keys (and, if still needed, the queries) of all atoms from one joint block, so that
        one table scores them."""
        atoms = selectors.atoms_of(sel)
        keys = {a.id: self.select_side(a.keys, layer) for a in atoms}
        queries = {a.id: self.select_side(a.queries, layer) for a in atoms}
        read: dict = {}                    # joint block name -> the sides read through it
        for side in ("keys", "queries"):
            keys, queries = selectors.attach_constants(atoms, keys, queries)
            readers = keys if side == "keys" else queries
            if len({id(r.block) for r in readers.values()}) > 1:
                nodes = sorted({getattr(a, side).id: getattr(a, side) for a in atoms}.items())
                joint = self.materialize_joint([n for _, n in nodes], layer)
                joined = {a.id: Reader(joint, joint.provides[getattr(a, side).id],
                                       np.zeros(joint.size, dtype=bool)) for a in atoms}
                keys, queries = (joined, queries) if side == "keys" else (keys, joined)
                read.setdefault(joint.name, []).append(side)
            boxes, groups = self.selector_boxes(sel, layer, keys, queries)
            if len(boxes) <= 1:
                for name, sides in read.items():
                    self.notes.append(f"{what} '{self.name(node)}'{self.where(node)}: its selector reads the "
                                      f"{' and '.join(sides)} through the joint values {name} built by an MLP, "
                                      f"so that one head can score it")
                return boxes, groups
        raise AssertionError("a joint encoding always gives one table")

    # ---------------------------------------------------------------- readers

    def categorical_reader(self, node: Node, before: int) -> Reader | None:
        srcs = self.avail.sources(node, before)
        if srcs is None:
            raise AssertionError(f"{self.name(node)} is not available before sublayer {before}")
        if not srcs:
            values, bad = Fused({}, 1, self.virtual).value(node)
            return Reader(None, np.asarray(values)[:1], np.asarray(bad)[:1])
        if len(srcs) == 1 and srcs[0].kind == "categorical":
            values, bad = self.avail.read(node, srcs[0])
            return Reader(srcs[0], values, bad)
        return None

    def select_side(self, node: Node, layer: int) -> Reader:
        r = self.categorical_reader(node, attn(layer))
        if r is not None:
            return r
        block = self.materialize(node, "categorical", layer)
        return Reader(block, block.values, np.zeros(block.size, dtype=bool))

    def value_reader(self, node: Node, layer: int, encoding: str) -> Reader:
        """How a head (or the unembedding, layer = L + 1) reads `node` into `encoding`."""
        if encoding == "categorical":
            return self.select_side(node, layer)
        before = attn(layer)
        srcs = self.avail.sources(node, before)
        if srcs is not None and len(srcs) <= 1:
            if not srcs:
                values, bad = Fused({}, 1, self.virtual).value(node)
                return self.numeric_reader(Reader(None, np.asarray(values)[:1], np.asarray(bad)[:1]), node)
            b = srcs[0]
            if b.kind == "categorical":
                values, bad = self.avail.read(node, b)
                return self.numeric_reader(Reader(b, values, bad), node)
            if b.identity and b.key == node.id:
                return Reader(b, None, None, affine=(1.0, 0.0))
            if b.identity and b.values is not None:
                values, bad = self.avail.read(node, b)
                fit = _affine(b.phys_values(), values, bad)
                if fit is not None:
                    return Reader(b, values, bad, affine=fit)
        if layer == self.L + 1 and srcs is not None and len(srcs) > 1:
            linear = self.linear_reader(node, srcs)
            if linear is not None:
                return linear
        block = self.materialize(node, self.overrides.get(node.id, "numerical"), layer)
        if block.kind == "categorical":
            return self.numeric_reader(Reader(block, block.values, np.zeros(block.size, bool)), node)
        return Reader(block, None, None, affine=(1.0, 0.0))

    def linear_reader(self, node: Node, srcs: list[Block]) -> Reader | None:
        """The unembedding reads a numerical output that is exactly linear in numerical blocks holding
        their values (`opens - closes`): sum a_i x_i + b, checked on every realizable combination."""
        if any(not (b.identity and b.values is not None) for b in srcs):
            return None
        try:
            domain = self.domain(srcs, node)
        except RaspError:
            return None
        values, bad = Fused(domain.env, domain.size, self.virtual).value(node)
        y = np.asarray(values)
        if y.dtype.kind not in "bif" or not domain.size or np.asarray(bad).any():
            return None
        X = np.stack([b.phys_values()[domain.index[i]] for i, b in enumerate(srcs)] + [np.ones(domain.size)], axis=1)
        y = y.astype(np.float64)
        coef = np.linalg.lstsq(X, y, rcond=None)[0]
        coef = np.where(np.abs(coef - np.round(coef)) < 1e-9, np.round(coef), coef)
        if not np.allclose(X @ coef, y, rtol=1e-9, atol=1e-12):
            return None
        return Reader(srcs[0], None, None, affine=(0.0, float(coef[-1])),
                      terms=[(b, float(a)) for b, a in zip(srcs, coef[:-1])])

    def numeric_reader(self, r: Reader, node: Node) -> Reader:
        if np.asarray(r.values).dtype.kind not in "bif":
            raise RaspError(f"'{self.name(node)}' holds {elementwise.type_of(np.asarray(r.values))} values, "
                            f"which a numerical encoding cannot hold", self.program.span_of(node), "type")
        return r

    # ---------------------------------------------------------------- materialization

    def check_categories(self, key, values, encoding: str, node: Node):
        if encoding == "categorical" and values is not None and len(values) > self.limits.max_categories:
            raise RaspError(f"'{self.name(key)}' has {len(values)} possible values; a categorical encoding allows "
                            f"{self.limits.max_categories}", self.program.span_of(node), "limit")

    def materialize(self, node: Node, encoding: str, consumer_layer: int) -> Block:
        before = attn(consumer_layer)
        for b in self.avail.by_key.get(node.id, []):
            if b.kind == encoding and b.written < before and len(b.provides) == 1 and (
                    encoding == "categorical" or b.identity):
                return b
        values = self.vs.values.get(node.id)
        if values is None:
            why = self.vs.why_none.get(node.id, "")
            raise RaspError(f"'{self.name(node)}' has too many possible values to encode"
                            + (f" ({why})" if why else ""), self.program.span_of(node), "limit")
        self.check_categories(node.id, values, encoding, node)
        if encoding == "numerical" and values.dtype.kind not in "bif":
            raise RaspError(f"'{self.name(node)}' holds {elementwise.type_of(values)} values, which a numerical "
                            f"encoding cannot hold", self.program.span_of(node), "type")
        m = self.mlp_layer(node.id, consumer_layer)
        block = self.add(Block(self.name(node), encoding, values, {node.id: values}, mlp(m), key=node.id))
        self.targets.append(Target(node.id, block, m, node=node))
        return block

    def materialize_joint(self, nodes: list[Node], consumer_layer: int) -> Block:
        key = ("joint",) + tuple(n.id for n in nodes)
        for b in self.blocks:
            if b.key == key and b.written < attn(consumer_layer):
                return b
        m = self.mlp_layer(key, consumer_layer)
        srcs: list[Block] = []
        for n in nodes:
            for b in self.avail.sources(n, mlp(m)):
                if all(b is not x for x in srcs):
                    srcs.append(b)
        domain = self.domain(srcs, nodes[0])
        fused = Fused(domain.env, domain.size, self.virtual)
        codes, bad = [], np.zeros(domain.size, dtype=bool)
        for n in nodes:
            values, b = fused.value(n)
            table = self.vs.values[n.id]
            code = lookup(table, values)
            codes.append(code)
            bad |= b | (code < 0)
        codes = np.stack(codes, axis=1)[~bad]
        rows = np.unique(codes, axis=0)
        if len(rows) > self.limits.max_categories:
            raise RaspError(f"the joint values of {self.name(key)} are {len(rows)}; a categorical encoding allows "
                            f"{self.limits.max_categories}", self.program.span_of(nodes[0]), "limit")
        provides = {n.id: self.vs.values[n.id][rows[:, i]] for i, n in enumerate(nodes)}
        labels = [tuple(provides[n.id][r].item() for n in nodes) for r in range(len(rows))]
        block = self.add(Block(self.name(key), "categorical", labels, provides, mlp(m), key=key, codes=rows))
        self.targets.append(Target(key, block, m, components=tuple(nodes)))
        return block

    def domain(self, srcs: list[Block], node: Node):
        return block_domain(srcs, self.constraints, self.limits.max_domain, f"'{self.name(node)}'", self.program.span_of(node),
                            self.vs.joints)

    # ---------------------------------------------------------------- encodings

    def aggregate_encoding(self, node: Node) -> str:
        vs, name = self.vs, self.name(node)
        override = self.overrides.get(node.id)
        sop_values = vs.values.get(node.sop.id)
        if node.id in vs.averages:
            if override == "categorical":
                raise RaspError(f"'{name}' averages several positions; only a numerical encoding can hold a mean",
                                self.program.span_of(node), "type")
            return "numerical"
        if sop_values is None:
            return override or "numerical"
        values = vs.values.get(node.id)
        if values is not None and values.dtype.kind in "OU" and sop_values.dtype.kind in "if":
            # a default of another type beside the values: one more class of a categorical block
            if override == "numerical":
                raise RaspError(f"'{name}' holds {elementwise.type_of(sop_values)} values and, where its selector "
                                f"selects nothing, its default {node.default!r}: a numerical encoding cannot hold "
                                f"both", self.program.span_of(node), "type")
            return "categorical"
        if sop_values.dtype.kind not in "if":
            if vs.constant.get(node.selector.id) is True and sop_values.size > 1 and self.N > 1:
                raise RaspError(f"'{name}' averages {elementwise.type_of(sop_values)} values over every position, "
                                f"an error for every input longer than 1 (only numbers can be averaged)",
                                self.program.span_of(node), "type")
            if override == "numerical":
                raise RaspError(f"'{name}' holds {elementwise.type_of(sop_values)} values, which a numerical "
                                f"encoding cannot hold", self.program.span_of(node), "type")
            return "categorical"
        if override:
            return override
        if any(c.kind == "select" for c in self.graph.consumers[node.id]):
            return "categorical"
        values = vs.values.get(node.id)
        if node is self.program.output and values is not None and values.dtype.kind != "f" \
                and len(values) <= MAX_OUTPUT_CLASSES:
            return "categorical"
        return "numerical"

    def output_encoding(self, node: Node) -> str:
        override = self.overrides.get(node.id)
        values = self.vs.values.get(node.id)
        if node.kind == "aggregate":
            return self.aggregate_encoding(node)
        if override:
            return override
        if node.kind == "selector_width":
            return "categorical"
        if values is None:
            return "numerical"
        if values.dtype.kind in "if" and (values.dtype.kind == "f" or len(values) > MAX_OUTPUT_CLASSES):
            return "numerical"
        return "categorical"

    def plan_output(self) -> OutputPlan:
        node = self.program.output
        encoding = self.output_encoding(node)
        reader = self.value_reader(node, self.L + 1, encoding)
        classes = None
        if encoding == "categorical":
            classes = self.vs.values[node.id]
            self.check_categories(node.id, classes, encoding, node)
        return OutputPlan(node, encoding, classes, reader)


def _between(total, lo, hi):
    return (total >= lo) & (total <= hi)


def _affine(x: np.ndarray, y: np.ndarray, bad: np.ndarray):
    """(a, b) with y = a x + b on the good points, or None."""
    good = ~np.asarray(bad)
    x, y = np.asarray(x, dtype=np.float64)[good], np.asarray(y)
    if y.dtype.kind not in "bif":
        return None
    y = y[good].astype(np.float64)
    if x.size == 0:
        return None
    if x.size == 1 or np.ptp(x) == 0:
        return (0.0, float(y[0])) if np.allclose(y, y[0]) else None
    a, b = np.polyfit(x, y, 1)
    return (float(a), float(b)) if np.allclose(a * x + b, y, rtol=1e-12, atol=1e-12) else None


def choose_encodings(program: Program, graph: ProgramGraph, vs: ValueSets) -> Plan:
    return Planner(program, graph, vs).run()
