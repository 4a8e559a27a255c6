"""The distinct values of an array and where each value sits among them: `np.unique(a, return_inverse=True)`
for a 1-D array, with the same values in the same (sorted) order and the same inverse, without sorting
the whole array where that is avoidable.

The graph runner applies a table, a dict or a conversion to each distinct value of an s-op (a handful,
usually) and spreads the results back (elementwise.per_value), and compares strings through their rank
among all values (graph_runner._select). On a large batch, np.unique's sort of every position dominated
the run time of a learned program (an exhaustive check runs a whole length, B x n positions, at once).
Here:

* ints (and bools) in a range not much wider than the array: a bincount marks the values present, and
  a cumulative sum gives each its rank (linear time, no sort);
* strings: numpy holds a `<Uk` string as k code points (UCS-4, null-padded), so the strings' order is the
  order of their code-point columns read left to right; each column's rank is found as for ints and the
  ranks are combined column by column into one dense code, which keeps that order;
* anything else (floats, objects, a wide range of ints): np.unique itself.
"""
from __future__ import annotations

import numpy as np

_SLACK = 1024   # a range of ints up to 2 * size + _SLACK wide is counted with a bincount


def distinct(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(uniques, inverse) of a 1-D array, exactly as np.unique(flat, return_inverse=True) gives them."""
    kind = flat.dtype.kind
    if flat.size and kind in "iu":
        found = _small_ints(flat)
        if found is not None:
            return found
    elif flat.size and kind == "b":
        ranks, inverse = _small_ints(flat.view(np.uint8))
        return ranks.astype(np.bool_), inverse
    elif flat.size and kind == "U" and flat.dtype.itemsize:
        return _strings(flat)
    return np.unique(flat, return_inverse=True)


def _small_ints(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Ints within a narrow range: the values present (sorted) and each position's rank among them;
    None when the range is too wide for a bincount."""
    lo, hi = int(flat.min()), int(flat.max())
    span = hi - lo + 1
    if span > 2 * flat.size + _SLACK or not -2 ** 62 < lo <= hi < 2 ** 62:
        return None
    shifted = (flat - flat.dtype.type(lo)).astype(np.intp)      # in [0, span): no overflow
    present = np.bincount(shifted, minlength=span) > 0
    rank = np.cumsum(present, dtype=np.intp) - 1
    uniques = (np.flatnonzero(present) + lo).astype(flat.dtype)
    return uniques, rank[shifted]


def _dense(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Non-negative ints -> their ranks among the distinct values (0, 1, ...), and how many there are."""
    found = _small_ints(values)
    uniques, inverse = found if found is not None else np.unique(values, return_inverse=True)
    return inverse.astype(np.int64), len(uniques)


def _strings(flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    width = flat.dtype.itemsize // 4
    points = np.ascontiguousarray(flat).view(np.uint32).reshape(len(flat), width)
    codes, count = np.zeros(len(flat), dtype=np.int64), 1
    for j in range(width):
        column, size = _dense(points[:, j])
        if size > 1:
            codes, count = _dense(codes * size + column)
    first = np.empty(count, dtype=np.intp)
    first[codes] = np.arange(len(flat), dtype=np.intp)         # a position holding each code
    return flat[first], codes.astype(np.intp)
