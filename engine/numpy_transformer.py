"""A numpy transformer with the weight layout of docs/weights.md: embeddings, attention, MLP,
residual; batched; average-hard (exact) or softmax attention with inverse temperature beta; an
optional causal mask (config `causal`: each position attends to itself and earlier positions only).

It runs compiled models (engine.compile) and any other weights in that layout (trained ones, or a
saved .npz). `forward(..., trace=True)` also returns every head's attention matrix and the residual
stream after the embedding and after every sublayer.
"""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HARD_TOLERANCE = 1e-6      # hard attention: keys within this of the row maximum share the attention
LN_EPS = 1e-5
CONFIG_KEY = "config"      # the .npz entry holding the JSON config
META_KEY = "rasplay"       # the .npz entry holding compiler metadata (layout), JSON


@dataclass
class Forward:
    out: np.ndarray                                   # (B, n, n_out): class logits or one number
    attention: list[np.ndarray] = field(default_factory=list)   # per layer (B, H, n, n), trace only
    scores: list[np.ndarray] = field(default_factory=list)      # per layer (B, H, n, n) q.k, trace only
    residual: list[tuple[str, np.ndarray]] = field(default_factory=list)  # (stage, (B, n, d)), trace only


class NumpyTransformer:
    """Weights (docs/weights.md names) + config; `forward(ids)` on a (B, n) array of token ids."""

    def __init__(self, config: dict, weights: dict[str, np.ndarray]):
        self.config = dict(config)
        self.weights = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
        self._check()
        self._mlp = [self._active_units(i) for i in range(self.config["n_layers"])]

    def _active_units(self, i: int):
        """The MLP of layer i without hidden units whose output weights are all zero (they add exactly 0)."""
        p = f"layers.{i}.mlp."
        w = self.weights
        used = np.any(w[p + "fc2.weight"] != 0, axis=0)
        return (np.ascontiguousarray(w[p + "fc1.weight"][used].T), w[p + "fc1.bias"][used],
                np.ascontiguousarray(w[p + "fc2.weight"][:, used].T), w[p + "fc2.bias"])

    def _check(self):
        c, w = self.config, self.weights
        d, H, dh, dm = c["d_model"], c["n_heads"], c["d_head"], c["d_mlp"]
        shapes = {"tok_emb.weight": (len(c["vocab"]), d), "pos_emb.weight": (c["max_len"], d)}
        for i in range(c["n_layers"]):
            p = f"layers.{i}."
            shapes.update({p + "attn.q.weight": (H * dh, d), p + "attn.k.weight": (H * dh, d),
                           p + "attn.v.weight": (H * dh, d), p + "attn.o.weight": (d, H * dh),
                           p + "mlp.fc1.weight": (dm, d), p + "mlp.fc1.bias": (dm,),
                           p + "mlp.fc2.weight": (d, dm), p + "mlp.fc2.bias": (d,)})
        n_out = len(c["output"]["classes"]) if c["output"]["kind"] == "categorical" else 1
        shapes.update({"unembed.weight": (n_out, d), "unembed.bias": (n_out,)})
        for name, shape in shapes.items():
            if name not in w:
                raise ValueError(f"missing weight {name}")
            if w[name].shape != shape:
                raise ValueError(f"{name} has shape {w[name].shape}, expected {shape}")

    # ---------------------------------------------------------------- forward

    def forward(self, ids: np.ndarray, mode: str = "hard", beta: float | None = None,
                trace: bool = False) -> Forward:
        if mode not in ("hard", "soft"):
            raise ValueError(f"attention mode must be 'hard' or 'soft', not {mode!r}")
        c, w = self.config, self.weights
        ids = np.asarray(ids, dtype=np.int64)
        B, n = ids.shape
        if n > c["max_len"]:
            raise ValueError(f"sequences of {n} positions; the model has {c['max_len']}")
        H, dh = c["n_heads"], c["d_head"]
        scale = beta if beta is not None else c.get("attn_scale")
        if scale is None:
            scale = 1.0 / np.sqrt(dh)
        ln = bool(c.get("layer_norm"))
        d = c["d_model"]
        causal = bool(c.get("causal"))
        later = np.triu(np.ones((n, n), dtype=bool), k=1)                      # [query, key]: key after query
        x = (w["tok_emb.weight"][ids] + w["pos_emb.weight"][:n][None]).reshape(B * n, d)   # rows = positions
        result = Forward(np.zeros(0))
        if trace:
            result.residual.append(("embedding", x.reshape(B, n, d).copy()))
        for i in range(c["n_layers"]):
            p = f"layers.{i}."
            h = _layer_norm(x, w[p + "ln1.weight"], w[p + "ln1.bias"]) if ln else x
            q = (h @ w[p + "attn.q.weight"].T).reshape(B, n, H, dh).transpose(0, 2, 1, 3)
            k = (h @ w[p + "attn.k.weight"].T).reshape(B, n, H, dh).transpose(0, 2, 3, 1)
            v = (h @ w[p + "attn.v.weight"].T).reshape(B, n, H, dh).transpose(0, 2, 1, 3)
            scores = q @ k                                                     # (B, H, n, n)
            if causal:
                scores = np.where(later, -np.inf, scores)
            if mode == "hard":
                top = scores >= scores.max(axis=-1, keepdims=True) - HARD_TOLERANCE
                att = top / top.sum(axis=-1, keepdims=True)
            else:
                s = scale * scores
                s = np.exp(s - s.max(axis=-1, keepdims=True))
                att = s / s.sum(axis=-1, keepdims=True)
            mixed = (att @ v).transpose(0, 2, 1, 3).reshape(B * n, H * dh)
            x = x + mixed @ w[p + "attn.o.weight"].T
            if trace:
                result.attention.append(att)
                result.scores.append(scores)
                result.residual.append((f"layer {i + 1} attention", x.reshape(B, n, d).copy()))
            h = _layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"]) if ln else x
            fc1, b1, fc2, b2 = self._mlp[i]
            x = x + np.maximum(h @ fc1 + b1, 0.0) @ fc2 + b2
            if trace:
                result.residual.append((f"layer {i + 1} MLP", x.reshape(B, n, d).copy()))
        if ln:
            x = _layer_norm(x, w["ln_f.weight"], w["ln_f.bias"])
        result.out = (x @ w["unembed.weight"].T + w["unembed.bias"]).reshape(B, n, -1)
        return result

    def parameters(self) -> int:
        return int(sum(a.size for a in self.weights.values()))

    def nonzero_parameters(self) -> int:
        return int(sum(np.count_nonzero(a) for a in self.weights.values()))

    # ---------------------------------------------------------------- io

    def save_npz(self, file, meta: dict | None = None):
        save_npz(file, self.config, self.weights, meta)

    def state_dict(self, dtype=None) -> dict:
        return state_dict(self.weights, dtype)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + LN_EPS) * weight + bias


