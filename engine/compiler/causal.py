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

from ..lang.errors import RaspError
from ..program import Node
from .extract import ProgramGraph
from .position_tables import known, may_select
from .validate import Program


def check_causal(program: Program, graph: ProgramGraph):
    """Raise a RaspError naming the first selector that may select a later key."""
    N = program.max_len
    later = np.triu(np.ones((N, N), dtype=bool), k=1)        # [q, k]: k > q
    memo: dict = {}
    for node in graph.nodes:
        if node.kind not in ("aggregate", "selector_width"):
            continue
        sel = node.selector
        may = may_select(sel, N, memo)
        if (may & later).any():
            q, k = (int(x[0]) for x in np.nonzero(may & later))
            what = "may select" if not known(sel, N, memo)[0][q, k] else "selects"
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
