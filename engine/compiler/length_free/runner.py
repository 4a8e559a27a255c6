"""The length-free transformer: sublayers whose weights do not depend on the input length, run on any length.

The residual stream is a set of named blocks (their concatenation is the usual residual vector); every
sublayer reads some blocks through its weight matrices and writes a new block. Position 0 holds BOS.

Sublayers (docs/every_length.md ties each to its theorem):
- `Embedding`: token one-hot, "not BOS", the BOS flag and the position encodings the construction allows:
  t and t^2 (t = position - 1, BOS at t = -1), 1/(p+1) and i mod m one-hots (zero at BOS).
- `Table`: a ReLU MLP with one hidden unit per combination of its finite inputs (one-hot in, one-hot out).
- `CountHead`: attention with all scores equal under a mask (past, strict past, future, strict future,
  none) and BOS always visible: the mean of the value vectors, i.e. counts divided by the number of
  visible positions, with the BOS share 1/D last. Equal scores make softmax exactly uniform, at any
  temperature; it is computed with a cumulative sum (the same numbers as the n x n softmax).
- `Readout`: a ReLU MLP gating linear forms of count shares by a one-hot query value.
- `Linear`: a linear sublayer on real-valued blocks.
- `Sign`: layer normalisation with epsilon = 0 of the pair [z, -z], which is [sign z, -sign z]; written as
  the one-hot [z < 0, z > 0] of a Boolean (zero at BOS).
- `LookupHead`: attention with bilinear scores q^T W k, hard (unique maximum) or softmax with an inverse
  temperature (fixed, or scaled with the length), values one-hot, BOS giving the default; a clean-up MLP
  rounds the result to an exact one-hot (any share >= 3/4 to 1, <= 1/2 to 0) and to zero at BOS.
"""
from __future__ import annotations

import math

import numpy as np

QUERY_CHUNK = 512          # query rows of one score block (bounds memory at long lengths)


class State:
    """The residual blocks of one batch: name -> (B, P, width) arrays, P = n + 1 positions (BOS first)."""

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        self.B, self.P = ids.shape
        self.blocks: dict = {}

    def __getitem__(self, key):
        return self.blocks[key]

    def __setitem__(self, key, value):
        self.blocks[key] = value


def relu(x):
    return np.maximum(x, 0.0)


class Embedding:
    def __init__(self, vocab_size: int, periodic: dict):
        self.V = vocab_size
        self.periodic = periodic   # block name -> (function of t >= 0 to a value index, width)

    def forward(self, st: State, mode, beta):
        ids = st.ids
        onehot = np.zeros((st.B, st.P, self.V))
        tok = ids[:, 1:] - 1
        np.put_along_axis(onehot[:, 1:], tok[..., None], 1.0, axis=-1)
        st["tokens"] = onehot
        notbos = np.ones((st.B, st.P, 1))
        notbos[:, 0] = 0.0
        st["not_bos"] = notbos
        st["bos"] = 1.0 - notbos
        st["one"] = np.ones((st.B, st.P, 1))
        t = np.arange(st.P, dtype=np.float64) - 1.0
        st["pos"] = np.broadcast_to(np.stack([t, t * t, 1.0 / (t + 2.0)], axis=-1), (st.B, st.P, 3))
        for name, (fn, width) in self.periodic.items():
            block = np.zeros((st.P, width))
            block[np.arange(1, st.P), fn(np.arange(st.P - 1))] = 1.0
            st[name] = np.broadcast_to(block, (st.B, st.P, width))

    def weights(self, prefix):
        return {}


class Table:
    """out = fc2 relu(fc1 x + b1): x the concatenated one-hot inputs; one hidden unit per listed combination."""

    def __init__(self, name, inputs: list, widths: list, combos: list[tuple], outputs: list[int | None],
                 out_width: int):
        self.name, self.inputs = name, inputs
        d = sum(widths)
        offsets = np.cumsum([0] + widths[:-1])
        H = len(combos)
        self.fc1 = np.zeros((H, d))
        self.b1 = np.full(H, -(len(inputs) - 1.0))
        self.fc2 = np.zeros((out_width, H))
        for h, (combo, out) in enumerate(zip(combos, outputs)):
            for off, c in zip(offsets, combo):
                self.fc1[h, off + c] = 1.0
            if out is not None:
                self.fc2[out, h] = 1.0

    def forward(self, st: State, mode, beta):
        x = np.concatenate([st[k] for k in self.inputs], axis=-1) if len(self.inputs) > 1 else st[self.inputs[0]]
        st[self.name] = relu(x @ self.fc1.T + self.b1) @ self.fc2.T

    def weights(self, prefix):
        return {prefix + "fc1.weight": self.fc1, prefix + "fc1.bias": self.b1, prefix + "fc2.weight": self.fc2}


