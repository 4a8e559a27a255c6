"""A selector's truth at every (query, key) pair of positions, where it is known before any input: its
atoms compare functions of indices alone (`select(indices, indices - 1, ==)`). The causal check asks
whether a selector may look ahead; the value-set pass whether an aggregate's query always finds a key."""
from __future__ import annotations

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Node
from .fused import Fused, elementwise_leaves


def known_table(sel: Node, N: int) -> np.ndarray | None:
    """The selector's truth at every (query, key) position pair when it is a function of positions
    alone (every atom compares functions of indices), else None."""
    true, false = known(sel, N, {})
    return true if bool(np.all(true | false)) else None


def may_select(sel: Node, N: int, memo: dict) -> np.ndarray:
    true, false = known(sel, N, memo)
    return ~false


def known(sel: Node, N: int, memo: dict) -> tuple[np.ndarray, np.ndarray]:
    """(known true, known false) over [query position, key position]."""
    if sel.id in memo:
        return memo[sel.id]
    k = sel.kind
    if k == "select":
        table = _atom_table(sel, N)
        if table is None:
            out = (np.zeros((N, N), bool), np.zeros((N, N), bool))
        else:
            out = (table, ~table)
    elif k == "select_not":
        t, f = known(sel.inner, N, memo)
        out = (f, t)
    else:
        (t1, f1), (t2, f2) = known(sel.left, N, memo), known(sel.right, N, memo)
        out = (t1 & t2, f1 | f2) if k == "select_and" else (t1 | t2, f1 & f2)
    memo[sel.id] = out
    return out


def _atom_table(sel: Node, N: int) -> np.ndarray | None:
    """[q, k] = keys(k) op queries(q) when keys and queries are functions of indices alone, else None."""
    positions = np.arange(N, dtype=np.int64)
    sides = []
    for side in (sel.keys, sel.queries):
        leaves = elementwise_leaves(side)
        if any(n.kind != "indices" for n in leaves):
            return None
        env = {n.id: positions for n in leaves}
        try:
            values, bad = Fused(env, N).value(side)
        except (RaspError, KeyError):
            return None
        if np.asarray(bad).any():
            return None
        sides.append(np.broadcast_to(np.asarray(values), (N,)))
    keys, queries = sides
    try:
        return np.asarray(elementwise.compare(sel.predicate, keys[None, :], queries[:, None]), dtype=bool)
    except RaspError:
        return None
