"""Tracr's evaluation rules, computed directly on a batch of inputs (numpy; no lowering, no tables).

This is the reference for Tracr programs in rasplay: `rasp.evaluate(expr, xs)` answers from it, and
a compiled Tracr program's `check()` compares the compiled model's outputs with it (never with the
lowered RASP program that was compiled). The rules, as Tracr's documentation and evaluator define them:

* tokens, indices, length, Full(fill), ConstantSOp (its length must be the input's unless
  check_length=False);
* Map / SequenceMap: f of each position's value(s); None stays None (f is not called on it);
* Select: predicate(key, query) for every query row and key column; a Comparison raises on None;
* Aggregate: per query, nothing selected -> default; one -> that value unchanged; several -> their
  mean when all are int, bool or float (`sum / len`), else an error;
* SelectorWidth: the number of selected keys; SelectorAnd/Or/Not elementwise;
* causal=True masks every selector to keys at or before the query (Tracr's causal_eval).

How it is computed: an s-op on a batch of B inputs of one length n is a code array (B, n) into a
table of distinct values, so every Python function runs once per distinct value (a Map), per
distinct pair (a SequenceMap) or per distinct (key, query) pair (a custom predicate), and the rest
(selection, widths, means, copies) is numpy over the whole batch. A Comparison over numbers or over
strings is a numpy comparison. An exception for one value marks the inputs holding that value as
failed (`Batch.errors`); `evaluate` re-raises it, as Tracr does. One input of at most SMALL tokens is
evaluated with plain Python lists instead (`_small`: numpy's per-call overhead dominates there), each
expression once; tests/unit/test_tracr_random.py checks both paths against a direct reading of the rules.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import tracr_expr as rasp

_NUMBER = (int, float, bool)


@dataclass
class Column:
    """An s-op's values on a batch: codes (B, n) into `table` (a list of Python values)."""
    codes: np.ndarray
    table: list

    def values(self) -> list:
        arr = np.empty(len(self.table), dtype=object)
        arr[:] = self.table
        return arr[self.codes].tolist()


def _key(v):
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v), v)


def _compact(table: list, codes: np.ndarray) -> Column:
    """The same values with each distinct value (by type and value) once in the table."""
    index: dict = {}
    remap = np.empty(len(table), dtype=np.int64)
    out = []
    for i, v in enumerate(table):
        k = _key(v)
        j = index.get(k)
        if j is None:
            j = index[k] = len(out)
            out.append(v)
        remap[i] = j
    return Column(remap[codes] if len(table) else codes, out)


