"""How an MLP target's hidden units test their categorical inputs (pass 7, with mlps.py).

A unit of a table fires for one combination of its categorical inputs: it adds one test per input and
subtracts the number of tests less one (or, gating a group of numerical units, a large multiple of
the number of tests). A test is 1 when the input's one-hot holds a value of a chosen set (a class),
else 0. Fine gates test single values: one dimension each. Coarse gates test classes of values on
which the target cannot differ: values a and b of one input are in one class when, for every
combination of the other inputs' values (categorical and numerical), either both combinations are
unrealizable, or both are realizable and give the same result (the same value, or both an error of
the evaluator). Then one unit per combination of classes computes the table exactly: its result is
constant over the class combination (a and b agree with every other input fixed, so any member of
a class combination agrees with any other by changing one input at a time). A class test reads the
class's dimensions (+1 each), or, when that is fewer, the other values' dimensions (-1 each, and 1
in the bias: a one-hot holds exactly one value); a class holding every value is no test at all.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Gates:
    """Per categorical input j: the class of each domain point, and each class's test as fc1 weights
    (rows[j][c], a (d,) row) and a bias share (bias[j][c]: -1 for a test of the class's own dimensions,
    0 for a test of the complement or none). A unit for classes (c_j) fires when
    sum_j rows[j][c_j] . x + 1 + sum_j bias[j][c_j] > 0."""
    point_class: list
    rows: list
    bias: list
    merged: dict          # input name -> (values, classes) where classes < values

    @property
    def sizes(self) -> list[int]:
        return [len(r) for r in self.rows]

    def units(self, classes: list[np.ndarray], d: int) -> tuple[np.ndarray, np.ndarray]:
        """fc1 rows (n, d) and bias shares (n,) testing, for unit u, class classes[j][u] of each input."""
        n = len(classes[0]) if classes else 1
        w = np.zeros((n, d))
        share = np.zeros(n)
        for j, c in enumerate(classes):
            w += self.rows[j][c]
            share += self.bias[j][c]
        return w, share


def fine_gates(domain, cat: list, d: int) -> Gates:
    """One class per value: a unit tests each input's one dimension."""
    rows, bias = [], []
    for _, b in cat:
        r = np.zeros((b.size, d))
        r[np.arange(b.size), b.start + np.arange(b.size)] = 1.0
        rows.append(r)
        bias.append(np.full(b.size, -1.0))
    return Gates([domain.index[i] for i, _ in cat], rows, bias, {})


def coarse_gates(domain, cat: list, num: list, label: np.ndarray, d: int) -> Gates | None:
    """Classes of values on which the target cannot differ (see the module's note), or None when every
    class is a single value. `label`: an integer per domain point, equal where the results are equal
    (and one code for every point where the evaluator errors)."""
    inputs = [(i, b) for i, b in cat] + [(i, b) for i, b in num]
    classes_of = []
    merged = {}
    for j, (i, b) in enumerate(cat):
        others = [domain.index[x] for y, (x, _) in enumerate(inputs) if y != j]
        cls = _classes(domain.index[i], others, label, b.size)
        classes_of.append(cls)
        n = int(cls.max(initial=-1)) + 1
        seen = int((cls >= 0).sum())
        if n < seen:
            merged[b.name] = (seen, n)
    if not merged:
        return None
    rows, bias, point_class = [], [], []
    for (i, b), cls in zip(cat, classes_of):
        n = int(cls.max(initial=-1)) + 1
        r, s = np.zeros((n, d)), np.zeros(n)
        for c in range(n):
            members = np.nonzero(cls == c)[0]
            if len(members) == b.size:
                continue
            if len(members) <= b.size - len(members):
                r[c, b.start + members] = 1.0
                s[c] = -1.0
            else:
                r[c, b.start + np.nonzero(cls != c)[0]] = -1.0
        rows.append(r)
        bias.append(s)
        point_class.append(cls[domain.index[i]])
    return Gates(point_class, rows, bias, merged)


def _classes(index: np.ndarray, others: list, label: np.ndarray, size: int) -> np.ndarray:
    """Per value of one input (0..size-1): its class (values with the same (other inputs, result)
    pairs share one), -1 for values no domain point holds."""
    out = np.full(size, -1, dtype=np.int64)
    if not len(index):
        return out
    if others:
        _, rest = np.unique(np.stack(others, axis=1), axis=0, return_inverse=True)
        rest = rest.ravel()
    else:
        rest = np.zeros(len(index), dtype=np.int64)
    _, lab = np.unique(label, return_inverse=True)
    pair = rest.astype(np.int64) * (int(lab.max()) + 1) + lab.ravel()
    order = np.lexsort((pair, index))
    idx, pair = index[order], pair[order]
    cuts = np.nonzero(np.diff(idx))[0] + 1
    found: dict = {}
    for value, part in zip(idx[np.r_[0, cuts]], np.split(pair, cuts)):
        sig = np.unique(part).tobytes()
        out[value] = found.setdefault(sig, len(found))
    return out


def result_labels(out) -> np.ndarray:
    """An integer per domain point of a target's results (mlps._Output), equal where the results are
    equal (-1: the evaluator errors there)."""
    if out.categorical:
        return np.where(out.valid, np.asarray(out.y, dtype=np.int64), -1)
    y = np.where(out.valid, np.asarray(out.y, dtype=np.float64), 0.0)
    _, code = np.unique(y, return_inverse=True)
    return np.where(out.valid, code.ravel(), -1)


def nonzero(*arrays) -> int:
    return int(sum(np.count_nonzero(a) for a in arrays))
