"""Fused evaluation: the value of an s-op as a function of the values it is computed from.

The compiler never re-implements RASP semantics. Whatever it tabulates (value sets, attention
tables, MLP tables) it computes by running `engine.elementwise.apply` over arrays of possible
input values, exactly as the evaluator runs it over positions.

Keys name the quantities the compiler tracks: a graph node's id (int), or a tuple for a quantity
with no node of its own (("part", node id, j): one head's share of a selector width split over
several heads). `Virtual` says how such a node is recombined from its parts.

A domain is a set of joint assignments to some keys (each key an array of equal length), built as
a product of per-source value arrays and filtered by constraints the compiler knows (the indices
are below the length; the parts of one selector width add up to at most the input length).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..mixed import objects
from ..program import Full, Node

Key = Hashable


@dataclass(frozen=True)
class Virtual:
    """A node recombined from parts: "sum" (a selector width split over heads) or "any" (an aggregate
    of a constant over a selector split over heads: `value` where any part found a key, else `default`)."""
    kind: str
    parts: tuple
    value: object = None
    default: object = None


@dataclass(frozen=True)
class Constraint:
    """Only assignments where fn(*arrays of keys) holds are realizable."""
    keys: tuple
    fn: Callable
    what: str


class Fused:
    """Evaluate nodes over an environment {key: array}; constants broadcast, elementwise ops apply.
    value(node) -> (values, bad) where bad marks the assignments on which the evaluator would fail."""

    def __init__(self, env: dict, size: int, virtual: dict | None = None):
        self.env = env
        self.size = size
        self.virtual = virtual or {}
        self.memo: dict = {}

    def value(self, node) -> tuple[np.ndarray, np.ndarray]:
        key = node if not isinstance(node, Node) else node.id
        if key in self.memo:
            return self.memo[key]
        out = self._compute(node, key)
        self.memo[key] = out
        return out

    def _compute(self, node, key):
        no_bad = np.zeros(self.size, dtype=bool)
        if key in self.env:
            return self.env[key], no_bad
        if key in self.virtual:
            return self._virtual(self.virtual[key])
        if isinstance(node, Full):
            return np.broadcast_to(elementwise.as_array(node.value), (self.size,)), no_bad
        if isinstance(node, Node) and node.kind in ("map", "sequencemap"):
            children = [self.value(c) for c in node.inputs]
            bad = no_bad.copy()
            for _, b in children:
                bad |= b
            # values of several types (an aggregate's default beside its values, if/else branches of two
            # types): each assignment is computed as the evaluator computes that position, and fails alone
            # where it would fail
            mixed = node.op == "if" or any(np.asarray(v).dtype.kind == "O" for v, _ in children)
            try:
                res = elementwise.apply(node.op, node.operands([v for v, _ in children]), mixed=mixed)
            except RaspError as e:
                raise e.located(node.origin)
            values = np.broadcast_to(res.values, (self.size,))
            if res.bad is not None:
                bad |= np.broadcast_to(res.bad, (self.size,))
            return values, bad
        raise KeyError(key)

    def _virtual(self, v: Virtual):
        parts = [self.env[p] for p in v.parts]
        if v.kind == "sum":
            return np.sum(parts, axis=0).astype(np.int64), np.zeros(self.size, dtype=bool)
        found = np.zeros(self.size, dtype=bool)
        for p in parts:
            found |= elementwise.compare("==", p, elementwise.as_array(v.value))
        value, default = elementwise.as_array(v.value), elementwise.as_array(v.default)
        kind = fused_kind(value, default)
        if kind == "O":
            out = objects([v.value if f else v.default for f in found.tolist()])
        else:
            out = np.where(found, elementwise.cast(value, kind), elementwise.cast(default, kind))
        return out, np.zeros(self.size, dtype=bool)


def depends_on(node, stop: Callable[[Key], bool], virtual: dict) -> set | None:
    """The keys `node` is computed from, stopping at keys for which stop(key) holds (those are
    sources), through elementwise ops and virtual nodes. None if some path reaches neither a
    source nor a constant (the value is not available)."""
    found: set = set()
    seen: set = set()
    stack = [node]
    while stack:
        n = stack.pop()
        key = n.id if isinstance(n, Node) else n
        if key in seen:
            continue
        seen.add(key)
        if stop(key):
            found.add(key)
        elif isinstance(n, Full):
            continue
        elif key in virtual:
            stack.extend(virtual[key].parts)
        elif isinstance(n, Node) and n.kind in ("map", "sequencemap"):
            stack.extend(n.inputs)
        else:
            return None
    return found


# ------------------------------------------------------------------ domains

@dataclass
class Axis:
    """One independent source of a domain: some keys whose values vary together (aligned arrays)."""
    keys: dict            # key -> array of length `size`
    size: int
    name: str = ""


@dataclass
class Domain:
    env: dict             # key -> array (length size)
    index: list           # per axis: the index into that axis of each assignment
    size: int
    constraints_used: list = field(default_factory=list)


class DomainTooLarge(Exception):
    def __init__(self, size: int, limit: int):
        super().__init__(f"{size} > {limit}")
        self.size, self.limit = size, limit


def product(axes: list[Axis], constraints: list[Constraint], limit: int) -> Domain:
    """All joint assignments of the axes that satisfy the applicable constraints. The product is
    built axis by axis and filtered as soon as a constraint's keys are all present."""
    index: list[np.ndarray] = []
    size = 1
    present: set = set()
    pending = list(constraints)
    used = []
    for axis in axes:
        if size * axis.size > limit:
            raise DomainTooLarge(size * axis.size, limit)
        index = [np.repeat(ix, axis.size) for ix in index] + [np.tile(np.arange(axis.size), size)]
        size *= axis.size
        present |= set(axis.keys)
        ready = [c for c in pending if set(c.keys) <= present]
        pending = [c for c in pending if c not in ready]
        if ready:
            env = _env(axes[:len(index)], index)
            keep = np.ones(size, dtype=bool)
            for c in ready:
                keep &= np.asarray(c.fn(*[env[k] for k in c.keys]), dtype=bool)
                used.append(c)
            index = [ix[keep] for ix in index]
            size = int(keep.sum())
    return Domain(_env(axes, index), index, size, used)


