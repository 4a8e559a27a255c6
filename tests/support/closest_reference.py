"""The learned-program constructs' first implementations, kept as references for the faster ones
(engine/closest.py, engine/distinct.py): select_closest by an int64 score per (query, key) cell, and
np.unique for the distinct values a table reads."""
from __future__ import annotations

import numpy as np


def closest_reference(sel: np.ndarray) -> np.ndarray:
    """(B, n, n) bool -> one key per query: the selected key with the smallest score (|i - j|, the
    query's own position scoring the number of keys selected), ties to the smaller j; none: position 0."""
    B, n, _ = sel.shape
    counts = sel.sum(axis=-1)
    q = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    score = np.broadcast_to(np.abs(q - k), sel.shape).astype(np.int64).copy()
    own = np.broadcast_to(np.eye(n, dtype=bool), sel.shape)
    score[own] = np.broadcast_to(counts[:, :, None], sel.shape)[own]
    chosen = np.where(sel, score, np.int64(4 * n + 4)).argmin(axis=-1)
    chosen = np.where(counts == 0, 0, chosen)
    out = np.zeros(sel.shape, dtype=bool)
    np.put_along_axis(out, chosen[:, :, None], True, axis=-1)
    return out


def distinct_reference(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.unique(flat, return_inverse=True)
