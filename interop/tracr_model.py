"""A compiled Tracr program: rasplay's CompiledModel with the surface of Tracr's AssembledTransformerModel.

    model = compiling.compile_rasp_to_model(program, vocab={1, 2, 3}, max_seq_len=5, compiler_bos="BOS")
    out = model.apply(["BOS", 1, 2, 3])
    out.decoded          # ["BOS", 3, 2, 1]: Tracr's values (tuples, None, numbers), BOS first
    out.residuals        # the residual stream entering each sublayer, (1, T, D) arrays
    out.layer_outputs    # what each sublayer adds, (1, T, D)
    out.attn_logits      # per attention layer, (1, H, T, T) (as Tracr's model: heads before positions)
    model.input_encoder.encode(["BOS", 1, 2])   # token ids; .encoding_map, .bos_token, .pad_token
    model.output_encoder.decode([0, 2])          # ids -> values (a NumericalEncoder for numerical outputs)

`check()` compares the compiled model with Tracr's evaluation rules (interop/tracr_eval.py, the
independent reference), never with the lowered RASP program: the model's outputs are decoded to Tracr
values and compared at every position where Tracr's evaluator gives a value.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine.compiler import CompiledModel
from ..engine.compiler import agreement as checks
from ..engine.lang.errors import RaspError
from . import tracr_eval

PAD = "compiler_pad"


@dataclass
class AssembledTransformerModelOutput:
    """What Tracr's `model.apply(tokens)` returns (arrays for one input, batch dimension 1)."""
    decoded: list
    unembedded: np.ndarray
    layer_outputs: list
    residuals: list
    attn_logits: list
    transformer_output: np.ndarray
    input_embeddings: np.ndarray
    attention: list = field(default_factory=list)   # rasplay's addition: the attention weights, (1, H, T, T)


class CategoricalEncoder:
    """Tokens <-> ids (Tracr's CategoricalEncoder surface)."""

    def __init__(self, encoding_map: dict, bos: str | None = None, pad: str | None = None):
        self.encoding_map = dict(encoding_map)
        self._bos, self._pad = bos, pad
        self._decoding = {i: t for t, i in self.encoding_map.items()}

    def encode(self, inputs: list) -> list:
        out = []
        for t in inputs:
            try:
                out.append(self.encoding_map[t])
            except (KeyError, TypeError):
                raise ValueError(f"token {t!r} is not in the vocabulary {sorted(map(repr, self.encoding_map))}") \
                    from None
        return out

    def decode(self, encodings: list) -> list:
        return [self._decoding[int(i)] for i in encodings]

    @property
    def bos_token(self):
        return self._bos

    @property
    def pad_token(self):
        return self._pad

    @property
    def bos_encoding(self):
        return None if self._bos is None else self.encoding_map[self._bos]

    @property
    def pad_encoding(self):
        return None if self._pad is None else self.encoding_map.get(self._pad)


class NumericalEncoder:
    """Numerical outputs are their own values (Tracr's NumericalEncoder surface)."""

    def encode(self, inputs: list) -> list:
        return list(inputs)

    def decode(self, encodings: list) -> list:
        return list(encodings)

    bos_token = pad_token = bos_encoding = pad_encoding = None


