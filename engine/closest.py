"""The values of rasplay's two extensions for learned programs (docs/language.md, "Learned-program
constructs"), on a batch: `select_closest` and `aggregate_sum`. Vectorised over batch, queries and keys.

select_closest keeps, of the keys a selector selects for query i, the one that TransformerPrograms'
decompiled `select_closest` keeps: the match j with the smallest score, where a key's score is |i - j|
and the query's own position scores the number of matches (so it wins only when no other match is
closer than that count), ties going to the smaller j; where nothing matches, position 0 (their
beginning-of-sequence token).
"""
from __future__ import annotations

import numpy as np

from .lang.errors import RaspError


def closest(sel: np.ndarray) -> np.ndarray:
    """(B, n, n) bool (rows = queries) -> the same shape with exactly one key per query."""
    B, n, _ = sel.shape
    counts = sel.sum(axis=-1)                                   # (B, n)
    q = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    score = np.broadcast_to(np.abs(q - k), sel.shape).astype(np.int64).copy()
    own = np.broadcast_to(np.eye(n, dtype=bool), sel.shape)
    score[own] = np.broadcast_to(counts[:, :, None], sel.shape)[own]
    big = np.int64(4 * n + 4)
    chosen = np.where(sel, score, big).argmin(axis=-1)          # the first minimum: the smaller j
    chosen = np.where(counts == 0, 0, chosen)
    out = np.zeros(sel.shape, dtype=bool)
    np.put_along_axis(out, chosen[:, :, None], True, axis=-1)
    return out


def selected_sum(sel: np.ndarray, values: np.ndarray, what: str, origin) -> np.ndarray:
    """The sum of the selected values per query (0 where none): ints (bools count as 0 and 1) stay ints,
    floats stay floats; anything else is refused."""
    kind = values.dtype.kind
    if kind in "biu":
        return np.einsum("bqk,bk->bq", sel.astype(np.int64), values.astype(np.int64))
    if kind == "f":
        return np.einsum("bqk,bk->bq", sel.astype(np.float64), values.astype(np.float64))
    raise RaspError(f"{what}: aggregate_sum adds numbers, and these values are not all numbers "
                    f"(they hold {'strings' if kind == 'U' else 'values of several types'})", origin, "type")