class CountHead:
    """Uniform attention under a mask; value = [value block, BOS flag]."""

    def __init__(self, name, value: str, width: int, rng: str):
        self.name, self.value, self.rng = name, value, rng
        self.w_v = np.eye(width + 1)      # value projection of [value block, bos]

    def forward(self, st: State, mode, beta):
        v = np.concatenate([st[self.value], st["bos"]], axis=-1)
        B, P, _ = v.shape
        n = P - 1
        cs = np.cumsum(v, axis=1)
        total = cs[:, -1:]
        p = np.arange(P, dtype=np.float64)[None, :, None]
        bos_v = v[:, :1]
        if self.rng == "all":
            out = np.broadcast_to(total / P, v.shape)
        elif self.rng == "past":
            out = cs / (p + 1.0)
        elif self.rng == "strict_past":     # keys 0 .. p-1 (BOS alone for p = 0)
            prev = np.concatenate([bos_v, cs[:, :-1]], axis=1)
            out = prev / np.maximum(p, 1.0)
        elif self.rng == "future":          # BOS and keys p .. n
            before = np.concatenate([np.zeros_like(bos_v), cs[:, :-1]], axis=1)
            out = (bos_v + total - before) / (1.0 + (n - p + 1.0))
            out[:, 0] = (total / P)[:, 0]
        elif self.rng == "strict_future":   # BOS and keys p+1 .. n
            out = (bos_v + total - cs) / (1.0 + (n - p))
            out[:, 0] = (total / P)[:, 0]
        else:
            raise ValueError(self.rng)
        st[self.name] = out

    def weights(self, prefix):
        return {prefix + "attn.v.weight": self.w_v}


class Readout:
    """x = sum_j [q = j] (A_j . F) + c * beta (with q the query's one-hot; no q: x = A_0 . F + c beta), as
    relu(A_j F - M (1 - q_j)) - relu(-A_j F - M (1 - q_j))."""

    def __init__(self, name, shares: str, query: str | None, A: np.ndarray, const: float, bound: float):
        self.name, self.shares, self.query = name, shares, query
        self.A = np.asarray(A, dtype=np.float64)     # (m, K)
        self.const, self.M = float(const), float(bound)

    def forward(self, st: State, mode, beta):
        F = st[self.shares]
        beta_share = F[..., -1:]
        pre = F[..., :-1] @ self.A.T                   # (B, P, m)
        if self.query is None:
            x = pre[..., :1]
        else:
            gate = self.M * (1.0 - st[self.query])
            x = (relu(pre - gate) - relu(-pre - gate)).sum(axis=-1, keepdims=True)
        st[self.name] = x + self.const * beta_share

    def weights(self, prefix):
        return {prefix + "mlp.readout": self.A}


class Linear:
    """name = sum_i coef_i * block_i (real blocks of width 1), + const * beta block."""

    def __init__(self, name, terms: list[tuple[str, float]], beta: str | None = None, const: float = 0.0):
        self.name, self.terms, self.beta, self.const = name, terms, beta, float(const)

    def forward(self, st: State, mode, beta):
        x = sum(c * st[k] for k, c in self.terms)
        if self.beta is not None and self.const:
            x = x + self.const * st[self.beta][..., -1:]
        st[self.name] = x

    def weights(self, prefix):
        return {prefix + "linear.weight": np.array([c for _, c in self.terms] + [self.const])}


class AnyOf:
    """A copy through per-value counts: out[j] = sum of the "present" bits of the values that map to j, and the
    default's slot gets relu(not_bos - sum of bits) (no key selected)."""

    def __init__(self, name, bits: list[str], slots: list[int], default: int, width: int):
        self.name, self.bits, self.slots, self.default, self.width = name, bits, slots, default, width

    def forward(self, st: State, mode, beta):
        out = np.zeros((st.B, st.P, self.width))
        total = np.zeros((st.B, st.P, 1))
        for b, j in zip(self.bits, self.slots):
            out[..., j:j + 1] += st[b][..., 1:2]
            total += st[b][..., 1:2]
        out[..., self.default:self.default + 1] += relu(st["not_bos"] - total)
        st[self.name] = out

    def weights(self, prefix):
        return {}