class Batch:
    """One evaluation: inputs (B, n) of one length, memoised per expression, per-input errors."""

    def __init__(self, inputs: list, causal: bool = False):
        self.B = len(inputs)
        self.n = len(inputs[0]) if inputs else 0
        if any(len(x) != self.n for x in inputs):
            raise ValueError("a batch holds inputs of one length")
        flat = [t for x in inputs for t in x]
        tok = _compact(flat, np.arange(len(flat), dtype=np.int64).reshape(self.B, self.n))
        self.tokens = tok
        self.causal = causal
        self.errors: list = [None] * self.B      # the first exception of each input
        self.memo: dict = {}

    # ---------------------------------------------------------------- errors
    def fail(self, rows: np.ndarray, error: BaseException) -> None:
        for b in np.nonzero(rows)[0].tolist():
            if self.errors[b] is None:
                self.errors[b] = error

    def fail_values(self, col_codes: np.ndarray, bad: list, errors: list) -> None:
        """Inputs holding table entries `bad` (with their exceptions) fail."""
        for j, err in zip(bad, errors):
            self.fail((col_codes == j).reshape(self.B, -1).any(axis=1), err)

    # ---------------------------------------------------------------- evaluation
    def eval(self, expr):
        key = expr.unique_id
        if key not in self.memo:
            self.memo[key] = self._eval(expr)
        return self.memo[key]

    def _eval(self, e):
        B, n = self.B, self.n
        if isinstance(e, rasp.TokensType):
            return self.tokens
        if isinstance(e, rasp.IndicesType):
            return Column(np.broadcast_to(np.arange(n, dtype=np.int64), (B, n)), list(range(n)))
        if isinstance(e, rasp.LengthType):
            return Column(np.zeros((B, n), dtype=np.int64), [n])
        if isinstance(e, rasp.Full):
            return Column(np.zeros((B, n), dtype=np.int64), [e.fill])
        if isinstance(e, rasp.ConstantSOp):
            if len(e.value) != n:
                if e.check_length:
                    raise ValueError(f"Constant len {len(e.value)} doesn't match input len {n}.")
                raise ValueError(f"{e.label}: a ConstantSOp of length {len(e.value)} on an input of length {n} "
                                 f"(check_length=False) has no value at every position; rasplay refuses it")
            return _compact(list(e.value), np.broadcast_to(np.arange(n, dtype=np.int64), (B, n)))
        if isinstance(e, rasp.Map):
            return self._map(e)
        if isinstance(e, rasp.SequenceMap):
            return self._sequence_map(e)
        if isinstance(e, rasp.Aggregate):
            return self._aggregate(e)
        if isinstance(e, rasp.SelectorWidth):
            width = self.eval(e.selector).sum(axis=2)
            return Column(width.astype(np.int64), list(range(n + 1)))
        if isinstance(e, rasp.Select):
            return self._mask(self._select(e))
        if isinstance(e, rasp.ConstantSelector):
            value = np.asarray(e.value, dtype=bool)
            if value.shape != (n, n):
                if e.check_length or value.ndim != 2 or value.shape[0] < n or value.shape[1] < n:
                    raise ValueError(f"Constant len {len(e.value)} doesn't match input len {n}.")
                value = value[:n, :n]
            return self._mask(np.broadcast_to(value, (B, n, n)))
        if isinstance(e, rasp.SelectorOr):
            return self._mask(self.eval(e.fst) | self.eval(e.snd))
        if isinstance(e, rasp.SelectorAnd):
            return self._mask(self.eval(e.fst) & self.eval(e.snd))
        if isinstance(e, rasp.SelectorNot):
            return self._mask(~self.eval(e.inner))
        raise NotImplementedError(f"Evaluation of {e!r} is not defined.")

    def _mask(self, sel: np.ndarray) -> np.ndarray:
        if self.causal:
            sel = sel & np.tril(np.ones((self.n, self.n), dtype=bool))
        return np.asarray(sel, dtype=bool)

    def _apply(self, f, args: list) -> tuple[list, list, list]:
        """f over distinct argument tuples: results, and the indices and exceptions of failures."""
        out, bad, errs = [], [], []
        for i, a in enumerate(args):
            if any(x is None for x in a):
                out.append(None)
                continue
            try:
                out.append(f(*a))
            except Exception as err:   # noqa: BLE001 - the user's function; the inputs holding it fail
                out.append(None)
                bad.append(i)
                errs.append(err)
        return out, bad, errs

    def _map(self, e) -> Column:
        src = self.eval(e.inner)
        out, bad, errs = self._apply(e.f, [(v,) for v in src.table])
        self.fail_values(src.codes, bad, errs)
        return _compact(out, src.codes)

    def _sequence_map(self, e) -> Column:
        a, b = self.eval(e.fst), self.eval(e.snd)
        pair = a.codes * max(len(b.table), 1) + b.codes
        uniq, inv = np.unique(pair, return_inverse=True)
        nb = max(len(b.table), 1)
        args = [(a.table[p // nb], b.table[p % nb]) for p in uniq.tolist()]
        out, bad, errs = self._apply(e.f, args)
        inv = inv.reshape(pair.shape)
        self.fail_values(inv, bad, errs)
        return _compact(out, inv)

    def _select(self, e) -> np.ndarray:
        k, q = self.eval(e.keys), self.eval(e.queries)
        p = e.predicate
        if isinstance(p, rasp.Comparison):
            for side, col in (("key", k), ("query", q)):
                nones = [j for j, v in enumerate(col.table) if v is None]
                if nones:
                    holds = np.isin(col.codes, nones).any(axis=1)
                    self.fail(holds, ValueError(f"{side} is None!"))
            has_none = None in k.table or None in q.table
            rel = None if has_none else _compare_tables(p, k.table, q.table)
        else:
            has_none, rel = False, None
        if rel is None:
            rel = np.zeros((len(q.table), len(k.table)), dtype=bool)
            for qi, qv in enumerate(q.table):
                for ki, kv in enumerate(k.table):
                    if has_none and (kv is None or qv is None):
                        continue       # the inputs holding None failed above
                    try:
                        rel[qi, ki] = bool(p(kv, qv))
                    except Exception as err:   # noqa: BLE001 - inputs holding this pair fail
                        rows = ((q.codes == qi).any(axis=1)) & ((k.codes == ki).any(axis=1))
                        self.fail(rows, err)
        return rel[q.codes[:, :, None], k.codes[:, None, :]]

    def _aggregate(self, e) -> Column:
        sel = self.eval(e.selector)
        src = self.eval(e.sop)
        B, n = self.B, self.n
        width = sel.sum(axis=2)                                    # (B, nq)
        first = np.argmax(sel, axis=2)                             # the selected key where width == 1
        single = np.take_along_axis(src.codes, first, axis=1)      # its code
        m = len(src.table)
        codes = np.where(width == 1, single, m)                    # m: the default
        table = list(src.table) + [e.default]
        many = width > 1
        if many.any():
            numeric = np.array([isinstance(v, _NUMBER) and v is not None for v in src.table], dtype=bool)
            nums = np.array([float(v) if ok else 0.0 for v, ok in zip(src.table, numeric)], dtype=np.float64)
            bad_key = sel & ~numeric[src.codes][:, None, :]
            bad_rows = (bad_key.any(axis=2) & many).any(axis=1)
            if bad_rows.any():
                b = int(np.nonzero(bad_rows)[0][0])
                q = int(np.nonzero(bad_key[b].any(axis=1) & many[b])[0][0])
                chosen = [src.table[c] for c, s in zip(src.codes[b].tolist(), sel[b, q].tolist()) if s]
                self.fail(bad_rows, ValueError("Only types int, bool, and float are supported for aggregation. "
                                               f"Received sequence: {chosen}"))
            means = np.einsum("bqk,bk->bq", sel.astype(np.float64), nums[src.codes]) / np.maximum(width, 1)
            uniq, inv = np.unique(means[many], return_inverse=True)
            codes = codes.copy()
            codes[many] = m + 1 + inv.reshape(-1)
            table += uniq.tolist()
        return _compact(table, codes.reshape(B, n))


def _compare_tables(p, keys: list, queries: list) -> np.ndarray | None:
    """(|queries|, |keys|) of a Comparison with numpy, when both tables are numbers or both strings."""
    if p is rasp.Comparison.TRUE:
        return np.ones((len(queries), len(keys)), dtype=bool)
    if p is rasp.Comparison.FALSE:
        return np.zeros((len(queries), len(keys)), dtype=bool)

    def kind(table):
        if all(isinstance(v, _NUMBER) for v in table):
            return "number"
        if all(isinstance(v, str) for v in table):
            return "str"
        return None
    kk, kq = kind(keys), kind(queries)
    if kk is None or kk != kq or not keys or not queries:
        return None
    if kk == "number":
        if any(isinstance(v, int) and abs(v) > 2 ** 53 for v in keys + queries):
            return None
        K, Q = np.array(keys, dtype=np.float64), np.array(queries, dtype=np.float64)
    else:
        K, Q = np.array(keys, dtype=str), np.array(queries, dtype=str)
    op = {rasp.Comparison.EQ: np.equal, rasp.Comparison.LT: np.less, rasp.Comparison.LEQ: np.less_equal,
          rasp.Comparison.GT: np.greater, rasp.Comparison.GEQ: np.greater_equal,
          rasp.Comparison.NEQ: np.not_equal}[p]
    return op(K[None, :], Q[:, None])     # predicate(key, query): key OP query


def evaluate_batch(expr, inputs: list, causal: bool = False, raise_first: bool = False) -> tuple[list, list]:
    """Tracr's value of `expr` on each input (all of one length): (values, errors), errors[b] the exception
    of input b (its value None)."""
    inputs = [list(x) for x in inputs]
    if not inputs:
        return [], []
    batch = Batch(inputs, causal)
    result = batch.eval(expr)
    if raise_first and batch.errors[0] is not None:
        raise batch.errors[0]
    if isinstance(expr, rasp.Selector):
        values = result.tolist()
    else:
        values = result.values()
    return [None if err is not None else v for v, err in zip(values, batch.errors)], batch.errors


SMALL = 24    # inputs up to this length are evaluated in plain Python (numpy's per-call overhead dominates there)


def _small(expr, xs: list, causal: bool, memo: dict):
    """One short input, plain Python lists, each expression once (memoised by id): the same rules."""
    key = expr.unique_id
    if key in memo:
        return memo[key]
    e, n = expr, len(xs)
    if isinstance(e, rasp.TokensType):
        out = list(xs)
    elif isinstance(e, rasp.IndicesType):
        out = list(range(n))
    elif isinstance(e, rasp.LengthType):
        out = [n] * n
    elif isinstance(e, rasp.Full):
        out = [e.fill] * n
    elif isinstance(e, rasp.Map):
        f = e.f
        out = [None if v is None else f(v) for v in _small(e.inner, xs, causal, memo)]
    elif isinstance(e, rasp.SequenceMap):
        a, b = _small(e.fst, xs, causal, memo), _small(e.snd, xs, causal, memo)
        out = [None if x is None or y is None else e.f(x, y) for x, y in zip(a, b)]
    elif isinstance(e, rasp.Select):
        keys, queries = _small(e.keys, xs, causal, memo), _small(e.queries, xs, causal, memo)
        p = e.predicate
        if isinstance(p, rasp.Comparison) and None not in keys and None not in queries:
            p = rasp._COMPARE[p]
        out = [[bool(p(k, q)) for k in keys] for q in queries]
        if causal:
            out = [[x and j <= i for j, x in enumerate(row)] for i, row in enumerate(out)]
    elif isinstance(e, rasp.SelectorWidth):
        out = [sum(row) for row in _small(e.selector, xs, causal, memo)]
    elif isinstance(e, rasp.Aggregate):
        values = _small(e.sop, xs, causal, memo)
        out = []
        for row in _small(e.selector, xs, causal, memo):
            chosen = [v for s, v in zip(row, values) if s]
            if not chosen:
                out.append(e.default)
            elif len(chosen) == 1:
                out.append(chosen[0])
            elif all(isinstance(v, _NUMBER) for v in chosen):
                out.append(sum(chosen) / len(chosen))
            else:
                raise ValueError("Only types int, bool, and float are supported for aggregation. "
                                 f"Received sequence: {chosen}")
    elif isinstance(e, (rasp.SelectorOr, rasp.SelectorAnd)) and not isinstance(e, rasp.SelectorOr):
        a, b = _small(e.fst, xs, causal, memo), _small(e.snd, xs, causal, memo)
        out = [[x and y for x, y in zip(r, t)] for r, t in zip(a, b)]
    elif isinstance(e, rasp.SelectorOr):
        a, b = _small(e.fst, xs, causal, memo), _small(e.snd, xs, causal, memo)
        out = [[(x or y) and (not causal or j <= i) for j, (x, y) in enumerate(zip(r, t))]
               for i, (r, t) in enumerate(zip(a, b))]
    elif isinstance(e, rasp.SelectorNot):
        out = [[(not x) and (not causal or j <= i) for j, x in enumerate(r)]
               for i, r in enumerate(_small(e.inner, xs, causal, memo))]
    else:   # constants: the batch path's checks and messages
        out = evaluate_batch(e, [xs], causal, raise_first=True)[0][0]
    memo[key] = out
    return out


def evaluate(expr, xs, causal: bool = False):
    """Tracr's `rasp.evaluate(expr, xs)`: a list of values (an s-op) or of bool rows (a selector)."""
    xs = list(xs)
    if not xs:
        return []
    if len(xs) <= SMALL:
        return _small(expr, xs, causal, {})
    values, errors = evaluate_batch(expr, [xs], causal)
    if errors[0] is not None:
        raise errors[0]
    return values[0]
