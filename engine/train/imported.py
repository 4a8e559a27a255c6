"""Attention maps from another tool: read, validate, and overlay on a program's selectors (numpy only).

Format (JSON object, or .npz with the same keys as arrays):
    tokens     the input, one entry per position (BOS included when `bos` is true)
    attention  layers x heads x n x n, rows = queries, each row summing to 1
    bos        optional, default false: position 0 is a BOS token the program does not see
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .data import Task, load_task, program_on
from .errors import TrainError
from .match import overlay

ROW_TOLERANCE = 1e-3


@dataclass
class ImportedAttention:
    tokens: list
    attention: np.ndarray   # (L, H, n, n) float64
    bos: bool = False


def validate_attention(obj) -> ImportedAttention:
    """Check a decoded JSON object (or npz contents as a dict) and return the maps; TrainError otherwise."""
    if not isinstance(obj, dict):
        raise TrainError("attention maps must be an object with 'tokens' and 'attention'")
    for key in ("tokens", "attention"):
        if key not in obj:
            raise TrainError(f"the attention maps have no '{key}' entry")
    tokens = obj["tokens"]
    if isinstance(tokens, np.ndarray):
        tokens = tokens.tolist()
    if isinstance(tokens, str):
        tokens = list(tokens)
    if not isinstance(tokens, list) or not tokens:
        raise TrainError("'tokens' must be a non-empty list of tokens")
    if not all(isinstance(t, (str, int, float, bool)) for t in tokens):
        raise TrainError("'tokens' must hold strings, numbers or bools")
    bos = obj.get("bos", False)
    if isinstance(bos, np.ndarray):
        bos = bos.item()
    if not isinstance(bos, (bool, np.bool_)):
        raise TrainError("'bos' must be true or false")
    try:
        att = np.asarray(obj["attention"], dtype=np.float64)
    except (ValueError, TypeError):
        raise TrainError("'attention' must be a regular numeric array layers x heads x n x n "
                         "(its sub-lists have different lengths, or hold non-numbers)") from None
    if att.ndim != 4:
        raise TrainError(f"'attention' must have 4 dimensions (layers x heads x n x n); it has shape {att.shape}")
    L, H, nq, nk = att.shape
    if L == 0 or H == 0:
        raise TrainError(f"'attention' has no maps (shape {att.shape})")
    if nq != nk:
        raise TrainError(f"attention maps must be square (n x n); they are {nq} x {nk}")
    if nq != len(tokens):
        raise TrainError(f"the attention maps are {nq} x {nk} but there are {len(tokens)} tokens")
    if bos and len(tokens) < 2:
        raise TrainError("with bos, the tokens need a BOS token and at least one more")
    if not np.isfinite(att).all():
        raise TrainError("'attention' holds NaN or infinite values")
    if (att < -1e-6).any():
        layer, h, q, k = np.argwhere(att < -1e-6)[0]
        raise TrainError(f"layer {layer + 1}, head {h}, row {q}: the weight {att[layer, h, q, k]:g} is negative")
    sums = att.sum(-1)
    bad = np.argwhere(np.abs(sums - 1) > ROW_TOLERANCE)
    if len(bad):
        layer, h, q = bad[0]
        raise TrainError(f"layer {layer + 1}, head {h}, row {q} sums to {sums[layer, h, q]:.4g}; every row of an "
                         f"attention map must sum to 1 (within {ROW_TOLERANCE:g}) ({len(bad)} such rows)")
    return ImportedAttention(list(tokens), att, bool(bos))


def read_attention(path) -> ImportedAttention:
    """Attention maps from a .json or .npz file."""
    path = Path(path)
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                obj = {k: z[k] for k in z.files}
        else:
            obj = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise TrainError(f"{path} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise TrainError(f"cannot read {path}: {e}") from None
    return validate_attention(obj)


def overlay_imported(source_or_task, imported: ImportedAttention | dict, output: str | None = None,
                     load_dirs=None) -> dict:
    """Score imported maps against a program's selectors on their tokens: the overlay document
    ({"tokens", "offset", "attention", "selectors", "matches"}) plus "layers", "heads" and "output"."""
    task = source_or_task if isinstance(source_or_task, Task) else load_task(source_or_task, output, load_dirs)
    if not isinstance(imported, ImportedAttention):
        imported = validate_attention(imported)
    offset = 1 if imported.bos else 0
    values, sels = program_on(task, imported.tokens[offset:], offset)
    doc = overlay(task.heads, imported.attention, sels, imported.tokens, offset)
    L, H = imported.attention.shape[:2]
    return {"output": task.output, "layers": L, "heads": H, "program_layers": task.layers,
            "program_heads_per_layer": task.heads_per_layer, "values": values, **doc}