class Sign:
    """z = scale * x + offset * beta; LN_{eps=0}([z, -z]) = [s, -s], s = sign z; out = one-hot [z < 0, z > 0]
    (as relu(not_bos - b), relu(b - bos) with b = (s + 1) / 2, so zero at BOS)."""

    def __init__(self, name, x: str, beta: str, scale: float, offset: float):
        self.name, self.x, self.beta, self.scale, self.offset = name, x, beta, float(scale), float(offset)

    def forward(self, st: State, mode, beta):
        z = self.scale * st[self.x] + self.offset * st[self.beta][..., -1:]
        pair = np.concatenate([z, -z], axis=-1)
        var = (pair ** 2).mean(axis=-1, keepdims=True)          # the pair's mean is 0
        with np.errstate(invalid="ignore", divide="ignore"):
            normed = np.where(var > 0, pair / np.sqrt(var), 0.0)
        b = (normed[..., :1] + 1.0) / 2.0
        st[self.name] = np.concatenate([relu(st["not_bos"] - b), relu(b - st["bos"])], axis=-1)

    def weights(self, prefix):
        return {prefix + "sign.weight": np.array([self.scale, self.offset])}


class LookupHead:
    """Scores q^T W k with q, k concatenations of blocks; unique-hard or softmax attention; values one-hot
    (the BOS row gives the default); output gated to zero at BOS."""

    def __init__(self, name, query: list[str], key: list[str], W: np.ndarray, value: str, width: int,
                 default: int, mask: str, gap):
        self.name, self.query, self.key, self.W = name, query, key, np.asarray(W, dtype=np.float64)
        self.value, self.width, self.default, self.mask = value, width, default, mask
        self.gap = gap            # n -> the smallest score gap between the chosen key and any other key

    def forward(self, st: State, mode, beta):
        q = np.concatenate([st[k] for k in self.query], axis=-1)
        k = np.concatenate([st[x] for x in self.key], axis=-1)
        v = st[self.value].copy() if self.value is not None else np.zeros((st.B, st.P, self.width))
        v[:, 0] = 0.0
        v[:, 0, self.default] = 1.0
        qW = q @ self.W
        B, P, _ = q.shape
        n = P - 1
        out = np.zeros((B, P, self.width))
        scale = None
        if mode == "soft":
            scale = beta(n, self.gap(n)) if callable(beta) else float(beta)
        for start in range(0, P, QUERY_CHUNK):
            stop = min(P, start + QUERY_CHUNK)
            scores = qW[:, start:stop] @ k.transpose(0, 2, 1)          # (B, rows, P)
            if self.mask == "past":
                later = np.arange(P)[None, :] > np.arange(start, stop)[:, None]
                scores = np.where(later[None], -np.inf, scores)
            if mode == "hard":
                pick = np.argmax(scores, axis=-1)                      # the unique maximum
                out[:, start:stop] = v[np.arange(B)[:, None], pick]
            else:
                s = scale * scores
                s = np.exp(s - s.max(axis=-1, keepdims=True))
                att = s / s.sum(axis=-1, keepdims=True)
                out[:, start:stop] = att @ v
        # clean-up MLP: relu(4x - 2) - relu(4x - 3) with x = out - bos is exactly 1 for x >= 3/4 and exactly 0
        # for x <= 1/2 (so a near one-hot from soft attention becomes exact; BOS rows become 0)
        x = out - st["bos"]
        st[self.name] = relu(4.0 * x - 2.0) - relu(4.0 * x - 3.0)

    def weights(self, prefix):
        return {prefix + "attn.qk.weight": self.W}


def temperature_scaled(c: float = 1.0):
    """The paper's temperature scaling: inverse temperature c * log(n + 1) / gap(n), so that every
    non-chosen key gets at most (n + 1)^-c of the attention."""
    def beta(n, gap):
        return c * 2.0 * math.log(n + 2.0) / gap
    return beta