def save_npz(file, config: dict, weights: dict, meta: dict | None = None):
    """Named weights (docs/weights.md) + `config` (JSON) [+ `rasplay` metadata (JSON)] in one .npz."""
    arrays = {k: np.asarray(v) for k, v in weights.items()}
    arrays[CONFIG_KEY] = np.array(json.dumps(config))
    if meta is not None:
        arrays[META_KEY] = np.array(json.dumps(meta))
    if isinstance(file, (str, Path)):
        with open(file, "wb") as f:
            np.savez(f, **arrays)
    else:
        np.savez(file, **arrays)


def load_npz(file) -> tuple[dict, dict, dict | None]:
    """(config, weights, metadata or None) from a .npz written by save_npz."""
    if isinstance(file, (bytes, bytearray)):
        file = io.BytesIO(file)
    with np.load(file, allow_pickle=False) as data:
        config = json.loads(str(data[CONFIG_KEY]))
        meta = json.loads(str(data[META_KEY])) if META_KEY in data.files else None
        weights = {k: data[k] for k in data.files if k not in (CONFIG_KEY, META_KEY)}
    return config, weights, meta


def load(file) -> NumpyTransformer:
    config, weights, _ = load_npz(file)
    return NumpyTransformer(config, weights)


def state_dict(weights: dict, dtype=None) -> dict:
    """The weights as a PyTorch state_dict (same names). Needs torch (the `train` extra)."""
    import torch

    dtype = dtype or torch.float64
    return {k: torch.tensor(np.asarray(v), dtype=dtype) for k, v in weights.items()}
