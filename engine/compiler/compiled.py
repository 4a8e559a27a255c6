"""A compiled model: the numpy transformer plus what the compiler knows about it (the residual
layout, what each head and MLP computes), so that it can be run, decoded, checked and exported."""
from __future__ import annotations

import hashlib
import time

import numpy as np

from ..graph_runner import run_graph
from ..lang.errors import RaspError
from ..limits import DEFAULT_LIMITS
from ..numpy_transformer import NumpyTransformer, save_npz, state_dict
from ..program import freeze
from . import agreement as checks
from .plan import Block

DEFAULT_BETA = 100.0    # softmax inverse temperature exported as attn_scale: scores differ by >= 1/2,
                        # so at 100 every non-maximal key gets under e^-50 of the attention
ROW_BUDGET = 4_000_000  # floats per forward chunk (batch x positions x widest layer)


class CompiledModel:
    def __init__(self, program, graph, plan, transformer: NumpyTransformer, heads: list[dict], mlps: list[dict],
                 layout: list[dict], notes: list[str], seconds: float, output_values=None, live=None):
        self.program, self.graph, self.plan = program, graph, plan
        # blocks that share dimensions (reuse.py): name -> (first, last + 1) stage that holds their value
        self.live: dict = dict(live or {})
        # with reuse (compile's reuse_residual): the width without it and the liveness bounds (liveness.py)
        self.residual_reuse: dict | None = None
        self.transformer = transformer
        self.heads, self.mlps, self.layout, self.notes = heads, mlps, layout, notes
        self.compile_seconds = seconds
        self.output_name = program.output_name
        self.vocab = list(program.vocab)
        self.max_len = program.max_len
        self.bos = program.bos
        self.blocks: list[Block] = [b for b in plan.blocks]
        self._token_id = {freeze(t): i for i, t in enumerate(program.vocab)}
        self._nodes = program.interp.graph.ancestors([program.output])
        self._expected_cache: dict = {}
        out = plan.output
        self.output_encoding = out.encoding
        self.classes = np.asarray(out.classes) if out.classes is not None else None
        self.output_values = output_values if out.encoding == "numerical" else None
        self.causal = bool(transformer.config.get("causal"))
        self.warnings: list[dict] = []     # {severity, message, line, col, ...}: see value_sets.rounding_warnings

    # ---------------------------------------------------------------- properties

    @property
    def config(self) -> dict:
        return self.transformer.config

    @property
    def weights(self) -> dict:
        return self.transformer.weights

    @property
    def layers(self) -> int:
        return self.config["n_layers"]

    # ---------------------------------------------------------------- running

    def tokens_of(self, idx_row) -> list:
        return [self.vocab[i] for i in np.asarray(idx_row).tolist()]

    def encode(self, item, index: int = 0) -> np.ndarray:
        """One input (a string, or a list of tokens) as token indices 0..V-1."""
        return token_ids(item, self.vocab, self._token_id, index, max_len=self.max_len)

    def forward(self, idx: np.ndarray, mode: str = "hard", beta: float | None = None, trace: bool = False):
        """The transformer on token indices (B, n) (BOS is prepended here)."""
        if mode == "soft" and beta is None:
            beta = self.config["attn_scale"]
        idx = np.asarray(idx, dtype=np.int64)
        ids = np.concatenate([np.zeros((idx.shape[0], 1), dtype=np.int64), idx + 1], axis=1)
        return self.transformer.forward(ids, mode, beta, trace)

    def forward_outputs(self, idx: np.ndarray, mode: str = "hard", beta: float | None = None) -> np.ndarray:
        """Output layer values (B, n, n_out) without BOS, in chunks that bound memory."""
        idx = np.asarray(idx, dtype=np.int64)
        c = self.config
        widest = max(c["d_model"], c["d_mlp"], c["n_heads"] * (idx.shape[1] + 1), c["n_heads"] * c["d_head"])
        chunk = max(1, ROW_BUDGET // ((idx.shape[1] + 1) * widest))
        outs = [self.forward(idx[i:i + chunk], mode, beta).out[:, 1:] for i in range(0, len(idx), chunk)]
        return np.concatenate(outs, axis=0) if outs else np.zeros((0, idx.shape[1], 1))

    def decode_output(self, out: np.ndarray) -> list:
        """Output layer values (B, n, n_out) -> the output s-op's values (lists)."""
        if self.output_encoding == "categorical":
            vals = self.classes[np.argmax(out, axis=-1)]
            return [[_plain(v) for v in row] for row in vals.tolist()]
        raw = out[..., 0]
        return [[_plain(v) for v in row] for row in self._snap(raw, self.output_values).tolist()]

    def compare(self, out: np.ndarray, want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(match (B, n), error (B, n)) of output values against the evaluator's values."""
        if self.output_encoding == "categorical":
            got = self.classes[np.argmax(out, axis=-1)]
            match = checks.equal_values(got, want)
            target = np.zeros_like(out)
            for c, cls in enumerate(self.classes.tolist()):
                target[..., c] = checks.equal_values(np.asarray([cls]), want)
            err = np.max(np.abs(out - target), axis=-1)
            return match, err
        raw = out[..., 0]
        try:
            w = np.asarray(want, dtype=np.float64)
        except (TypeError, ValueError):
            return np.zeros(raw.shape, bool), np.ones(raw.shape)
        return checks.close_values(raw, w), np.abs(raw - w)

    def expected(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The evaluator's output values (B, n) on token indices, and which rows it evaluates without error."""
        idx = np.asarray(idx, dtype=np.int64)
        key = (idx.shape, hashlib.sha1(idx.tobytes()).hexdigest())
        if key in self._expected_cache:
            return self._expected_cache[key]
        if self.causal:
            result = self._expected_on_prefixes(idx)
        else:
            result = self._evaluate(idx)
        if len(self._expected_cache) < 64:
            self._expected_cache[key] = result
        return result

    def _evaluate(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tokens = self.program.vocab_array[idx]
        out = self.program.output
        vals = run_graph(self._nodes, tokens, {out.id}, time.monotonic() + 600, DEFAULT_LIMITS)[out.id]
        ok = np.array([e is None for e in vals.errors], dtype=bool)
        data = vals.data if vals.data is not None else np.zeros(idx.shape, dtype=np.int64)
        return np.asarray(data), ok

    def _expected_on_prefixes(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Causal models: position i's expected value is the evaluator's value at i on the prefix of
        length i + 1 (the rows whose every prefix evaluates)."""
        B, n = idx.shape
        cols, ok = [], np.ones(B, dtype=bool)
        for p in range(1, n + 1):
            data, ok_p = self._evaluate(idx[:, :p])
            cols.append(data[:, p - 1])
            ok &= ok_p
        want = np.empty((B, n), dtype=np.result_type(*[c.dtype for c in cols])) if cols else np.zeros((B, 0))
        for p, c in enumerate(cols):
            want[:, p] = c
        return want, ok

    def expected_errors(self, idx: np.ndarray) -> list:
        tokens = self.program.vocab_array[np.asarray(idx, dtype=np.int64)]
        out = self.program.output
        vals = run_graph(self._nodes, tokens, {out.id}, time.monotonic() + 600, DEFAULT_LIMITS)[out.id]
        return [None if e is None else e.message for e in vals.errors]

    def check(self, mode: str = "hard", beta: float | None = None, exhaustive_limit: int = checks.EXHAUSTIVE_LIMIT,
              per_length: int = checks.SAMPLE_PER_LENGTH, seed: int = 0, lengths=None) -> dict:
        """Agreement with the evaluator on every input up to max_len (or a seeded sample when there are more
        than exhaustive_limit: then `exhaustive` is false and `population` says how many there are). Causal
        models are checked position by position against the evaluator on each prefix."""
        ids, exhaustive = checks.input_ids(len(self.vocab), self.max_len, exhaustive_limit, per_length, seed, lengths)
        doc = checks.agreement(self, ids, mode, beta, exhaustive)
        doc["population"] = sum(len(self.vocab) ** n for n in (lengths or range(1, self.max_len + 1)))
        doc["causal"] = self.causal
        return doc

    # ---------------------------------------------------------------- decoding

    def decode_residual(self, x: np.ndarray, stage: int | None = None) -> dict:
        """Every block of a residual (B, n, d), decoded at every position: {block name: (B, n) lists}.
        stage: the residual after that sublayer (0 the embedding, 2i+1 layer i+1's attention, 2i+2 its MLP);
        a block whose dimensions hold another block's value there decodes to None."""
        out = {}
        for b in self.blocks:
            span = self.live.get(b.name)
            if stage is not None and span is not None and not span[0] <= stage < span[1]:
                out[b.name] = np.full(x.shape[:-1], None, dtype=object).tolist()
            elif b.kind in ("one", "bos"):
                out[b.name] = np.round(x[..., b.start], 6).tolist()
            elif b.kind == "categorical":
                part = x[..., b.dims]
                arg = np.argmax(part, axis=-1)
                top = np.take_along_axis(part, arg[..., None], axis=-1)[..., 0]
                labels = [_plain(v) for v in b.values]
                out[b.name] = [[labels[a] if t >= 0.5 else None for a, t in zip(ra, rt)]
                               for ra, rt in zip(arg.tolist(), top.tolist())]
            else:
                raw = x[..., b.start]
                if b.values is None:
                    out[b.name] = np.round(raw, 9).tolist()
                else:
                    out[b.name] = [[_plain(v) for v in row] for row in self._snap(raw, b).tolist()]
        return out

    def _snap(self, raw: np.ndarray, target) -> np.ndarray:
        """Numerical values: the nearest possible value when closer than half the gap around it, else the
        raw number (rounded to 9 digits)."""
        rounded = np.round(raw, 9).astype(object)
        if target is None:
            return rounded
        if isinstance(target, Block):
            phys, values = target.phys_values(), np.asarray(target.values)
        else:
            values = np.asarray(target)
            phys = values.astype(np.float64)
        if phys.size == 0:
            return rounded
        order = np.argsort(phys)
        phys, values = phys[order], values[order]
        if phys.size == 1:
            pick = np.zeros(raw.shape, dtype=np.int64)
            tol = np.full(raw.shape, 0.5 * max(1.0, abs(float(phys[0]))))
        else:
            pos = np.clip(np.searchsorted(phys, raw), 1, phys.size - 1)
            left = pos - 1
            pick = np.where(np.abs(phys[left] - raw) <= np.abs(phys[pos] - raw), left, pos)
            gaps = np.diff(phys)
            tol = np.minimum(np.concatenate([[np.inf], gaps])[pick], np.concatenate([gaps, [np.inf]])[pick]) / 2
        near = np.abs(phys[pick] - raw) < tol
        return np.where(near, values[pick].astype(object), rounded)

    # ---------------------------------------------------------------- the REST-facing entry points

    def run(self, inputs: list, mode: str = "hard", beta: float | None = None, trace: bool = True) -> dict:
        """Run on inputs (strings or token lists): outputs, the evaluator's values and agreement, and
        with trace every head's attention (queries x keys, BOS first) and every block decoded at
        every stage of the residual stream."""
        if mode not in ("hard", "soft"):
            raise RaspError(f"attention mode must be 'hard' or 'soft', not {mode!r}", None, "input")
        if mode == "soft" and beta is not None and not (isinstance(beta, (int, float)) and beta > 0):
            raise RaspError(f"beta must be a positive number, not {beta!r}", None, "input")
        if mode == "soft" and beta is None:
            beta = self.config["attn_scale"]
        encoded = [self.encode(item, i) for i, item in enumerate(inputs)]
        results: list = [None] * len(encoded)
        by_len: dict[int, list[int]] = {}
        for i, e in enumerate(encoded):
            by_len.setdefault(len(e), []).append(i)
        attention = [[None] * len(encoded) for _ in range(sum(len(h) for h in self.heads_by_layer()))]
        stages: list[str] = []
        residual: list[dict] = []
        for n, rows in sorted(by_len.items()):
            idx = np.stack([encoded[i] for i in rows])
            fw = self.forward(idx, mode, beta, trace)
            want, ok = self.expected(idx)
            errs = self.expected_errors(idx) if not ok.all() else [None] * len(rows)
            out = fw.out[:, 1:]
            match, err = self.compare(out, want)
            decoded = self.decode_output(out)
            for j, i in enumerate(rows):
                results[i] = {"output": decoded[j], "raw": np.round(out[j], 9).tolist(),
                              "expected": _plain_row(want[j]) if ok[j] else None,
                              "error": errs[j], "agree": bool(match[j].all()) if ok[j] else None,
                              "max_error": float(np.max(err[j])) if ok[j] else None}
            if trace:
                slot = 0
                for layer, heads in enumerate(self.heads_by_layer()):
                    for h in heads:
                        att = fw.attention[layer][:, h["head"]]
                        for j, i in enumerate(rows):
                            attention[slot][i] = np.round(att[j], 6).tolist()
                        slot += 1
                if not stages:
                    stages = [s for s, _ in fw.residual]
                    residual = [{"stage": s, "blocks": {b.name: [None] * len(encoded) for b in self.blocks}}
                                for s in stages]
                for k, (_, x) in enumerate(fw.residual):
                    dec = self.decode_residual(x, k)
                    for name, vals in dec.items():
                        for j, i in enumerate(rows):
                            residual[k]["blocks"][name][i] = vals[j]
        checked = [r for r in results if r["agree"] is not None]
        doc = {
            "mode": mode, "beta": beta if mode == "soft" else None,
            "inputs": [self.tokens_of(e) for e in encoded],
            "positions": [[self.bos] + self.tokens_of(e) for e in encoded],
            "outputs": [r["output"] for r in results],
            "expected": [r["expected"] for r in results],
            "errors": [r["error"] for r in results],
            "agree": [r["agree"] for r in results],
            "agreement": {"inputs": len(checked), "agree": sum(bool(r["agree"]) for r in checked),
                          "max_error": max([r["max_error"] for r in checked], default=0.0)},
        }
        if self.output_encoding == "numerical":
            doc["raw"] = [[v[0] for v in r["raw"]] for r in results]
        if trace:
            heads = [h for layer in self.heads_by_layer() for h in layer]
            doc["attention"] = [dict(h, matrices=attention[k]) for k, h in enumerate(heads)]
            doc["residual"] = residual
        return doc

    def heads_by_layer(self) -> list[list[dict]]:
        out: list[list[dict]] = [[] for _ in range(self.layers)]
        for h in self.heads:
            out[h["layer"] - 1].append(h)
        return out

    def summary(self) -> dict:
        c = self.config
        return {
            "output": self.output_name,
            "output_encoding": self.output_encoding,
            "classes": c["output"].get("classes"),
            "vocab": self.vocab, "bos": self.bos, "max_len": self.max_len,
            "layers": c["n_layers"], "analysis_layers": self.graph.layers,
            "heads_per_layer": [len(h) for h in self.heads_by_layer()],
            "analysis_heads_per_layer": self.graph.heads_per_layer,
            "mlp_widths": [m["width"] for m in self.mlps],
            "residual_width": c["d_model"], "d_head": c["d_head"], "d_mlp": c["d_mlp"],
            "residual_reuse": self.residual_reuse,
            "params": self.transformer.parameters(),
            "nonzero_params": self.transformer.nonzero_parameters(),
            "causal": self.causal,
            "attn_scale": c["attn_scale"],
            "layout": self.layout, "heads": self.heads, "mlps": self.mlps, "notes": self.notes,
            "warnings": self.warnings,
            "compile_seconds": round(self.compile_seconds, 4),
        }

    def export_npz(self, file, beta: float | None = None):
        """Named weights (docs/weights.md) + `config` + `rasplay` metadata (layout, heads) in one .npz."""
        config = dict(self.config)
        if beta is not None:
            config["attn_scale"] = float(beta)
        save_npz(file, config, self.weights, self._meta())

    def state_dict(self, dtype=None) -> dict:
        """The weights as a PyTorch state_dict with the docs/weights.md names (needs torch). Tensors only,
        so that `load_state_dict` takes it; `export_torch` saves it together with the config."""
        return state_dict(self.weights, dtype)

    def export_torch(self, file, beta: float | None = None, dtype=None):
        """A torch file {"config", "state_dict", "rasplay"} (the trainer's format: engine.train.load_model
        reads it; torch.load(..., weights_only=True) too). Needs torch."""
        import torch

        config = dict(self.config)
        if beta is not None:
            config["attn_scale"] = float(beta)
        torch.save({"config": config, "state_dict": self.state_dict(dtype), "rasplay": self._meta()}, file)

    def _meta(self) -> dict:
        return {"output": self.output_name, "layout": self.layout, "heads": self.heads, "notes": self.notes,
                "warnings": self.warnings, "source": self.program.source}

    def soft_study(self, **kwargs) -> dict:
        from .soft import soft_study
        return soft_study(self, **kwargs)


def _plain(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    return v


def _plain_row(row) -> list:
    return [_plain(v) for v in np.asarray(row).tolist()]


def token_ids(item, vocab: list, token_id: dict, index: int = 0, max_len: int | None = None) -> np.ndarray:
    """One input (a string, or a list of tokens) as token indices 0..V-1 of `vocab` (`token_id`: frozen token
    -> index), refused with a message naming the input where it is not one (`max_len`: at most that many
    tokens; None for a model of every length)."""
    label = f"input {index + 1}"
    if isinstance(item, str):
        if any(not isinstance(t, str) for t in vocab):
            raise RaspError(f"{label} is a string, but the vocabulary's tokens are not all strings: give a "
                            f"list of tokens", None, "input")
        tokens = list(item)
    elif isinstance(item, (list, tuple)):
        tokens = list(item)
    else:
        raise RaspError(f"{label} must be a string or a list of tokens", None, "input")
    if not tokens:
        raise RaspError(f"{label} is empty; an input needs at least one token", None, "input")
    if max_len is not None and len(tokens) > max_len:
        raise RaspError(f"{label} has {len(tokens)} tokens; the model is compiled for at most {max_len}",
                        None, "input")
    ids = []
    for t in tokens:
        try:
            ids.append(token_id[freeze(t)])
        except (KeyError, TypeError):
            shown = ", ".join(str(v) for v in vocab[:20])
            raise RaspError(f"{label}: the token {t!r} is not in the vocabulary ({shown})", None,
                            "input") from None
    return np.array(ids, dtype=np.int64)
