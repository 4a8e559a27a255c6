"""Selectors as attention scores: atoms, groups, and the decomposition into single-level boxes.

A head scores query q against key k by a sum of terms, each a bilinear function of one query block
and one key block (the residual is additive, so no term can look at two blocks on one side). The
atoms of a selector (its `select(keys, queries, op)` leaves) whose keys are read from the same
block and whose queries from the same block form a *group*: within a group any boolean
combination of atoms is a single table over (query value, key value).

A selector is *single-level* if it is the conjunction of one condition per group: then the score
sum_g [condition_g] equals the number of groups m exactly on the selected keys and is at most m - 1
elsewhere, so hard attention averages exactly the selected keys, and BOS at m - 1/2 (aggregate) or
at m (selector width) does the rest. In terms of the realizable "types" of each group (which atoms
hold), the selector's true set must then be a Cartesian product. When it is not, it is a disjoint
union of products ("boxes"), each of which one head can score.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Node
from .plan import GroupTable, Reader


def atoms_of(sel: Node) -> list[Node]:
    out: dict[int, Node] = {}
    stack = [sel]
    while stack:
        n = stack.pop()
        if n.kind == "select":
            out[n.id] = n
        else:
            stack.extend(c for _, c in n.children())
    return [out[k] for k in sorted(out)]


def truth(sel: Node, atom_values: dict) -> np.ndarray:
    """The selector's value given each atom's value (arrays, broadcast)."""
    k = sel.kind
    if k == "select":
        return atom_values[sel.id]
    if k == "select_not":
        return ~truth(sel.inner, atom_values)
    left, right = truth(sel.left, atom_values), truth(sel.right, atom_values)
    return left & right if k == "select_and" else left | right


def atom_table(atom: Node, key: Reader, query: Reader) -> np.ndarray:
    """(query value, key value) -> keys[k] op queries[q], False where a side fails to read."""
    kv, qv = np.asarray(key.values), np.asarray(query.values)
    failed = False
    try:
        if "O" in (kv.dtype.kind, qv.dtype.kind):
            # values of several types: a pair the evaluator cannot compare (1 < "a") fails that input alone
            res = elementwise.apply(atom.predicate, [kv[None, :], qv[:, None]], mixed=True)
            t, failed = np.asarray(res.values, dtype=bool), (res.bad if res.bad is not None else False)
        else:
            t = elementwise.compare(atom.predicate, kv[None, :], qv[:, None])
    except RaspError as e:
        raise e.located(atom.origin)
    return (np.asarray(t, dtype=bool) & ~np.asarray(failed) & ~np.asarray(key.bad)[None, :]
            & ~np.asarray(query.bad)[:, None])


@dataclass
class Group:
    query: Reader
    key: Reader
    atoms: list[Node]
    cell_type: np.ndarray              # (|Q|, |K|) -> index into `types`
    types: np.ndarray                  # (n_types, len(atoms)) bool: which atoms hold


def attach_constants(atoms: list[Node], keys: dict, queries: dict) -> tuple[dict, dict]:
    """A constant side (read from `one`) is also a function of any block: read it from the block the
    atom's group partner uses, so that it joins that group instead of forming its own."""
    keys, queries = dict(keys), dict(queries)
    pairs = [(queries[a.id].block, keys[a.id].block) for a in atoms
             if queries[a.id].block is not None and keys[a.id].block is not None]
    for a in atoms:
        q, k = queries[a.id], keys[a.id]
        if q.block is None and k.block is not None:
            found = next((qb for qb, kb in pairs if kb is k.block), None)
            if found is not None:
                queries[a.id] = _spread(q, found)
        elif k.block is None and q.block is not None:
            found = next((kb for qb, kb in pairs if qb is q.block), None)
            if found is not None:
                keys[a.id] = _spread(k, found)
        elif q.block is None and k.block is None and pairs:
            queries[a.id], keys[a.id] = _spread(q, pairs[0][0]), _spread(k, pairs[0][1])
    return keys, queries


