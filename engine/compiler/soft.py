"""The soft-attention study (after Yang, Strobl, Chiang and Angluin, "Simulating Hard Attention
Using Soft Attention"): how large must the inverse temperature beta be for softmax attention to
reproduce the compiled model's average-hard attention, exactly, on every input up to max_len?

Per head, on the input set (hard attention): is every query row *tieless* (one maximal key),
*uniform* (all keys tie), or neither (it averages a proper subset, as a selector width or a mean
does); and the score margin between the maximal keys and the rest (1/2 by construction, or more).
Softmax puts weight about (n - k) e^(-beta * margin) / k off the k maximal keys, so beta must grow
like log n / margin; the MLPs' discretisation absorbs the rest of the error.
"""
from __future__ import annotations

import numpy as np

from .agreement import agreement, input_ids

MAX_BETA = 2.0 ** 20


def head_report(model, ids: dict[int, np.ndarray]) -> list[dict]:
    """Per head: rows that are tieless / uniform / averaging a subset, and the smallest score margin."""
    stats = [dict(h, rows=0, tieless=0, uniform=0, subset=0, margin=np.inf) for h in model.heads]
    slot_of = {(h["layer"], h["head"]): i for i, h in enumerate(model.heads)}
    for n, idx in sorted(ids.items()):
        for start in range(0, len(idx), 2048):
            fw = model.forward(idx[start:start + 2048], "hard", None, trace=True)
            for layer, scores in enumerate(fw.scores):
                for h in range(scores.shape[1]):
                    i = slot_of.get((layer + 1, h))
                    if i is None:
                        continue
                    s = scores[:, h, 1:, :]                        # query rows of the input (BOS excluded)
                    top = s.max(axis=-1, keepdims=True)
                    at_top = s >= top - 1e-6
                    k = at_top.sum(axis=-1)
                    rest = np.where(at_top, -np.inf, s).max(axis=-1)
                    st = stats[i]
                    st["rows"] += k.size
                    st["tieless"] += int((k == 1).sum())
                    st["uniform"] += int((k == s.shape[-1]).sum())
                    st["subset"] += int(((k > 1) & (k < s.shape[-1])).sum())
                    gaps = (top[..., 0] - rest)[np.isfinite(rest)]
                    if gaps.size:
                        st["margin"] = min(st["margin"], float(gaps.min()))
    for st in stats:
        if st["rows"] and st["tieless"] == st["rows"]:
            st["kind"] = "tieless"
        elif st["rows"] and st["uniform"] == st["rows"]:
            st["kind"] = "uniform"
        elif st["subset"] == 0:
            st["kind"] = "uniform-tieless"
        else:
            st["kind"] = "averaging"
        st["margin"] = None if not np.isfinite(st["margin"]) else round(st["margin"], 9)
    return [{k: st[k] for k in ("layer", "head", "selector", "mode", "part", "kind", "rows", "tieless", "uniform",
                                "subset", "margin")} for st in stats]


def exact_at(model, ids, beta: float) -> bool:
    r = agreement(model, ids, "soft", beta)
    return r["agree"] == r["inputs"]


def minimal_beta(model, ids: dict[int, np.ndarray], precision: float = 0.01) -> float | None:
    """The smallest beta (to a relative `precision`) at which softmax attention agrees with the evaluator
    on every input of `ids`: doubling from 1 (or halving while it still agrees), then bisection on a
    log scale. None if even 2^20 is not enough."""
    beta = 1.0
    if exact_at(model, ids, beta):
        while beta > 2.0 ** -10 and exact_at(model, ids, beta / 2):
            beta /= 2
        lo, hi = beta / 2, beta
    else:
        while not exact_at(model, ids, beta):
            beta *= 2
            if beta > MAX_BETA:
                return None
        lo, hi = beta / 2, beta
    while hi / lo > 1 + precision:
        mid = float(np.sqrt(lo * hi))
        if exact_at(model, ids, mid):
            hi = mid
        else:
            lo = mid
    return hi


def soft_study(model, betas=None, exhaustive_limit: int = 20_000, per_length: int = 500, seed: int = 0,
               precision: float = 0.01, per_n: bool = True) -> dict:
    """The study as JSON: heads, the minimal exact beta (overall and per input length), and agreement and
    maximum output error as functions of beta (overall and per length), for plots."""
    ids, exhaustive = input_ids(len(model.vocab), model.max_len, exhaustive_limit, per_length, seed)
    beta_star = minimal_beta(model, ids, precision)
    if betas is None:
        centre = beta_star or MAX_BETA
        betas = sorted({round(centre * 2.0 ** (k / 2), 6) for k in range(-8, 5)})
    curve, grid = [], []
    for b in betas:
        r = agreement(model, ids, "soft", b)
        curve.append({"beta": b, "agreement": r["fraction"], "positions": r["agree_positions"] / max(r["positions"], 1),
                      "max_error": r["max_error"]})
        for row in r["per_length"]:
            grid.append({"beta": b, "n": row["n"], "agreement": row["agree"] / max(row["inputs"], 1)})
    by_n = []
    if per_n:
        for n in sorted(ids):
            by_n.append({"n": n, "min_beta": minimal_beta(model, {n: ids[n]}, precision)})
    hard = agreement(model, ids, "hard")
    return {
        "inputs": sum(len(v) for v in ids.values()), "exhaustive": exhaustive, "max_len": model.max_len,
        "hard_agreement": hard["fraction"],
        "min_beta": beta_star, "precision": precision,
        "heads": head_report(model, ids),
        "min_beta_by_n": by_n,
        "curve": curve,
        "grid": grid,
    }