def _env(axes: list[Axis], index: list[np.ndarray]) -> dict:
    env = {}
    for axis, ix in zip(axes, index):
        for k, arr in axis.keys.items():
            env[k] = arr[ix]
    return env


# ------------------------------------------------------------------ value helpers

def unique_values(values: np.ndarray, exact: bool = False) -> np.ndarray:
    """Sorted distinct values. Values of several types (dtype object: an aggregate's default of
    another type beside its values) are kept as Python values, bools first, then numbers, then strings
    (mixed_unique); values of one type come back as a typed array. exact: every distinct float is its own value (the compiler computed
    them with the evaluator's own float operations, so they are bit for bit the evaluator's).
    Otherwise floats that agree to 12 significant digits count as one, represented by the member
    nearest its 12-digit rounding (1.0 rather than 0.9999999999999999): for values whose last bits
    depend on an order of float additions the compiler cannot know (means of non-integers)."""
    values = np.asarray(values)
    if values.size == 0:
        return values
    if values.dtype.kind == "O":
        return mixed_unique(values, exact)
    if values.dtype.kind != "f" or exact:
        return np.unique(values)
    v = np.unique(values)
    if v.size < 2:
        return v
    new = np.ones(v.size, dtype=bool)
    new[1:] = ~np.isclose(v[1:], v[:-1], rtol=1e-12, atol=1e-12)
    if new.all():
        return v
    cluster = np.cumsum(new) - 1
    score = np.abs(v - np.round(v, 12))
    order = np.lexsort((score, cluster))
    firsts = np.ones(v.size, dtype=bool)
    firsts[1:] = cluster[order][1:] != cluster[order][:-1]
    return np.sort(v[order][firsts])


def near_duplicates(values: np.ndarray) -> list[tuple]:
    """Pairs of neighbouring distinct floats of a sorted array that agree to 12 significant digits:
    values exact arithmetic would (almost surely) make equal, kept apart by float rounding."""
    v = np.asarray(values)
    if v.dtype.kind != "f" or v.size < 2:
        return []
    close = np.isclose(v[1:], v[:-1], rtol=1e-12, atol=1e-12) & (v[1:] != v[:-1])
    return [(float(v[i]), float(v[i + 1])) for i in np.nonzero(close)[0]]


