"""Selectors that select at least one key for every query, on every input: then an aggregate over
one never gives its default, and the default needs no place among its values.

A proof, never a guess (a missed proof only costs the model one more value). Facts it uses:

* positional atoms: `select(keys, queries, op)` whose keys and queries are computed from `indices`
  and the input length alone is known at every (query, key) of every length (enumerated, 1..max_len);
  and/or/not of such atoms too (reverse: `select(indices, length - indices - 1, ==)`).
* an s-op that covers the positions (at every length n it takes every value 0..n-1: `indices`, a
  positional permutation, the selector width of a strict total order on the positions) as keys,
  compared by `==` with queries that are positions (0..n-1 at length n: `indices`, the width of a
  selector that never selects the query itself): every query finds its key (sort).
* a value present on every input (the width of a strict total order is 0 at its first position, an
  aggregate over one gives its default there; elementwise functions of one s-op carry the values
  along) compared with a constant query (most_frequent: `select(is_winner, True, ==)`).
* `a or b` selects a key where either does; the reflexive and constant facts of value_sets.
* for an aggregate of strings, an empty row that forces another row to select several keys (an
  error in the evaluator: strings cannot be averaged) does not count (default_unseen).

A strict total order on the positions: `select(a, a, <)` (or `>`) for an `a` one-to-one over the
positions (a positional injection, or an s-op covering the positions), and `select(a, a, <) or (select(a, a, ==) and T)` for a strict total order T (ties of a
broken by T: a lexicographic order), the operands of `or` and `and` in either order.
"""
from __future__ import annotations

import numpy as np

from .. import elementwise
from ..lang.errors import RaspError
from ..program import Full, Node
from .fused import Fused, elementwise_leaves