def _spread(r: Reader, block) -> Reader:
    n = block.size
    return Reader(block, np.repeat(np.asarray(r.values)[:1], n), np.repeat(np.asarray(r.bad)[:1], n))


def build_groups(atoms: list[Node], keys: dict, queries: dict) -> list[Group]:
    """Group atoms by (query block, key block); keys/queries map atom id -> Reader."""
    keys, queries = attach_constants(atoms, keys, queries)
    order: list = []
    members: dict = {}
    for a in atoms:
        ident = (id(queries[a.id].block), id(keys[a.id].block))
        if ident not in members:
            members[ident] = []
            order.append(ident)
        members[ident].append(a)
    groups = []
    for ident in order:
        group_atoms = members[ident]
        q, k = queries[group_atoms[0].id], keys[group_atoms[0].id]
        tables = np.stack([atom_table(a, keys[a.id], queries[a.id]) for a in group_atoms], axis=-1)
        flat = tables.reshape(-1, len(group_atoms))
        types, inverse = np.unique(flat, axis=0, return_inverse=True)
        groups.append(Group(q, k, group_atoms, inverse.reshape(tables.shape[:2]), types.astype(bool)))
    return groups


def true_set(sel: Node, groups: list[Group], max_combos: int) -> np.ndarray:
    """Every combination of group types (rows of type indices) on which the selector holds."""
    sizes = [len(g.types) for g in groups]
    total = int(np.prod(sizes))
    if total > max_combos:
        raise RaspError(f"the selector combines too many conditions ({total} cases; the limit is {max_combos})",
                        sel.origin, "limit")
    combos = np.array(list(itertools.product(*[range(s) for s in sizes])), dtype=np.int64).reshape(total, len(groups))
    atom_values = {}
    for gi, g in enumerate(groups):
        for ai, a in enumerate(g.atoms):
            atom_values[a.id] = g.types[combos[:, gi], ai]
    holds = np.broadcast_to(truth(sel, atom_values), (total,))
    return combos[holds]


def decompose(sel: Node, groups: list[Group], max_combos: int = 4096) -> list[tuple]:
    """Disjoint boxes covering the selector's true set; a box gives each group a set of allowed types.
    One box: the selector is single-level. No box: it never selects."""
    S = true_set(sel, groups, max_combos)
    if len(S) == 0:
        return []
    best = None
    for perm in itertools.permutations(range(len(groups))) if len(groups) <= 4 else [tuple(range(len(groups)))]:
        boxes = _split(S[:, list(perm)])
        boxes = [tuple(b[perm.index(g)] for g in range(len(groups))) for b in boxes]
        if best is None or len(boxes) < len(best):
            best = boxes
        if len(best) == 1:
            break
    return best


def _split(S: np.ndarray) -> list[tuple]:
    """Disjoint product boxes covering the rows of S (columns = groups, in order)."""
    if S.shape[1] == 1:
        return [(frozenset(S[:, 0].tolist()),)]
    by_rest: dict = {}
    for t in np.unique(S[:, 0]).tolist():
        rest = S[S[:, 0] == t][:, 1:]
        key = frozenset(map(tuple, rest.tolist()))
        by_rest.setdefault(key, []).append(t)
    boxes = []
    for rest_key, firsts in by_rest.items():
        rest = np.array(sorted(rest_key), dtype=np.int64).reshape(len(rest_key), S.shape[1] - 1)
        for sub in _split(rest):
            boxes.append((frozenset(firsts),) + sub)
    return boxes


def box_tables(box: tuple, groups: list[Group]) -> list[GroupTable]:
    """The score terms of one box: one 0/1 table per group it constrains."""
    tables = []
    for allowed, g in zip(box, groups):
        if len(allowed) == len(g.types):
            continue                    # every realizable case allowed: the group never excludes a key
        table = np.isin(g.cell_type, sorted(allowed))
        tables.append(GroupTable(g.query.block, g.key.block, table))
    return tables


def never_selects() -> list[GroupTable]:
    """A score term that no key satisfies (for a selector that never selects)."""
    return [GroupTable(None, None, np.zeros((1, 1), dtype=bool))]
