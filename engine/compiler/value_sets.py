"""Pass 3, infer value sets: every s-op's possible values over the vocabulary and lengths 1..max_len.

tokens: the vocabulary; indices: 0..max_len-1; constants: themselves; elementwise ops: the op applied
(by engine.elementwise, so semantics cannot drift) to every combination of the values of what they
are computed from; categorical aggregates: the value set of the s-op (and the default where a row
can be empty, of any type: then the set holds values of several types, an object array); numerical means: every mean of 1..max_len values (Minkowski sums); selector_width:
0..max_len, narrowed where the selector provably selects (or never selects) the query itself.

Also selector facts the later passes use: constant selectors, reflexivity, "selects at most one key".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Full, Node
from .extract import ProgramGraph
from .fused import (Constraint, DomainTooLarge, Fused, elementwise_leaves, fused_kind, joint_domain, near_duplicates,
                    union_values, unique_rows, unique_values)
from .nonempty import NonEmpty
from .plan import Block
from .position_tables import known_table
from .validate import Program

REFLEXIVE = {"==": True, "<=": True, ">=": True, "!=": False, "<": False, ">": False}
VALUE_SET_DOMAIN = 500_000     # combinations enumerated to infer one elementwise value set exactly
JOINT_MEANS = 20_000           # joint values of means over one selector tracked together (beyond: independent)


@dataclass
class ValueSets:
    values: dict[int, np.ndarray | None]          # node id -> sorted possible values (None: too many)
    why_none: dict[int, str] = field(default_factory=dict)
    width_range: dict[int, tuple[int, int]] = field(default_factory=dict)
    constant: dict[int, bool | None] = field(default_factory=dict)     # selector id -> constant truth
    reflexive: dict[int, bool | None] = field(default_factory=dict)    # selector id -> selects the query itself
    at_most_one: dict[int, bool] = field(default_factory=dict)         # selector id -> selects <= 1 key per query
    lengths: set = field(default_factory=set)       # selector_width ids equal to the input length
    averages: set = field(default_factory=set)      # aggregate ids that may average several values
    never_empty: set = field(default_factory=set)   # aggregate ids that never give their default (nonempty.py)
    dropped_default: dict[int, str] = field(default_factory=dict)   # a list or dict default: an empty row fails
    constraints: list = field(default_factory=list)
    joints: list = field(default_factory=list)      # (aggregate ids, rows): means over one selector, jointly
    inexact: set = field(default_factory=set)       # ids whose floats may differ in the last bits from the
                                                    # evaluator's (means of non-integers and what uses them)
    rounding: dict = field(default_factory=dict)    # id -> (a, b): distinct floats exact arithmetic makes equal
    root: dict = field(default_factory=dict)        # id -> the node whose too-large value set it inherits

    def get(self, node) -> np.ndarray | None:
        return self.values.get(node.id)


def infer_value_sets(program: Program, graph: ProgramGraph) -> ValueSets:
    N = program.max_len
    vs = ValueSets({})
    nonempty = NonEmpty(vs, N, lambda keys: _injective_over_positions(keys, vs, N))
    for node in graph.nodes:
        k = node.kind
        if k in ("select", "select_and", "select_or", "select_not"):
            _selector_facts(node, vs, N)
        elif k == "tokens":
            vs.values[node.id] = unique_values(program.vocab_array)
        elif k == "indices":
            vs.values[node.id] = np.arange(N, dtype=np.int64)
        elif k == "constant":
            vs.values[node.id] = elementwise.as_array(node.value).reshape(1)
        elif k in ("map", "sequencemap"):
            _elementwise_values(program, node, vs)
        elif k == "selector_width":
            lo, hi = _width_range(node.selector, vs, N)
            vs.width_range[node.id] = (lo, hi)
            vs.values[node.id] = np.arange(lo, hi + 1, dtype=np.int64)
            if vs.constant.get(node.selector.id) is True:
                vs.lengths.add(node.id)
                for ind in (n for n in graph.nodes if n.kind == "indices"):
                    vs.constraints.append(Constraint((ind.id, node.id), lambda i, w: i < w, "indices < length"))
        elif k == "aggregate":
            _aggregate_values(program, node, vs, nonempty)
            _joint_means(program, graph, node, vs)
    return vs


# ------------------------------------------------------------------ selectors

def _selector_facts(sel: Node, vs: ValueSets, N: int):
    k = sel.kind
    if k == "select":
        const = None
        if isinstance(sel.keys, Full) and isinstance(sel.queries, Full):
            a, b = elementwise.as_array(sel.keys.value), elementwise.as_array(sel.queries.value)
            try:
                const = bool(elementwise.compare(sel.predicate, a, b))
            except RaspError as e:
                raise e.located(sel.origin)
        reflexive = const if const is not None else (
            REFLEXIVE[sel.predicate] if sel.keys is sel.queries else None)
        vs.constant[sel.id] = const
        vs.reflexive[sel.id] = reflexive
        vs.at_most_one[sel.id] = sel.predicate == "==" and _injective_over_positions(sel.keys, vs, N)
    elif k == "select_not":
        c, r = vs.constant[sel.inner.id], vs.reflexive[sel.inner.id]
        vs.constant[sel.id] = None if c is None else not c
        vs.reflexive[sel.id] = None if r is None else not r
        vs.at_most_one[sel.id] = vs.constant[sel.id] is False
    else:
        both = (sel.left.id, sel.right.id)
        vs.constant[sel.id] = _combine([vs.constant[i] for i in both], k == "select_and")
        vs.reflexive[sel.id] = _combine([vs.reflexive[i] for i in both], k == "select_and")
        if k == "select_and":
            vs.at_most_one[sel.id] = any(vs.at_most_one[i] for i in both) or vs.constant[sel.id] is False
        else:
            vs.at_most_one[sel.id] = vs.constant[sel.id] is False


def _combine(values: list, conjunction: bool):
    absorbing = not conjunction   # False absorbs 'and'; True absorbs 'or'
    if absorbing in values:
        return absorbing
    if all(v is not None for v in values):
        return not absorbing
    return None


def _injective_over_positions(keys: Node, vs: ValueSets, N: int) -> bool:
    """Do the keys differ at every two positions? (indices, or a one-to-one function of indices)"""
    if keys.kind == "indices":
        return True
    if keys.kind not in ("map", "sequencemap"):
        return False
    leaves = elementwise_leaves(keys)
    if len(leaves) != 1 or leaves[0].kind != "indices":
        return False
    try:
        out, bad = Fused({leaves[0].id: np.arange(N, dtype=np.int64)}, N).value(keys)
    except RaspError:
        return False
    return not bad.any() and unique_values(out).size == N


def _root_reason(program: Program, vs: ValueSets, missing: Node, node: Node) -> str:
    """Why `node` has no value set: name the intermediate whose own value set is too large (following
    s-ops that are too large only because what they are computed from is)."""
    root = vs.root.get(missing.id, missing)
    vs.root[node.id] = root
    span = program.span_of(root)
    where = f" (line {span.line})" if span is not None and span.source == "<program>" else ""
    return (f"it is computed from '{program.name(root)}'{where}, whose possible values are too many to list: "
            f"{vs.why_none.get(root.id, 'too many combinations')}")


def _width_range(sel: Node, vs: ValueSets, N: int) -> tuple[int, int]:
    const, refl = vs.constant.get(sel.id), vs.reflexive.get(sel.id)
    if const is False:
        return 0, 0
    lo = 1 if refl is True else 0
    hi = N - 1 if refl is False else N
    return lo, hi


# ------------------------------------------------------------------ elementwise

def node_domain(keys: list, vs: ValueSets, limit: int):
    """All realizable combinations of the values of graph nodes `keys` (constraints and joint means
    applied)."""
    joint_members = {k for ks, _ in vs.joints for k in ks}
    blocks = [Block(str(k), "numerical" if k in joint_members else "categorical", vs.values[k],
                    {k: vs.values[k]}, 0, key=k) for k in keys]
    return joint_domain(blocks, vs.constraints, limit, vs.joints)


def _elementwise_values(program: Program, node: Node, vs: ValueSets):
    leaves = elementwise_leaves(node)
    by_id = {n.id: n for n in leaves + list(node.inputs)}
    bases = [n.id for n in leaves]
    attempts = [bases, sorted({c.id for c in node.inputs if c.kind != "constant"})]
    reason = None
    for keys in attempts:
        missing = [k for k in keys if vs.values.get(k) is None]
        if missing:
            reason = _root_reason(program, vs, by_id[missing[0]], node)
            continue
        try:
            domain = node_domain(keys, vs, min(program.limits.max_domain, VALUE_SET_DOMAIN))
        except DomainTooLarge as e:
            reason = f"its inputs have {e.size} or more combinations"
            continue
        try:
            values, bad = Fused(domain.env, domain.size).value(node)
        except RaspError as e:
            raise RaspError(f"'{program.name(node)}' fails on every input: {e.message}", e.span or node.origin,
                            e.kind) from None
        good = values[~bad] if values.shape[0] else values
        if domain.size and not good.size:
            raise RaspError(f"'{program.name(node)}' has no value on any input (every combination of its "
                            f"inputs fails)", node.origin, "value")
        exact = not any(k in vs.inexact for k in keys)
        if not exact:
            vs.inexact.add(node.id)
        vs.values[node.id] = unique_values(good, exact)
        near = near_duplicates(vs.values[node.id]) if exact else []
        if near:
            vs.rounding[node.id] = near[0]
        return
    vs.values[node.id] = None
    vs.why_none[node.id] = reason or "too many combinations"


# ------------------------------------------------------------------ aggregates

def _aggregate_values(program: Program, node: Node, vs: ValueSets, nonempty: NonEmpty):
    sel = node.selector
    sop_values = vs.values.get(node.sop.id)
    never_empty = nonempty.default_unseen(node, sop_values)
    if never_empty:
        vs.never_empty.add(node.id)
    if sop_values is None:
        vs.values[node.id] = None
        vs.why_none[node.id] = _root_reason(program, vs, node.sop, node)
        return
    values = sop_values
    numeric = sop_values.dtype.kind in "if"
    if node.sop.id in vs.inexact:
        vs.inexact.add(node.id)
    several = not (vs.at_most_one.get(sel.id) or sop_values.size <= 1 or vs.constant.get(sel.id) is False)
    if sop_values.dtype.kind == "O" and several:
        _refuse_mixed_mean(program, node, sop_values)
    if numeric and several:
        vs.averages.add(node.id)
        if not integral(sop_values):
            vs.inexact.add(node.id)     # the evaluator's sum of non-integers depends on the order of positions
        positional = _positional_means(node, program.max_len) if integral(sop_values) else None
        values = positional if positional is not None else mean_values(sop_values, program.max_len,
                                                                        program.limits.max_means)
        if values is None:
            vs.values[node.id] = None
            vs.why_none[node.id] = (f"the means of up to {program.max_len} of its values are more than "
                                    f"{program.limits.max_means}")
            return
    if not never_empty:
        try:
            default = elementwise.as_array(node.default).reshape(1)
        except RaspError:
            default = None
            vs.dropped_default[node.id] = (
                f"the default {node.default!r} of '{program.name(node)}' is not a number, string or bool: an "
                f"empty row is an error (as in the evaluator)")
        if default is not None:
            if fused_kind(values, default) == "O" and node.id in vs.averages:
                raise RaspError(f"'{program.name(node)}'{_where(program, node)} averages "
                                f"{elementwise.type_of(sop_values)} values, and where its selector selects nothing "
                                f"it gives its default {node.default!r}, of another type: a mean needs a numerical "
                                f"encoding, which cannot hold {node.default!r} beside numbers (the evaluator gives "
                                f"it there); give a default of the values' type, e.g. 0", program.span_of(node),
                                "type")
            # a default of another type (the original's default 0 of an aggregate of strings) is one more
            # value: the model gives it exactly where the evaluator does
            values = union_values(values, default, node.id not in vs.inexact)
    if vs.constant.get(sel.id) is False:
        values = values[:0] if node.id in vs.dropped_default else elementwise.as_array(node.default).reshape(1)
    vs.values[node.id] = values


def _where(program: Program, node: Node) -> str:
    span = program.span_of(node)
    return f" (line {span.line})" if span is not None and span.source == "<program>" else ""


def _refuse_mixed_mean(program: Program, node: Node, sop_values: np.ndarray):
    """An aggregate over several keys of an s-op that holds values of several types: where the
    selected values are numbers, the evaluator gives their mean, which a copying (categorical) head
    cannot give, and a numerical one cannot hold the strings. Fine where only one number can occur
    (the mean of copies of one number is that number)."""
    groups = _split_number_values(sop_values)
    if groups <= 1:
        return
    raise RaspError(f"'{program.name(node)}'{_where(program, node)} may average several positions of "
                    f"'{program.name(node.sop)}', whose values mix types (e.g. an aggregate's default of another "
                    f"type beside its values): a mean of its numbers needs a numerical encoding, which cannot hold "
                    f"its other values; give that aggregate a default of its values' type", program.span_of(node),
                    "type")


def _split_number_values(values: np.ndarray) -> int:
    """How many distinct non-string values an object array holds."""
    return sum(1 for v in values.tolist() if not isinstance(v, str))


def _joint_means(program: Program, graph: ProgramGraph, node: Node, vs: ValueSets):
    """Means over one selector in one layer share their denominator: record the values they take
    together (the w-fold sums of the joint values of their s-ops, over w), so that tables over several
    of them enumerate only realizable combinations."""
    if node.id not in vs.averages or vs.values.get(node.id) is None:
        return
    depth = graph.depth[node.id]
    group = [n for n in graph.nodes if n.kind == "aggregate" and n.id in vs.averages and n.id <= node.id
             and n.selector is node.selector and graph.depth[n.id] == depth and vs.values.get(n.id) is not None]
    if len(group) < 2:
        return
    cap = min(program.limits.max_means, JOINT_MEANS)
    keys = sorted({leaf.id for n in group for leaf in elementwise_leaves(n.sop)})
    try:
        domain = node_domain(keys, vs, min(program.limits.max_domain, VALUE_SET_DOMAIN))
        fused = Fused(domain.env, domain.size)
        cols = [fused.value(n.sop) for n in group]
    except (DomainTooLarge, RaspError):
        return
    bad = np.any([b for _, b in cols], axis=0)
    try:
        rows = unique_rows(np.stack([np.asarray(v, dtype=np.float64) for v, _ in cols], axis=1)[~bad])
    except (TypeError, ValueError):
        return
    sums, means = rows, [rows]
    for w in range(2, program.max_len + 1):
        sums = unique_rows((sums[:, None, :] + rows[None, :, :]).reshape(-1, rows.shape[1]))
        if len(sums) > cap:
            return
        means.append(sums / w)
    if node.id not in vs.never_empty:
        if any(n.id in vs.dropped_default or not isinstance(n.default, (bool, int, float)) for n in group):
            return
        means.append(np.array([[float(n.default) for n in group]]))
    joint = unique_rows(np.concatenate(means))
    if len(joint) > cap:
        return
    ids = tuple(n.id for n in group)
    vs.joints = [j for j in vs.joints if not set(j[0]) <= set(ids)] + [(ids, joint)]


def _positional_means(node: Node, N: int) -> np.ndarray | None:
    """The means an aggregate takes when both its selector and its values are functions of positions
    alone (`aggregate(select(indices, indices, <=), indices)` takes only q/2, not every mean of 0..N-1):
    for each length n and query q, the mean over the keys k < n the selector picks. Non-empty rows
    only (the caller adds the default). None unless the selector is known at every (q, k)."""
    table = known_table(node.selector, N)
    if table is None:
        return None
    leaves = elementwise_leaves(node.sop)
    if any(n.kind != "indices" for n in leaves):
        return None
    try:
        f, bad = Fused({n.id: np.arange(N, dtype=np.int64) for n in leaves}, N).value(node.sop)
    except (RaspError, KeyError):
        return None
    f = np.broadcast_to(np.asarray(f), (N,))
    if np.asarray(bad).any() or f.dtype.kind not in "bif":
        return None
    f = f.astype(np.int64)
    out = []
    for n in range(1, N + 1):
        sub = table[:n, :n]
        counts = sub.sum(axis=1)
        sums = sub.astype(np.int64) @ f[:n]
        ok = counts > 0
        out.append(sums[ok] / counts[ok])
    return np.unique(np.concatenate(out))


def integral(values: np.ndarray) -> bool:
    """Are all values integers small enough that float sums of up to 64 of them are exact?"""
    v = np.asarray(values)
    if v.dtype.kind in "bi":
        return True
    return v.dtype.kind == "f" and bool(np.all(np.isfinite(v) & (v == np.round(v)) & (np.abs(v) < 2.0 ** 46)))


def mean_values(values: np.ndarray, max_len: int, cap: int) -> np.ndarray | None:
    """Every mean of 1..max_len values drawn (with repetition) from `values`, or None past `cap`.
    Means of integers are exact: the evaluator sums them exactly and divides once (correctly rounded),
    as here; means of other floats are kept to 12 significant digits."""
    v = values.astype(np.int64) if values.dtype.kind == "b" else values
    exact = integral(v)
    sums = unique_values(v)
    means = [sums.astype(np.float64)]
    for w in range(2, max_len + 1):
        sums = np.add.outer(sums, v).ravel()
        sums = np.unique(sums) if exact else unique_values(sums)
        if sums.size > cap:
            return None
        means.append(sums / w)
    out = unique_values(np.concatenate(means), exact)
    return None if out.size > cap else out


# ------------------------------------------------------------------ float rounding

DISCONTINUOUS = ("==", "!=", "<", ">", "<=", ">=", "round", "%", "//", "in", "getitem", "indicator", "not",
                 "and", "or", "if")


def rounding_warnings(program: Program, graph: ProgramGraph, vs: ValueSets) -> list[dict]:
    """Where the evaluator's own float rounding decides a comparison: an s-op takes two distinct floats
    that exact (rational) arithmetic makes equal (7 * 3/9 + 3 * 2/9 is 2.9999999999999996, 7 * 3/7 is
    3.0), and a selector or a discontinuous op (==, <, round, %, ...) reads it. The compiled model
    follows the evaluator's floats bit for bit, so it agrees; the warning says that the program's
    answer there is an artefact of rounding. One warning per (s-op, reader), with the reader's span."""
    out = []
    for nid, (a, b) in sorted(vs.rounding.items()):
        node = graph.by_id[nid]
        for reader in graph.consumers.get(nid, []):
            if reader.kind == "select":
                what = "the selector"
            elif reader.kind in ("map", "sequencemap") and reader.op in DISCONTINUOUS:
                what = f"'{reader.op}'"
            else:
                continue
            span = reader.origin if reader.origin is not None else node.origin
            entry = {"severity": "warning",
                     "message": f"{what} reading '{program.name(node)}' depends on float rounding: "
                                f"'{program.name(node)}' can be {a!r} or {b!r} where exact arithmetic gives one "
                                f"value; the model follows the evaluator's floats, so it agrees, but the result "
                                f"there is an artefact of rounding (compare with a tolerance, or use integers)"}
            if span is not None:
                entry.update(span.to_json())
            if all(e["message"] != entry["message"] or e.get("line") != entry.get("line") for e in out):
                out.append(entry)
    return out
