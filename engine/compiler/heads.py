"""Pass 6, build the heads: query, key, value and output matrices in residual coordinates.

Score of query q on key k: the sum of the head's 0/1 tables, read bilinearly. For a table over
(query values, key values) the key side projects its one-hot onto the table's distinct columns and
the query side onto the table's entries for those columns (or the other way round, whichever is
narrower). One more coordinate scores BOS: the query's `one` times the key's `bos`, weighted by
the BOS level (m - 1/2 for an aggregate over m terms, m for a selector width).

The value side reads the aggregated s-op (a function of one categorical block, folded into the
matrix; an affine function of a numerical block; or a constant) into the output block's
encoding. What BOS holds is set by the assembly pass: the default (aggregate) or 1 (width).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fused import lookup
from .plan import Block, HeadPlan, Plan


@dataclass
class HeadWeights:
    plan: HeadPlan
    q: np.ndarray          # (d_qk, d)
    k: np.ndarray
    v: np.ndarray          # (d_v, d)
    o: np.ndarray          # (d, d_v)
    q_bos: np.ndarray      # what the BOS position's query, key and value must be
    k_bos: np.ndarray
    v_bos: np.ndarray


def _side_dims(block: Block | None, one: Block) -> np.ndarray:
    return np.array([one.start]) if block is None else block.dims


def build_head(h: HeadPlan, d: int, one: Block, bos: Block) -> HeadWeights:
    q_rows, k_rows = [], []
    for t in h.tables:
        qd, kd = _side_dims(t.query, one), _side_dims(t.key, one)
        qf, kf = factor_table(np.asarray(t.table, dtype=bool))
        for qv, kv in zip(qf, kf):
            qr, kr = np.zeros(d), np.zeros(d)
            qr[qd] = qv
            kr[kd] = kv
            q_rows.append(qr)
            k_rows.append(kr)
    qr, kr = np.zeros(d), np.zeros(d)
    qr[one.start] = h.bos_level
    kr[bos.start] = 1.0
    q_rows.append(qr)
    k_rows.append(kr)
    q, k = np.array(q_rows), np.array(k_rows)
    bos_slot = np.zeros(len(q_rows))
    bos_slot[-1] = 1.0

    if h.mode == "width":
        v = np.zeros((1, d))
        o = np.zeros((d, 1))
        o[h.out.start, 0] = 1.0
        v_bos = np.ones(1)
    else:
        v_parts, o_cols, v_bos = [], [], []
        for read in h.reads:
            vr, vb = _value_rows(read, d, one)
            v_parts.append(vr)
            v_bos.append(vb)
            for i in range(read.out.size):
                col = np.zeros(d)
                col[read.out.start + i] = 1.0
                o_cols.append(col)
        v = np.vstack(v_parts)
        o = np.array(o_cols).T
        v_bos = np.concatenate(v_bos)
    return HeadWeights(h, q, k, v, o, bos_slot, bos_slot.copy(), v_bos)


def factor_table(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0/1 factors (qf, kf), one row per score coordinate, with qf.T @ kf == table exactly.

    Plain: one coordinate per distinct non-zero column (the key side marks the keys of that column,
    the query side holds the column), or the same per distinct row, whichever is narrower. When the
    distinct columns (or rows) are nested sets, as for an order comparison (`<` on a joint
    (token, index) value), the table is a threshold: class j of the narrow side is selected exactly
    when j <= rank(other side). Then the same number of coordinates, laid out as a Fenwick tree
    over the classes (coordinate i covers classes i - lowbit(i) + 1 .. i), holds each value in at
    most log2(classes) + 1 coordinates instead of up to all of them: far fewer non-zero weights.
    The factorization with the fewest non-zeros among those of the fewest coordinates is used."""
    options = []
    for flip in (False, True):
        t = table.T if flip else table
        cols, col_class = np.unique(t, axis=1, return_inverse=True)     # cols: (|A|, n) over side A
        col_class = col_class.ravel()
        keep = cols.any(axis=0)
        a = cols[:, keep].T.astype(np.float64)                            # (n, |A|)
        b = (col_class[None, :] == np.flatnonzero(keep)[:, None]).astype(np.float64)   # (n, |B|)
        options.append((a, b, flip))
        fen = _fenwick(a, b)
        if fen is not None:
            options.append(fen + (flip,))
    a, b, flip = min(options, key=lambda o: (len(o[0]), np.count_nonzero(o[0]) + np.count_nonzero(o[1])))
    return (b, a) if flip else (a, b)


def _fenwick(a: np.ndarray, b: np.ndarray):
    """a: (n, |A|) distinct non-empty sets over side A, b: (n, |B|) the class of each B value. If the
    sets are nested, the Fenwick-tree factors of the same product, else None."""
    n = len(a)
    if n < 3:
        return None
    order = np.argsort(-a.sum(axis=1), kind="stable")                  # largest set first
    a, b = a[order], b[order]
    if not (a[1:] <= a[:-1]).all():
        return None
    rank = a.sum(axis=0).astype(np.int64)[None, :]                      # A value x sees classes 1..rank[x]
    idx = np.arange(1, n + 1)[:, None]
    lowbit = idx & -idx                                                 # coordinate i covers i - lowbit(i) < j <= i
    # the prefix 1..r is covered by the coordinates r, r - lowbit(r), ...: exactly the i <= r < i + lowbit(i)
    af = ((idx <= rank) & (rank < idx + lowbit)).astype(np.float64)
    cls = (np.argmax(b, axis=0) + 1)[None, :]                           # 1-based class of each B value
    bf = ((idx - lowbit < cls) & (cls <= idx) & b.any(axis=0)[None, :]).astype(np.float64)
    return af, bf


def _value_rows(read, d: int, one: Block) -> tuple[np.ndarray, np.ndarray]:
    out, r = read.out, read.reader
    rows = np.zeros((out.size, d))
    bos = np.zeros(out.size)
    src = _side_dims(r.block, one)
    if out.kind == "categorical":
        target = lookup(np.asarray(out.values), np.asarray(r.values))
        ok = (target >= 0) & ~np.asarray(r.bad)
        rows[target[ok], src[ok]] = 1.0
        if read.default_ok:
            j = lookup(np.asarray(out.values), np.asarray([read.default]))[0]
            if j >= 0:
                bos[j] = 1.0
    else:
        if r.affine is not None:
            a, b = r.affine
            rows[0, r.block.start] = a
            rows[0, one.start] += b
        else:
            ok = ~np.asarray(r.bad)
            rows[0, src[ok]] = np.asarray(r.values, dtype=np.float64)[ok]
        if read.default_ok and isinstance(read.default, (bool, int, float)):
            bos[0] = float(read.default)
    return rows, bos


def build_heads(plan: Plan, d: int) -> list[HeadWeights]:
    one = next(b for b in plan.blocks if b.kind == "one")
    bos = next(b for b in plan.blocks if b.kind == "bos")
    return [build_head(h, d, one, bos) for h in plan.heads]


