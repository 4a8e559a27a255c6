"""A length-free model: its sublayers, how to run them on any length, and its agreement with the evaluator."""
from __future__ import annotations

import json
import time

import numpy as np

from ...graph_runner import run_graph
from ...lang.errors import RaspError
from ...limits import DEFAULT_LIMITS
from ...program import freeze
from .. import agreement as checks
from ..compiled import token_ids
from . import runner as R

# The evaluator is the reference at every length we check; it materialises selectors (B x n x n).
REFERENCE_LIMITS = DEFAULT_LIMITS.with_(max_cells=1 << 31, max_input_length=1 << 16)
CHECK_CELLS = 1 << 25          # batch x n x n cells per evaluator / model chunk
STUDY_LENGTHS = (4, 16, 64, 256, 512)   # the page's agreement-by-length plot (seconds on 2 cores)
STUDY_FIXED_BETA = 20.0
STUDY_SAMPLES = 8


class LengthFreeModel:
    length_free = True

    def __init__(self, program, built, dialect: dict, causal: bool, seconds: float):
        self.program = program
        self.built = built
        self.ops = built.ops
        self.dialect = dialect
        self.causal = causal
        self.compile_seconds = seconds
        self.vocab = list(program.vocab)
        self.bos = program.bos
        self.output_name = program.output_name
        out = built.info[program.output.id]
        self.output_block, self.classes = out.block, list(out.values)
        self.embedding = R.Embedding(len(self.vocab), built.periodic)
        self._token_id = {freeze(t): i for i, t in enumerate(self.vocab)}
        self._nodes = program.interp.graph.ancestors([program.output])
        self.max_len = None

    # ---------------------------------------------------------------- running

    def encode(self, item, index: int = 0) -> np.ndarray:
        """One input (a string, or a list of tokens, of any length) as token indices 0..V-1."""
        return token_ids(item, self.vocab, self._token_id, index)

    def forward(self, idx: np.ndarray, mode: str = "hard", beta=None) -> R.State:
        """All sublayers on token indices (B, n) (BOS is prepended here). mode "soft": softmax attention with
        inverse temperature `beta` (a number, or a function (n, gap) -> number: temperature scaling)."""
        if mode not in ("hard", "soft"):
            raise RaspError(f"attention mode must be 'hard' or 'soft', not {mode!r}", None, "input")
        if mode == "soft" and beta is None:
            beta = R.temperature_scaled()
        idx = np.asarray(idx, dtype=np.int64)
        ids = np.concatenate([np.zeros((idx.shape[0], 1), dtype=np.int64), idx + 1], axis=1)
        st = R.State(ids)
        self.embedding.forward(st, mode, beta)
        for op in self.ops:
            op.forward(st, mode, beta)
        return st

    def output_indices(self, idx: np.ndarray, mode: str = "hard", beta=None) -> np.ndarray:
        """The index (into `classes`) of the output at every position (B, n)."""
        idx = np.asarray(idx, dtype=np.int64)
        n = idx.shape[1]
        rows = max(1, CHECK_CELLS // max(1, (n + 1) * (n + 1)))
        outs = []
        for i in range(0, len(idx), rows):
            st = self.forward(idx[i:i + rows], mode, beta)
            outs.append(np.argmax(st[self.output_block][:, 1:], axis=-1))
        return np.concatenate(outs, axis=0)

    def expected(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The evaluator's values (B, n) and which rows it evaluates without error."""
        idx = np.asarray(idx, dtype=np.int64)
        n = idx.shape[1]
        rows = max(1, CHECK_CELLS // (n * n))
        data, oks = [], []
        for i in range(0, len(idx), rows):
            tokens = self.program.vocab_array[idx[i:i + rows]]
            out = self.program.output
            vals = run_graph(self._nodes, tokens, {out.id}, time.monotonic() + 3600, REFERENCE_LIMITS)[out.id]
            oks.append(np.array([e is None for e in vals.errors], dtype=bool))
            data.append(np.asarray(vals.data) if vals.data is not None else np.zeros(tokens.shape, np.int64))
        if len({d.dtype.kind for d in data}) > 1:
            data = [d.astype(object) for d in data]
        return np.concatenate(data, axis=0), np.concatenate(oks)

    def matches(self, got: np.ndarray, want: np.ndarray) -> np.ndarray:
        table = np.stack([_equal(c, want) for c in self.classes])          # (classes, B, n)
        return np.take_along_axis(table, got[None], axis=0)[0]

    def agreement(self, idx: np.ndarray, mode: str = "hard", beta=None) -> dict:
        got = self.output_indices(idx, mode, beta)
        want, ok = self.expected(idx)
        match = self.matches(got, want)
        rows = match.all(axis=1) & ok
        first = None
        bad = np.nonzero(ok & ~rows)[0]
        if bad.size:
            b = int(bad[0])
            p = int(np.nonzero(~match[b])[0][0])
            first = {"input_length": int(idx.shape[1]), "position": p, "expected": _plain(want[b, p]),
                     "got": _plain(self.classes[got[b, p]])}
        return {"n": int(idx.shape[1]), "inputs": int(ok.sum()), "agree": int(rows.sum()),
                "evaluator_errors": int((~ok).sum()), "first_mismatch": first}

    def check(self, lengths=(1, 2, 3, 4, 5, 6, 7, 8, 16, 64, 256, 1024, 4096), exhaustive_limit: int | None = None,
              per_length=None, seed: int = 0, mode: str = "hard", beta=None) -> dict:
        """Agreement with the evaluator: every input at lengths whose inputs number at most exhaustive_limit
        (in all), else seeded random inputs (per_length: {n: count}, default 64 shrinking to 4 at 4096)."""
        rng = np.random.default_rng(seed)
        V = len(self.vocab)
        if exhaustive_limit is None:
            exhaustive_limit = V ** 8
        per = []
        for n in lengths:
            if V ** n <= exhaustive_limit:
                codes = np.arange(V ** n, dtype=np.int64)
                idx = (codes[:, None] // (V ** np.arange(n - 1, -1, -1, dtype=np.int64))[None, :]) % V
                exhaustive = True
            else:
                count = (per_length or {}).get(n) or default_samples(n)
                idx = sample_inputs(rng, V, n, count)
                exhaustive = False
            doc = self.agreement(idx, mode, beta)
            doc["exhaustive"] = exhaustive
            per.append(doc)
        return {"per_length": per, "all_agree": all(p["agree"] == p["inputs"] for p in per), "mode": mode}

    def run(self, inputs: list, mode: str = "hard", beta: float | None = None, trace: bool = True) -> dict:
        if mode == "soft" and beta is not None and not (isinstance(beta, (int, float)) and beta > 0):
            raise RaspError(f"beta must be a positive number, not {beta!r}", None, "input")
        encoded = [self.encode(item, i) for i, item in enumerate(inputs)]
        outputs, expected, agree = [None] * len(encoded), [None] * len(encoded), [None] * len(encoded)
        by_len: dict[int, list[int]] = {}
        for i, e in enumerate(encoded):
            by_len.setdefault(len(e), []).append(i)
        for n, rows in sorted(by_len.items()):
            idx = np.stack([encoded[i] for i in rows])
            got = self.output_indices(idx, mode, beta)
            want, ok = self.expected(idx)
            match = self.matches(got, want)
            for j, i in enumerate(rows):
                outputs[i] = [_plain(self.classes[g]) for g in got[j].tolist()]
                expected[i] = [_plain(v) for v in want[j].tolist()] if ok[j] else None
                agree[i] = bool(match[j].all()) if ok[j] else None
        checked = [a for a in agree if a is not None]
        return {"mode": mode, "beta": beta if mode == "soft" else None, "length_free": True,
                "inputs": [[self.vocab[t] for t in e.tolist()] for e in encoded],
                "outputs": outputs, "expected": expected, "agree": agree,
                "agreement": {"inputs": len(checked), "agree": sum(checked)}}

    # ---------------------------------------------------------------- description and export

    def weights(self) -> dict[str, np.ndarray]:
        out = {}
        for k, op in enumerate(self.ops):
            out.update(op.weights(f"ops.{k}.{type(op).__name__.lower()}."))
        return out

    def config(self) -> dict:
        return {"length_free": True, "vocab": self.vocab, "bos": self.bos, "output": self.output_name,
                "classes": [_plain(c) for c in self.classes], "causal": self.causal,
                "ops": [{"op": type(op).__name__, "name": getattr(op, "name", ""), "layer": layer,
                         "mask": getattr(op, "mask", getattr(op, "rng", None))}
                        for op, layer in zip(self.ops, self.built.layer_of)]}

    def summary(self) -> dict:
        layers = max(self.built.layer_of, default=0)
        heads = self.built.heads
        return {
            "output": self.output_name, "length_free": True, "max_len": None, "vocab": self.vocab, "bos": self.bos,
            "classes": [_plain(c) for c in self.classes], "causal": self.causal,
            "layers": layers, "analysis_layers": self.built.analysis_layers,
            "heads_per_layer": [sum(1 for h in heads if h["layer"] == L) for L in range(1, layers + 1)],
            "heads": heads, "dialect": self.dialect, "sublayers": len(self.ops),
            "params": int(sum(a.size for a in self.weights().values())),
            "nonzero_params": int(sum(np.count_nonzero(a) for a in self.weights().values())),
            "notes": list(self.built.notes), "warnings": [],
            "compile_seconds": round(self.compile_seconds, 4),
        }

    def export_npz(self, file, beta=None):
        arrays = dict(self.weights())
        arrays["config"] = np.array(json.dumps(self.config()))
        np.savez(file, **arrays)

    def state_dict(self, dtype=None) -> dict:
        """The weights as a PyTorch state_dict (needs torch)."""
        import torch
        return {k: torch.tensor(v, dtype=dtype or torch.float64) for k, v in self.weights().items()}

    def soft_study(self, seed: int = 0, **ignored) -> dict:
        """The soft-attention story by length (POST /models/{id}/soft): agreement against input length with a
        fixed inverse temperature, with the paper's temperature scaling, and with hard attention. (The
        max_len study's options — betas, per_length, exhaustive_limit — do not apply.)"""
        from .study import length_study
        doc = length_study(self, lengths=STUDY_LENGTHS, fixed_beta=STUDY_FIXED_BETA, samples=STUDY_SAMPLES,
                           seed=seed)
        doc["length_free"] = True
        return doc


def sample_inputs(rng, V: int, n: int, count: int) -> np.ndarray:
    """Seeded inputs: half uniform over the vocabulary, half drawn from a random distribution per input
    (so that counts land far from n / V too: near-ties, runs, mostly one token)."""
    half = count // 2
    uniform = rng.integers(0, V, size=(count - half, n))
    probs = rng.dirichlet(np.full(V, 0.5), size=half)
    cum = np.cumsum(probs, axis=1)
    skewed = (rng.random((half, n))[:, :, None] > cum[:, None, :]).sum(axis=-1)
    return np.concatenate([uniform, np.minimum(skewed, V - 1)], axis=0)


def default_samples(n: int) -> int:
    return max(4, min(64, 65536 // n))


def _equal(value, want: np.ndarray) -> np.ndarray:
    if want.dtype == object:
        return np.vectorize(lambda w: freeze(_plain(w)) == freeze(value) or
                            (not isinstance(w, str) and not isinstance(value, str) and w == value),
                            otypes=[bool])(want)
    from ... import elementwise
    return checks.equal_values(elementwise.as_array(value), want)


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v