class TracrModel(CompiledModel):
    """Set by rasplay.tracr.compile on the CompiledModel it returns (attributes `lowered`, `tracr_program`)."""

    lowered: Any = None
    tracr_program: Any = None

    # ---------------------------------------------------------------- Tracr's surface
    @property
    def input_encoder(self) -> CategoricalEncoder:
        mapping = {self.bos: 0}
        mapping.update({t: i + 1 for i, t in enumerate(self.vocab)})
        mapping[PAD] = len(mapping)
        return CategoricalEncoder(mapping, self.bos, PAD)

    @property
    def output_encoder(self):
        if self.output_encoding != "categorical":
            return NumericalEncoder()
        values = self.lowered.decode(self.lowered.output, [_py(c) for c in self.classes.tolist()])
        return CategoricalEncoder({v: i for i, v in enumerate(values)})

    def tracr_values(self, rows: list) -> list:
        """The lowered output's values (rows of them) as Tracr's values (codes and the None stand-in decoded)."""
        return [self.lowered.decode(self.lowered.output, row) for row in rows]

    def apply(self, tokens: list) -> AssembledTransformerModelOutput:
        """Run on one input given as Tracr's models take it: the BOS token first, then the tokens, then any
        number of PAD tokens (`compiler_pad`; their positions decode to None)."""
        tokens = list(tokens)
        if not tokens or tokens[0] != self.bos or isinstance(tokens[0], bool) != isinstance(self.bos, bool):
            raise RaspError(f"apply() takes the BOS token {self.bos!r} first (the compiled model reads BOS at position "
                            f"0), then the input's tokens: got {tokens[:3]!r}", None, "input")
        body = tokens[1:]
        pads = 0
        while body and isinstance(body[-1], str) and body[-1] == PAD:
            body.pop()
            pads += 1
        if any(isinstance(t, str) and t == PAD for t in body):
            raise RaspError("PAD tokens may only follow the input's tokens", None, "input")
        if not body:
            raise RaspError("apply() needs at least one token after BOS", None, "input")
        idx = self.encode(body)[None, :]
        fw = self.forward(idx, "hard", None, trace=True)
        residual = [x for _, x in fw.residual]
        decoded = [self.bos] + self.tracr_values(self.decode_output(fw.out[:, 1:]))[0] + [None] * pads
        if pads:
            def pad(a, axes):
                width = [(0, 0)] * a.ndim
                for ax in axes:
                    width[ax] = (0, pads)
                return np.pad(a, width)
            residual = [pad(x, [1]) for x in residual]
            out = pad(fw.out, [1])
            scores = [pad(s, [2, 3]) for s in fw.scores]
            att = [pad(a, [2, 3]) for a in fw.attention]
        else:
            out, scores, att = fw.out, list(fw.scores), list(fw.attention)
        return AssembledTransformerModelOutput(
            decoded=decoded, unembedded=out, residuals=residual[:-1],
            layer_outputs=[b - a for a, b in zip(residual[:-1], residual[1:])], attn_logits=scores,
            transformer_output=residual[-1], input_embeddings=residual[0], attention=att)

    # ---------------------------------------------------------------- the self-check
    def reference(self, idx: np.ndarray) -> tuple[list, list]:
        """Tracr's values (rows of lists) of the program on token indices (B, n), and each row's error; a causal
        model's position i holds the value at i on the prefix of length i + 1."""
        tokens = self.program.vocab_array[np.asarray(idx, dtype=np.int64)].tolist()
        if not self.causal:
            return tracr_eval.evaluate_batch(self.tracr_program, tokens)
        B, n = np.asarray(idx).shape
        values = [[None] * n for _ in range(B)]
        errors: list = [None] * B
        for p in range(1, n + 1):
            vals, errs = tracr_eval.evaluate_batch(self.tracr_program, [t[:p] for t in tokens])
            for b in range(B):
                if errs[b] is not None and errors[b] is None:
                    errors[b] = errs[b]
                if vals[b] is not None:
                    values[b][p - 1] = vals[b][p - 1]
        return values, errors

    def check(self, mode: str = "hard", beta: float | None = None, exhaustive_limit: int = checks.EXHAUSTIVE_LIMIT,
              per_length: int = checks.SAMPLE_PER_LENGTH, seed: int = 0, lengths=None) -> dict:
        """Agreement with Tracr's evaluation rules (the independent reference) on every input up to max_len, or a
        seeded sample (see CompiledModel.check). Positions where Tracr's evaluator gives None (a default of
        None, a shift's first positions) have no value to compare: `unspecified` counts them. Inputs on which
        Tracr's evaluator raises are `evaluator_errors`."""
        ids, exhaustive = checks.input_ids(len(self.vocab), self.max_len, exhaustive_limit, per_length, seed, lengths)
        total = agree = errors = positions = agree_positions = unspecified = 0
        max_error, first, per_length_doc = 0.0, None, []
        for n, all_idx in sorted(ids.items()):
            n_ok = n_agree = 0
            for start in range(0, len(all_idx), checks.CHUNK):
                idx = all_idx[start:start + checks.CHUNK]
                want, errs = self.reference(idx)
                raw = self.forward_outputs(idx, mode, beta)
                got = self.tracr_values(self.decode_output(raw))
                for b, (g_row, w_row, err) in enumerate(zip(got, want, errs)):
                    if err is not None:
                        errors += 1
                        continue
                    n_ok += 1
                    ok_row = True
                    for p, (g, w) in enumerate(zip(g_row, w_row)):
                        if w is None:
                            unspecified += 1
                            continue
                        positions += 1
                        same, gap = _same(g, w, raw[b, p] if self.output_encoding == "numerical" else None)
                        max_error = max(max_error, gap)
                        if same:
                            agree_positions += 1
                        else:
                            ok_row = False
                    if ok_row:
                        n_agree += 1
                    elif first is None:
                        first = {"input": self.tokens_of(idx[b]), "expected": w_row, "got": g_row}
            total += n_ok
            agree += n_agree
            per_length_doc.append({"n": n, "inputs": n_ok, "agree": n_agree})
        return {"inputs": total, "agree": agree, "fraction": agree / total if total else 1.0,
                "positions": positions, "agree_positions": agree_positions, "unspecified": unspecified,
                "max_error": max_error, "evaluator_errors": errors, "exhaustive": exhaustive,
                "lengths": [min(ids), max(ids)] if ids else [], "per_length": per_length_doc,
                "first_mismatch": first, "mode": mode, "beta": beta, "reference": "tracr semantics",
                "population": sum(len(self.vocab) ** n for n in (lengths or range(1, self.max_len + 1))),
                "causal": self.causal}


def _py(v):
    return v.item() if isinstance(v, np.generic) else v


def _same(got, want, raw) -> tuple[bool, float]:
    """Does a decoded output equal Tracr's value (numbers within 1e-6 relative; others exactly)?"""
    if isinstance(want, (int, float)) and not isinstance(want, bool) or isinstance(want, bool):
        x = float(raw[0]) if raw is not None else got
        if not isinstance(x, (int, float)):
            return False, 1.0
        gap = abs(float(x) - float(want))
        return gap <= 1e-6 * max(1.0, abs(float(want))), gap
    return got == want and type(got) is type(want), 0.0 if got == want else 1.0


def as_tracr_model(model: CompiledModel, program, lowered) -> TracrModel:
    """The CompiledModel of a lowered Tracr program, with Tracr's surface and the reference check."""
    model.__class__ = TracrModel
    model.lowered, model.tracr_program = lowered, program
    return model
