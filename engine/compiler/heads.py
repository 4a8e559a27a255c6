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
        table = t.table.astype(np.float64)
        qd, kd = _side_dims(t.query, one), _side_dims(t.key, one)
        cols, col_class = np.unique(table, axis=1, return_inverse=True)   # cols: (|Q|, n_cols)
        rows, row_class = np.unique(table, axis=0, return_inverse=True)   # rows: (n_rows, |K|)
        if cols.shape[1] <= rows.shape[0]:
            for c in range(cols.shape[1]):
                if not cols[:, c].any():
                    continue
                qr, kr = np.zeros(d), np.zeros(d)
                qr[qd] = cols[:, c]
                kr[kd[col_class.ravel() == c]] = 1.0
                q_rows.append(qr)
                k_rows.append(kr)
        else:
            for r in range(rows.shape[0]):
                if not rows[r].any():
                    continue
                qr, kr = np.zeros(d), np.zeros(d)
                qr[qd[row_class.ravel() == r]] = 1.0
                kr[kd] = rows[r]
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


