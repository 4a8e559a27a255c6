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
    if n == 0:
        return sel.copy()
    counts = np.count_nonzero(sel, axis=-1)                     # (B, n)
    dtype = np.int16 if 4 * n + 4 < 2 ** 15 else np.int64      # small scores: a quarter of the memory
    big = dtype(4 * n + 4)                                       # above every score
    positions = np.arange(n)
    score = np.where(sel, np.abs(positions[:, None] - positions[None, :]).astype(dtype), big)
    diagonal = score.reshape(B, n * n)[:, :: n + 1]             # a view: the query's own position
    diagonal[...] = np.where(diagonal == 0, counts, big)        # selected there: the count of matches
    chosen = score.argmin(axis=-1)                              # the first minimum: the smaller j
    chosen[counts == 0] = 0
    out = np.zeros(sel.shape, dtype=bool)
    out.reshape(B * n, n)[np.arange(B * n), chosen.reshape(-1)] = True
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