class NonEmpty:
    def __init__(self, vs, N: int, injective):
        self.vs, self.N, self.injective = vs, N, injective
        self.memo: dict = {}

    # ---------------------------------------------------------------- aggregates

    def default_unseen(self, agg: Node, sop_values) -> bool:
        """Does the aggregate never give its default on an input the evaluator evaluates? Where its
        selector always selects, and also where an empty row forces another row to select several
        keys and the values are strings (whose mean is an error): `select(k, q, ==)` with k and q
        positions (0..n-1 at length n) and q taking every position (sort_unique's
        `select(selector_width(select(tokens, tokens, <)), indices, ==)`): by pigeonhole, k is one-to-one
        (then every row selects exactly one key) or two keys share a value, which some query holds."""
        if self.selects_always(agg.selector):
            return True
        sel = agg.selector
        return (sop_values is not None and np.asarray(sop_values).dtype.kind == "U" and sel.kind == "select"
                and sel.predicate == "==" and self.in_positions(sel.keys) and self.in_positions(sel.queries)
                and self.covers(sel.queries))

    # ---------------------------------------------------------------- selectors

    def selects_always(self, sel: Node) -> bool:
        key = ("sel", sel.id)
        if key not in self.memo:
            self.memo[key] = self._selects_always(sel)
        return self.memo[key]

    def _selects_always(self, sel: Node) -> bool:
        if self.vs.reflexive.get(sel.id) is True or self.vs.constant.get(sel.id) is True:
            return True
        tables = self.positional_tables(sel)
        if tables is not None:
            return all(t.any(axis=1).all() for t in tables)
        if sel.kind == "select_or":
            return self.selects_always(sel.left) or self.selects_always(sel.right)
        if sel.kind != "select":
            return False
        keys, queries = sel.keys, sel.queries
        if sel.predicate == "==" and self.covers(keys) and self.in_positions(queries):
            return True
        if isinstance(queries, Full):
            present = self.present(keys)
            if present is not None and present.size:
                try:
                    hits = elementwise.compare(sel.predicate, present, elementwise.as_array(queries.value))
                except RaspError:
                    return False
                return bool(np.asarray(hits).any())
        return False

    def positional_tables(self, sel: Node):
        """[(n, n) truth table per length n = 1..N] when every atom is positional, else None."""
        key = ("tables", sel.id)
        if key in self.memo:
            return self.memo[key]
        out = None
        k = sel.kind
        if k == "select":
            keys, queries = self.positional(sel.keys), self.positional(sel.queries)
            if keys is not None and queries is not None:
                try:
                    out = [np.asarray(elementwise.compare(sel.predicate, kv[None, :], qv[:, None]), dtype=bool)
                           for kv, qv in zip(keys, queries)]
                except RaspError:
                    out = None
        elif k == "select_not":
            inner = self.positional_tables(sel.inner)
            out = None if inner is None else [~t for t in inner]
        else:
            left, right = self.positional_tables(sel.left), self.positional_tables(sel.right)
            if left is not None and right is not None:
                out = [(a & b) if k == "select_and" else (a | b) for a, b in zip(left, right)]
        self.memo[key] = out
        return out

    def strict_total_order(self, sel: Node) -> bool:
        """Does `sel` (query q, key k) hold exactly when k comes before q in one strict total order of
        the positions (on every input)?"""
        key = ("order", sel.id)
        if key not in self.memo:
            self.memo[key] = self._strict_total_order(sel)
        return self.memo[key]

    def _strict_total_order(self, sel: Node) -> bool:
        if sel.kind == "select":
            # one-to-one over the positions: a positional injection, or n values covering n positions
            return (sel.predicate in ("<", ">") and sel.keys is sel.queries
                    and (self.injective(sel.keys) or self.covers(sel.keys)))
        if sel.kind != "select_or":
            return False
        for strict, tie in ((sel.left, sel.right), (sel.right, sel.left)):
            if not (strict.kind == "select" and strict.predicate in ("<", ">") and strict.keys is strict.queries):
                continue
            if tie.kind != "select_and":
                continue
            for eq, order in ((tie.left, tie.right), (tie.right, tie.left)):
                if (eq.kind == "select" and eq.predicate == "==" and eq.keys is eq.queries
                        and eq.keys is strict.keys and self.strict_total_order(order)):
                    return True
        return False

    # ---------------------------------------------------------------- s-ops

    def positional(self, node: Node):
        """[values at positions 0..n-1 for n = 1..N] when `node` is computed from indices and the input
        length alone (and evaluates everywhere), else None."""
        key = ("pos", node.id)
        if key in self.memo:
            return self.memo[key]
        out = None
        leaves = elementwise_leaves(node)
        if all(n.kind == "indices" or n.id in self.vs.lengths for n in leaves):
            out = []
            for n in range(1, self.N + 1):
                env = {leaf.id: (np.arange(n, dtype=np.int64) if leaf.kind == "indices"
                                 else np.full(n, n, dtype=np.int64)) for leaf in leaves}
                try:
                    values, bad = Fused(env, n).value(node)
                except (RaspError, KeyError):
                    out = None
                    break
                if np.asarray(bad).any():
                    out = None
                    break
                out.append(np.broadcast_to(np.asarray(values), (n,)))
        self.memo[key] = out
        return out

    def covers(self, node: Node) -> bool:
        """At every length n, does `node` take every value 0..n-1 at some position?"""
        if node.kind == "indices":
            return True
        if node.kind == "selector_width" and self.strict_total_order(node.selector):
            return True
        pos = self.positional(node)
        if pos is None:
            return False
        return all(_numbers(v) and set(range(len(v))) <= set(np.asarray(v, dtype=np.float64).tolist())
                   for v in pos)

    def in_positions(self, node: Node) -> bool:
        """At every length n, are all of `node`'s values among 0..n-1?"""
        if node.kind == "indices":
            return True
        if node.kind == "selector_width":
            return self.vs.reflexive.get(node.selector.id) is False
        pos = self.positional(node)
        if pos is None:
            return False
        return all(_numbers(v) and bool(np.all(np.isin(np.asarray(v, dtype=np.float64), np.arange(len(v)))))
                   for v in pos)

    def present(self, node: Node) -> np.ndarray | None:
        """Values `node` takes at some position on every input it evaluates on (None: none known)."""
        key = ("present", node.id)
        if key in self.memo:
            return self.memo[key]
        out = None
        if node.kind == "selector_width" and self.strict_total_order(node.selector):
            out = np.zeros(1, dtype=np.int64)            # the first position of the order
        elif node.kind == "aggregate" and self.strict_total_order(node.selector):
            try:
                out = elementwise.as_array(node.default).reshape(1)     # ... selects nothing there
            except RaspError:
                out = None
        elif node.kind in ("map", "sequencemap"):
            leaves = elementwise_leaves(node)
            if len(leaves) == 1:
                inner = self.present(leaves[0])
                if inner is not None:
                    try:
                        values, bad = Fused({leaves[0].id: inner}, len(inner)).value(node)
                        out = np.asarray(values)[~np.asarray(bad)]
                    except (RaspError, KeyError):
                        out = None
        self.memo[key] = out
        return out


def _numbers(v: np.ndarray) -> bool:
    return np.asarray(v).dtype.kind in "bif"
