"""Scoring attention heads against a program's selectors, pairing them, and the overlay document
(numpy only, so imported maps can be scored without torch).

Score of a head for a selector, over a set of inputs: the mean, over the query rows that select at
least one key, of the attention mass the head puts on the selected keys. A head that attends only to
selected keys scores 1 (a perfect match, whatever it does among them); one that never does scores 0.
Mass on a BOS position counts as unselected. Rows that select nothing are left out (there, a
RASP aggregate returns its default; a transformer with a BOS token attends to BOS).
"""
from __future__ import annotations

from itertools import permutations

import numpy as np


def head_scores(att: np.ndarray, sel: np.ndarray, rows: np.ndarray, skip: int = 0) -> np.ndarray:
    """att (E, L, H, T, T) attention of every head on E inputs; sel (E, T, T) the selector (bool);
    rows (E, T) the real query positions. Returns (L, H) scores (NaN when no row selects anything).
    skip: leave out the first `skip` keys (BOS) and renormalise each row over the others."""
    if skip:
        att = att[..., skip:]
        att = att / np.maximum(att.sum(-1, keepdims=True), 1e-9)
        sel = sel[..., skip:]
    valid = rows & sel.any(-1)                                   # (E, T)
    mass = np.einsum("elhqk,eqk->elhq", att, sel.astype(att.dtype))
    count = valid.sum()
    if count == 0:
        return np.full(att.shape[1:3], np.nan)
    return np.einsum("elhq,eq->lh", mass, valid.astype(att.dtype)) / count


def best_pairing(scores: np.ndarray) -> list[int | None]:
    """Pair rows (selectors) with columns (heads) one to one, maximising the total score: exact for
    small layers (up to 7 heads or selectors), greedy otherwise. Returns each row's column or None."""
    S, H = scores.shape
    s = np.nan_to_num(scores, nan=-1.0)
    if S == 0 or H == 0:
        return [None] * S
    if min(S, H) <= 7 and max(S, H) <= 8:
        if S <= H:
            best = max(permutations(range(H), S), key=lambda p: (sum(s[i, p[i]] for i in range(S)), [-x for x in p]))
            return list(best)
        best = max(permutations(range(S), H), key=lambda p: (sum(s[p[j], j] for j in range(H)), [-x for x in p]))
        out: list[int | None] = [None] * S
        for j, i in enumerate(best):
            out[i] = j
        return out
    out, used_r, used_c = [None] * S, set(), set()
    for flat in np.argsort(-s, axis=None, kind="stable"):
        i, j = divmod(int(flat), H)
        if i not in used_r and j not in used_c:
            out[i] = j
            used_r.add(i)
            used_c.add(j)
    return out


def _num(x):
    return None if x is None or not np.isfinite(x) else round(float(x), 4)


def match_heads(heads: list[list[dict]], att: np.ndarray, selectors: dict[int, np.ndarray],
                rows: np.ndarray, offset: int = 0) -> list[dict]:
    """Score every selector of the program (heads: per program layer, the analysis' selectors) against
    every head of the model, and pair each program layer's selectors with the same layer's heads.

    Returns one entry per selector: {"selector", "name", "label", "layer" (1-based), "slot",
    "scores" (per model layer, per head), "head" (paired head of the same layer, or None), "score",
    "best": {"layer", "head", "score"} over all heads}; with a BOS position (offset 1) also
    "score_without_bos": the paired head's score with its BOS mass left out and rows renormalised."""
    L = att.shape[1]
    out = []
    for layer_heads in heads:
        table = np.stack([head_scores(att, selectors[h["selector"]], rows) for h in layer_heads]) \
            if layer_heads else np.zeros((0, L, att.shape[2]))
        no_bos = np.stack([head_scores(att, selectors[h["selector"]], rows, offset) for h in layer_heads]) \
            if layer_heads and offset else None
        layer = layer_heads[0]["layer"] if layer_heads else None
        pairing = best_pairing(table[:, layer - 1]) if layer_heads and layer <= L else [None] * len(layer_heads)
        for i, (h, scores, head) in enumerate(zip(layer_heads, table, pairing)):
            flat = np.nan_to_num(scores, nan=-1.0)
            bl, bh = np.unravel_index(int(np.argmax(flat)), flat.shape)
            extra = {} if no_bos is None else {
                "score_without_bos": _num(no_bos[i, layer - 1, head]) if head is not None else None}
            out.append({
                "selector": h["selector"], "name": h["name"], "label": h["label"], "layer": h["layer"],
                "slot": h["slot"], "scores": [[_num(v) for v in row] for row in scores],
                "head": head, "score": _num(scores[layer - 1, head]) if head is not None else None,
                "best": {"layer": int(bl) + 1, "head": int(bh), "score": _num(scores[bl, bh])}, **extra,
            })
    return out


def overlay(heads: list[list[dict]], att: np.ndarray, selectors: dict[int, np.ndarray], tokens: list,
            offset: int, digits: int = 3) -> dict:
    """The attention of one input laid over the program's selectors, for display.

    att (L, H, T, T) in model coordinates; selectors: id -> (T, T) bool in model coordinates;
    tokens: the T model tokens (BOS included); offset: 1 when position 0 is BOS."""
    T = att.shape[-1]
    rows = np.ones((1, T), dtype=bool)
    if offset:
        rows[0, :offset] = False
    return {
        "tokens": [str(t) for t in tokens], "offset": offset,
        "attention": np.round(att.astype(np.float64), digits).tolist(),
        "selectors": [{"selector": h["selector"], "name": h["name"], "layer": h["layer"], "slot": h["slot"],
                       "matrix": selectors[h["selector"]].astype(np.int8).tolist()} for layer in heads for h in layer],
        "matches": match_heads(heads, att[None], {k: v[None] for k, v in selectors.items()}, rows, offset),
    }