def common_kind(a: np.ndarray, b: np.ndarray) -> str | None:
    ka, kb = a.dtype.kind, b.dtype.kind
    if ka == kb:
        return ka
    if ka in "bif" and kb in "bif":
        return "f" if "f" in (ka, kb) else "i"
    return None


def lookup(table: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each of `values` in the sorted array `table`, -1 where absent (floats match to
    a relative 1e-9; bools and ints compare as numbers, as in Python)."""
    values = np.asarray(values)
    out = np.full(values.shape, -1, dtype=np.int64)
    if table.size == 0 or values.size == 0:
        return out
    if table.dtype.kind == "O" or values.dtype.kind == "O":
        return _mixed_lookup(table, values, out)
    kind = common_kind(table, values)
    if kind is None:
        return out
    t, v = elementwise.cast(table, kind), elementwise.cast(values, kind)
    pos = np.clip(np.searchsorted(t, v), 0, t.size - 1)
    if kind == "f":
        left = np.clip(pos - 1, 0, t.size - 1)
        pick = np.where(np.abs(t[left] - v) < np.abs(t[pos] - v), left, pos)
        ok = np.isclose(t[pick], v, rtol=1e-9, atol=1e-12)
        return np.where(ok, pick, -1)
    return np.where(t[pos] == v, pos, -1)


def block_domain(blocks: list, constraints: list, limit: int, what: str, span, joints=()) -> Domain:
    """The domain of a list of residual blocks (one axis per block, over its values), or a compile
    error naming `what` when it cannot be enumerated. `joints` lists (keys, rows): values that some
    numerical blocks take together (means over one selector share their denominator); blocks that
    appear in one are enumerated together, over those rows only. Domain.index is per block."""
    for b in blocks:
        if b.values is None:
            raise RaspError(f"computing {what} needs a table over '{b.name}', whose possible values are too many",
                            span, "limit")
    try:
        return joint_domain(blocks, constraints, limit, joints)
    except DomainTooLarge as e:
        raise RaspError(f"computing {what} needs a table of {e.size} or more input combinations "
                        f"(the limit is {e.limit})", span, "limit") from None


def joint_domain(blocks: list, constraints: list, limit: int, joints=()) -> Domain:
    axes, members, used = [], [], set()
    for keys, rows in joints:
        group = [j for j, b in enumerate(blocks) if j not in used and b.kind == "numerical"
                 and b.values is not None and b.key in keys]
        if len(group) < 2:
            continue
        cols = unique_rows(rows[:, [keys.index(blocks[j].key) for j in group]])
        idx = [lookup(np.asarray(blocks[j].values), cols[:, c]) for c, j in enumerate(group)]
        ok = np.all([i >= 0 for i in idx], axis=0)
        idx = [i[ok] for i in idx]
        axes.append(Axis({blocks[j].key: np.asarray(blocks[j].values)[i] for j, i in zip(group, idx)},
                         int(ok.sum()), " & ".join(blocks[j].name for j in group)))
        members.append(list(zip(group, idx)))
        used |= set(group)
    for j, b in enumerate(blocks):
        if j in used:
            continue
        axes.append(Axis({k: np.asarray(v) for k, v in b.provides.items()}, len(b.values), b.name))
        members.append([(j, np.arange(len(b.values)))])
    domain = product(axes, constraints, limit)
    index: list = [None] * len(blocks)
    for axis_index, mem in zip(domain.index, members):
        for j, idx in mem:
            index[j] = idx[axis_index]
    domain.index = index
    return domain


def unique_rows(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows)
    if rows.dtype.kind == "f":
        rows = np.round(rows, 12) + 0.0
    return np.unique(rows, axis=0)


# ------------------------------------------------------------------ values of several types

_GROUP = {bool: "b", int: "n", float: "n", str: "s"}
_GROUP_ORDER = "bns"


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def _group(v) -> str:
    return _GROUP.get(type(v), "?")


def _typed(group: str, items: list) -> np.ndarray:
    if group == "b":
        return np.array(items, dtype=np.bool_)
    if group == "s":
        return np.array(items, dtype=np.str_)
    return np.array(items, dtype=np.float64 if any(isinstance(x, float) for x in items) else np.int64)


def _split_groups(values: np.ndarray) -> dict:
    """{group: (positions, typed array)} of a flat array of Python values."""
    flat = [_plain(v) for v in np.asarray(values).ravel().tolist()]
    found: dict = {}
    for i, v in enumerate(flat):
        found.setdefault(_group(v), []).append(i)
    return {g: (np.array(ix, dtype=np.int64), _typed(g, [flat[i] for i in ix])) for g, ix in found.items()
            if g != "?"}


def fused_kind(a: np.ndarray, b: np.ndarray) -> str:
    """The kind of an array holding the values of `a` and `b`: their common type, or "O" (object) when
    they have none (strings beside numbers, bools beside numbers: values of several types)."""
    ka, kb = a.dtype.kind, b.dtype.kind
    if "O" in (ka, kb):
        return "O"
    if ka == kb:
        return ka
    if ka in "if" and kb in "if":
        return "f"
    return "O"


def union_values(a: np.ndarray, b: np.ndarray, exact: bool = False) -> np.ndarray:
    """The sorted distinct values of both arrays (of several types: an object array, see unique_values)."""
    kind = fused_kind(np.asarray(a), np.asarray(b))
    if kind == "O":
        both = objects([_plain(v) for v in np.asarray(a).ravel().tolist() + np.asarray(b).ravel().tolist()])
        return unique_values(both, exact)
    return unique_values(np.concatenate([elementwise.cast(np.asarray(a), kind),
                                         elementwise.cast(np.asarray(b), kind)]), exact)


def mixed_unique(values: np.ndarray, exact: bool = False) -> np.ndarray:
    """Distinct values of an object array: per type group (bools, numbers, strings) sorted and made
    distinct as typed values are, the groups in that order. One group only: a typed array."""
    groups = _split_groups(values)
    parts = [(g, unique_values(groups[g][1], exact)) for g in _GROUP_ORDER if g in groups]
    if len(parts) == 1:
        return parts[0][1]
    return objects([_plain(v) for _, p in parts for v in p.tolist()])


def mixed_groups(values: np.ndarray) -> list[str]:
    """The type groups ('b' bool, 'n' number, 's' str) an array's values belong to."""
    v = np.asarray(values)
    if v.dtype.kind != "O":
        return ["s" if v.dtype.kind == "U" else "b" if v.dtype.kind == "b" else "n"] if v.size else []
    return [g for g in _GROUP_ORDER if g in _split_groups(v)]


def _mixed_lookup(table: np.ndarray, values: np.ndarray, out: np.ndarray) -> np.ndarray:
    """lookup() where the table or the values hold several types: each value is looked up among the
    table's values of its own type group (a bool among the numbers only where the table has no bools,
    and a number among the bools where it has no numbers, as Python's 1 == True)."""
    tg, vg = _split_groups(table), _split_groups(values)
    flat = out.ravel()
    for g, (pos, typed) in vg.items():
        tries = [g] + ([h for h in ("b", "n") if h != g] if g in ("b", "n") else [])
        found = np.full(len(pos), -1, dtype=np.int64)
        for h in tries:
            if h not in tg or (h != g and g in tg):
                continue
            tpos, ttyped = tg[h]
            j = lookup(ttyped, typed)
            found = np.where((found < 0) & (j >= 0), tpos[np.clip(j, 0, None)], found)
        flat[pos] = found
    return flat.reshape(out.shape)


def elementwise_leaves(node: Node) -> list[Node]:
    """The non-constant inputs an elementwise expression is computed from."""
    found, seen, stack = {}, set(), [node]
    while stack:
        n = stack.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if n.kind in ("map", "sequencemap"):
            stack.extend(n.inputs)
        elif n.kind != "constant":
            found[n.id] = n
    return [found[k] for k in sorted(found)]
