"""The closed form of a length-free model's position encoding (`i mod m`, `i op c` on `indices + offset`):
from which position t on it repeats, and with which period, so that an export can write it as a finite
table indexed by `t if t < start else start + (t - start) mod period` (interop/onnx_length_free.py).

The dialect check (engine/dialect/walk.py, `index_op`) admits exactly two encodings of a position
`t + offset`: `(t + offset) % m` with an integer m > 0 (periodic with period m once t + offset >= 0, under
any sign convention of the modulus) and a comparison with a constant c (constant once t + offset > c).
The form is derived from that structure, then checked against the encoding's own values (`fn`, the one
the runner uses) over the first positions; any other shape, or a check that fails, gives None (no
closed form: an export refuses with the reason)."""
from __future__ import annotations

import math

import numpy as np

COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")
CHECK_PERIODS = 4          # the form is compared with the encoding over start + this many periods
MAX_TABLE = 4096           # start + period at most this (the export's table rows)


def position_form(node, offset: int, fn) -> tuple[int, int, list[int]] | None:
    """(start, period, the value index at t = 0 .. start + period - 1), or None."""
    args = list(node.template)
    consts = [x for t, x in args if t == "const"]
    if node.op == "%" and len(args) == 2 and args[0][0] == "arg" and len(consts) == 1:
        start, period = max(0, -int(offset)), int(consts[0])
    elif node.op in COMPARISONS and len(args) == 2 and len(consts) == 1:
        c = consts[0]
        number = isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)
        start, period = (max(0, math.floor(c) - int(offset) + 1) if number else 0), 1
    else:
        return None
    if period < 1 or start + period > MAX_TABLE:
        return None
    try:
        t = np.arange(start + CHECK_PERIODS * period, dtype=np.int64)
        seen = np.asarray(fn(t), dtype=np.int64)
    except Exception:   # noqa: BLE001 - the encoding's own refusal: no closed form to export
        return None
    table = seen[:start + period]
    folded = np.where(t < start, t, start + (t - start) % period)
    if not np.array_equal(table[folded], seen):
        return None
    return start, period, table.tolist()
