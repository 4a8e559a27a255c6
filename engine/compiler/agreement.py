"""Inputs over a vocabulary (all of them when few, else a seeded sample), the evaluator's values on
them, and the agreement of a compiled model with the evaluator."""
from __future__ import annotations

import time

import numpy as np

from .. import elementwise

EXHAUSTIVE_LIMIT = 100_000     # at most this many inputs in all: check every one
SAMPLE_PER_LENGTH = 2_000      # otherwise: this many distinct random inputs per length (seeded)
CHUNK = 20_000                 # inputs evaluated and run at once (bounds memory on exhaustive checks)


def input_ids(V: int, N: int, exhaustive_limit: int = EXHAUSTIVE_LIMIT, per_length: int = SAMPLE_PER_LENGTH,
              seed: int = 0, lengths=None) -> tuple[dict[int, np.ndarray], bool]:
    """{n: (B, n) token indices 0..V-1} for n in `lengths` (default 1..N), and whether it is every input."""
    lengths = list(lengths or range(1, N + 1))
    exhaustive = sum(V ** n for n in lengths) <= exhaustive_limit
    rng = np.random.default_rng(seed)
    out = {}
    for n in lengths:
        if exhaustive or V ** n <= per_length:
            codes = np.arange(V ** n, dtype=np.int64)
            out[n] = (codes[:, None] // (V ** np.arange(n - 1, -1, -1, dtype=np.int64))[None, :]) % V
        else:
            out[n] = np.unique(rng.integers(0, V, size=(per_length, n)), axis=0)
    return out, exhaustive


def equal_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise equality with Python's rules (1 == 1.0 == True; a str never equals a number)."""
    got, want = np.asarray(got), np.asarray(want)
    kg, kw = got.dtype.kind, want.dtype.kind
    if (kg in "bif" and kw in "bif") or kg == kw or "O" in (kg, kw):  # "O": values of several types
        return elementwise.compare("==", got, want)
    return np.zeros(np.broadcast_shapes(got.shape, want.shape), dtype=bool)


def close_values(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    want = np.asarray(want, dtype=np.float64)
    return np.abs(np.asarray(got, dtype=np.float64) - want) <= 1e-6 * np.maximum(1.0, np.abs(want))


def agreement(model, ids: dict[int, np.ndarray], mode: str = "hard", beta: float | None = None,
              exhaustive: bool | None = None, deadline: float | None = None) -> dict:
    """How often the model's output equals the evaluator's, over the inputs `ids` ({n: (B, n)})."""
    total = agree = errors = positions = agree_positions = 0
    max_error = 0.0
    first = None
    per_length = []
    for n, all_idx in sorted(ids.items()):
        if deadline is not None and time.monotonic() > deadline:
            break
        n_ok = n_agree = 0
        for start in range(0, len(all_idx), CHUNK):
            idx = all_idx[start:start + CHUNK]
            want, ok = model.expected(idx)
            got = model.forward_outputs(idx, mode, beta)
            match, err = model.compare(got, want)
            ok_rows = ok
            row_match = match.all(axis=1) & ok_rows
            n_ok += int(ok_rows.sum())
            n_agree += int(row_match.sum())
            errors += int((~ok_rows).sum())
            positions += int(ok_rows.sum()) * n
            agree_positions += int(match[ok_rows].sum())
            if ok_rows.any():
                max_error = max(max_error, float(np.max(err[ok_rows])))
            if first is None and (ok_rows & ~row_match).any():
                b = int(np.nonzero(ok_rows & ~row_match)[0][0])
                first = {"input": model.tokens_of(idx[b]), "expected": _plain(want[b]),
                         "got": model.decode_output(got[b:b + 1])[0]}
        total += n_ok
        agree += n_agree
        per_length.append({"n": n, "inputs": n_ok, "agree": n_agree})
    return {"inputs": total, "agree": agree, "fraction": agree / total if total else 1.0,
            "positions": positions, "agree_positions": agree_positions,
            "max_error": max_error, "evaluator_errors": errors, "exhaustive": exhaustive,
            "lengths": [min(ids), max(ids)] if ids else [], "per_length": per_length, "first_mismatch": first,
            "mode": mode, "beta": beta}


def _plain(row) -> list:
    return [v.item() if isinstance(v, np.generic) else v for v in np.asarray(row).tolist()]
