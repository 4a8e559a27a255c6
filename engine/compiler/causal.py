"""Causal (autoregressive) mode: check that every selector the output needs only looks backwards.

A selector looks backwards when, on every input, query position q selects no key k > q. Then every
s-op's value at position i depends on the tokens 0..i alone and equals its value on the prefix
of length i + 1 (by induction over the graph: elementwise ops are per position, and an aggregate or
selector width at q reads keys k <= q only). The compiled heads never attend to a key they do not
select (it scores below BOS), so a causal mask changes no attention: the same weights run with a
mask, and the model can generate one token at a time.

The proof is structural, over the (query, key) grid of positions 0..max_len-1: an atom
`select(keys, queries, op)` whose keys and queries are computed from `indices` alone (and
constants) has a known truth value at each (q, k); any other atom is unknown. and/or/not combine
with Kleene's three-valued logic. The selector looks backwards when it is known false at every
k > q. Anything else is refused, naming the first selector that may look forwards.
"""
from __future__ import annotations

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Node
from .extract import ProgramGraph
from .fused import Fused
from .validate import Program
from .value_sets import elementwise_leaves


def check_causal(program: Program, graph: ProgramGraph):
    """Raise a RaspError naming the first selector that may select a later key."""
    N = program.max_len
    later = np.triu(np.ones((N, N), dtype=bool), k=1)        # [q, k]: k > q
    memo: dict = {}
    for node in graph.nodes:
        if node.kind not in ("aggregate", "selector_width"):
            continue
        sel = node.selector
        may = _may_select(sel, N, memo)
        if (may & later).any():
            q, k = (int(x[0]) for x in np.nonzero(may & later))
            what = "may select" if not _known(sel, N, memo)[0][q, k] else "selects"
            raise RaspError(f"causal mode: the selector of '{program.name(node)}' "
                            f"({_describe(program, sel)}) {what} a later position (query {q}, key {k}): "
                            f"a causal model needs every selector to look only at the query's position and "
                            f"before it", _where(sel, node), "compile")


def _where(sel: Node, node: Node):
    span = sel.origin
    return span if span is not None and span.source == "<program>" else node.origin


def _describe(program: Program, sel: Node) -> str:
    span = sel.origin
    if span is not None and span.source == "<program>":
        text = span.text(program.source).strip()
        if len(text) > 80:
            text = text[:77] + "..."
        return text
    return program.name(sel)


def known_table(sel: Node, N: int) -> np.ndarray | None:
    """The selector's truth at every (query, key) position pair when it is a function of positions
    alone (every atom compares functions of indices), else None."""
    true, false = _known(sel, N, {})
    return true if bool(np.all(true | false)) else None


def _may_select(sel: Node, N: int, memo: dict) -> np.ndarray:
    true, false = _known(sel, N, memo)
    return ~false


def _known(sel: Node, N: int, memo: dict) -> tuple[np.ndarray, np.ndarray]:
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
        t, f = _known(sel.inner, N, memo)
        out = (f, t)
    else:
        (t1, f1), (t2, f2) = _known(sel.left, N, memo), _known(sel.right, N, memo)
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
