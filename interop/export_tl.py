"""TransformerLens out: a rasplay model (compiled, or any .npz in the docs/weights.md layout) as a
`HookedTransformerConfig` and a state dict that `transformer_lens.HookedTransformer` loads.

    from rasplay.interop.export_tl import export_transformer_lens, load_hooked_transformer
    export_transformer_lens(model, "out/")          # out/config.json, out/state_dict.pt (+ .npz)
    tl_model = load_hooked_transformer("out/")       # needs the `tl` extra (transformer-lens)

The weights are read through the model's public export (`export_npz`, docs/weights.md), so this
module only renames and reshapes arrays:

    tok_emb.weight (V, d)            -> embed.W_E (V, d)
    pos_emb.weight (n_ctx, d)        -> pos_embed.W_pos
    layers.i.attn.q/k/v.weight (H·dh, d) -> blocks.i.attn.W_Q/W_K/W_V (H, d, dh), b_Q/b_K/b_V zero
    layers.i.attn.o.weight (d, H·dh) -> blocks.i.attn.W_O (H, dh, d), b_O zero
    layers.i.mlp.fc1 (d_mlp, d), bias -> blocks.i.mlp.W_in (d, d_mlp), b_in
    layers.i.mlp.fc2 (d, d_mlp), bias -> blocks.i.mlp.W_out (d_mlp, d), b_out
    unembed.weight (n_out, d), bias  -> unembed.W_U (d, n_out), b_U
    ln1/ln2/ln_f (trained models)    -> blocks.i.ln1/ln2.w/b, ln_final.w/b

Configuration: no layer norm (`normalization_type=None`) for compiled models; bidirectional
attention (`causal` configs map to TransformerLens' causal mask); `attn_scale = 1/beta` (TransformerLens
divides scores by it; rasplay multiplies by beta, default 100: softmax then reproduces the
average-hard model, see docs/compiler.md); one MLP width for every layer (rasplay's layout already
pads each layer to `d_mlp` with zero units); no MLPs at all -> `attn_only=True`; a model without
heads gets one zero head (uniform attention over a zero value: adds nothing). float64 throughout.
Tokens: id 0 is BOS (`<bos>`), vocab[i] is id i + 1; `TokenEncoder` (or `load_tl(dir).rasplay_encoder`)
prepends BOS, pads mixed lengths (with the attention-score hooks that mask pad keys) and decodes outputs
from position 1 on. `load_tl(dir)` is the documented loader (also `rasplay.interop.load_tl`).
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from ..engine.numpy_transformer import load_npz

CONFIG_FILE = "config.json"
STATE_FILE = "state_dict.pt"
NPZ_FILE = "state_dict.npz"


def _read(model) -> tuple[dict, dict, dict | None]:
    """(config, weights, rasplay metadata) of a CompiledModel, a .npz path/bytes, or a (config, weights) pair."""
    if isinstance(model, tuple) and len(model) == 2:
        return dict(model[0]), dict(model[1]), None
    if hasattr(model, "export_npz"):
        buf = io.BytesIO()
        model.export_npz(buf)
        buf.seek(0)
        return load_npz(buf)
    return load_npz(model)


def tl_config(config: dict, meta: dict | None = None, beta: float | None = None) -> dict:
    """HookedTransformerConfig keyword arguments, JSON-able and accepted as they are
    (`HookedTransformerConfig(**cfg)`). The dtype is not among them (a torch.dtype is not JSON): the
    weights are float64 and `load_tl` builds the model in float64 (config.json's "torch_dtype")."""
    n_heads, d_head = config["n_heads"], config["d_head"]
    scale = config.get("attn_scale")
    if beta is not None:
        scale = float(beta)
    cfg = {
        "model_name": f"rasplay-{(meta or {}).get('output', 'model')}",
        "n_layers": config["n_layers"],
        "d_model": config["d_model"],
        "n_heads": max(n_heads, 1),
        "d_head": max(d_head, 1),
        "n_ctx": config["max_len"],
        "d_vocab": len(config["vocab"]),
        "d_vocab_out": 1 if config["output"]["kind"] == "numerical" else len(config["output"]["classes"]),
        "act_fn": "relu",
        "normalization_type": "LN" if config.get("layer_norm") else None,
        "attention_dir": "causal" if config.get("causal") else "bidirectional",
        "positional_embedding_type": "standard",
        "default_prepend_bos": False,
        "seed": 0,
    }
    if scale is not None:   # TransformerLens divides by attn_scale; rasplay multiplies by it
        cfg["attn_scale"] = 1.0 / float(scale)
    if config["d_mlp"] > 0:
        cfg["d_mlp"] = config["d_mlp"]
    else:
        cfg["attn_only"] = True
    if config.get("layer_norm"):
        from ..engine.numpy_transformer import LN_EPS
        cfg["eps"] = LN_EPS
    return cfg


def tl_state_dict(config: dict, weights: dict) -> dict:
    """The weights under TransformerLens' names and shapes (numpy float64 arrays)."""
    d, H, dh = config["d_model"], config["n_heads"], config["d_head"]
    f = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    sd = {"embed.W_E": f["tok_emb.weight"], "pos_embed.W_pos": f["pos_emb.weight"],
          "unembed.W_U": f["unembed.weight"].T.copy(), "unembed.b_U": f["unembed.bias"]}
    Ht, dht = max(H, 1), max(dh, 1)
    for i in range(config["n_layers"]):
        p, q = f"layers.{i}.", f"blocks.{i}."
        for ours, theirs in (("q", "Q"), ("k", "K"), ("v", "V")):
            w = np.zeros((Ht, d, dht))
            if H and dh:
                w = f[p + f"attn.{ours}.weight"].reshape(H, dh, d).transpose(0, 2, 1).copy()
            sd[q + f"attn.W_{theirs}"] = w
            sd[q + f"attn.b_{theirs}"] = np.zeros((Ht, dht))
        wo = np.zeros((Ht, dht, d))
        if H and dh:
            wo = f[p + "attn.o.weight"].T.reshape(H, dh, d).copy()
        sd[q + "attn.W_O"] = wo
        sd[q + "attn.b_O"] = np.zeros(d)
        if config["d_mlp"] > 0:
            sd[q + "mlp.W_in"] = f[p + "mlp.fc1.weight"].T.copy()
            sd[q + "mlp.b_in"] = f[p + "mlp.fc1.bias"]
            sd[q + "mlp.W_out"] = f[p + "mlp.fc2.weight"].T.copy()
            sd[q + "mlp.b_out"] = f[p + "mlp.fc2.bias"]
        if config.get("layer_norm"):
            for n in ("ln1", "ln2"):
                sd[q + f"{n}.w"], sd[q + f"{n}.b"] = f[p + f"{n}.weight"], f[p + f"{n}.bias"]
    if config.get("layer_norm"):
        sd["ln_final.w"], sd["ln_final.b"] = f["ln_f.weight"], f["ln_f.bias"]
    return sd


def export_transformer_lens(model, out_dir, beta: float | None = None, torch_file: bool = True) -> dict:
    """Write `config.json` (HookedTransformerConfig arguments + rasplay's token mapping),
    `state_dict.npz` (numpy) and, with torch installed, `state_dict.pt`. Returns the config.json document."""
    config, weights, meta = _read(model)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = tl_config(config, meta, beta)
    doc = {
        "hooked_transformer_config": cfg,
        "torch_dtype": "float64",
        "tokens": {"vocab": config["vocab"], "bos_id": config.get("bos_id"),
                   "input": "ids: BOS (bos_id) then the tokens' indices in vocab; no padding token",
                   "output": config["output"], "output_position": "position p+1 is input position p"},
        "rasplay": {"output": (meta or {}).get("output"), "layout": (meta or {}).get("layout")},
    }
    (out / CONFIG_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    sd = tl_state_dict(config, weights)
    np.savez(out / NPZ_FILE, **sd)
    if torch_file:
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.save({k: torch.tensor(v, dtype=torch.float64) for k, v in sd.items()}, out / STATE_FILE)
    return doc


def hooked_transformer(config_doc: dict, state: dict):
    """A transformer_lens.HookedTransformer from a config.json document and a state dict (numpy or torch)."""
    import torch
    from transformer_lens import HookedTransformerConfig

    kwargs = dict(config_doc["hooked_transformer_config"])
    kwargs.pop("dtype", None)    # configs written before the dtype moved out of them
    dtype = getattr(torch, config_doc.get("torch_dtype", "float64"))
    model = _hooked_class()(HookedTransformerConfig(**kwargs, dtype=dtype))
    model.rasplay_output_kind = (config_doc.get("tokens") or {}).get("output", {}).get("kind")
    tensors = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in state.items()}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    missing = [k for k in missing if not k.endswith((".attn.mask", ".attn.IGNORE"))]
    if missing or unexpected:
        raise ValueError(f"state dict does not fit HookedTransformer: missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]}")
    return model.eval()


def _hooked_class():
    """HookedTransformer that refuses return_type="loss" on a numerical output (one number per position:
    there is no next-token distribution to score)."""
    global _HOOKED
    if _HOOKED is None:
        from transformer_lens import HookedTransformer

        class RaspHookedTransformer(HookedTransformer):
            rasplay_output_kind = None

            def forward(self, input, return_type="logits", *args, **kwargs):   # noqa: A002 - TL's name
                if return_type in ("loss", "both") and self.rasplay_output_kind == "numerical":
                    raise ValueError(
                        'return_type="loss" needs logits over tokens, but this compiled model outputs one number '
                        'per position (a numerical output): run it with return_type="logits" and compare '
                        'logits[..., 0] with the expected values')
                return super().forward(input, return_type, *args, **kwargs)

        _HOOKED = RaspHookedTransformer
    return _HOOKED


_HOOKED = None


def load_tl(out_dir):
    """A compiled model exported by `export_transformer_lens` (or `rasplay compile --export transformer-lens`)
    as a `transformer_lens.HookedTransformer` in float64, with `.rasplay_encoder`, a TokenEncoder that adds BOS,
    pads mixed lengths and decodes outputs. Also `rasplay.interop.load_tl`."""
    model = load_hooked_transformer(out_dir)
    model.rasplay_encoder = TokenEncoder(json.loads((Path(out_dir) / CONFIG_FILE).read_text(encoding="utf-8")))
    return model


class TokenEncoder:
    """Tokenizer-like: inputs (strings or token lists) -> TransformerLens ids with BOS first, and outputs back.

        enc = TokenEncoder(json.load(open("out/config.json")))    # or load_tl("out").rasplay_encoder
        ids = enc(["abc", "cab"])                                  # (2, 4) LongTensor, BOS first
        ids, mask = enc(["abc", "a"], pad=True)                    # mixed lengths: padded, mask True on real ids
        logits = model.run_with_hooks(ids, fwd_hooks=enc.pad_hooks(mask, model.cfg.n_layers))
        enc.decode(logits, mask)                                   # [[...values...], ...] without BOS and pads

    Padding recipe: pad after the tokens (with BOS's id; any id works) and mask the pad *keys* in every
    layer's `hook_attn_scores` (scores of pad keys -> -inf), so no real position attends to a pad; the
    outputs at real positions then equal the unpadded run's (the MLPs act per position)."""

    def __init__(self, config_doc: dict):
        tokens = config_doc["tokens"]
        self.vocab, self.bos_id = tokens["vocab"], tokens["bos_id"]
        self.output = tokens["output"]
        self._index = {json.dumps(t): i for i, t in enumerate(self.vocab)}

    def encode(self, inputs: list, pad: bool = False):
        import torch

        rows = []
        for k, item in enumerate(inputs):
            ids = [self.bos_id]
            for t in list(item):
                key = json.dumps(t)
                if key not in self._index or self._index[key] == self.bos_id:
                    raise ValueError(f"input {k + 1}: the token {t!r} is not in the vocabulary "
                                     f"{[v for i, v in enumerate(self.vocab) if i != self.bos_id]}")
                ids.append(self._index[key])
            rows.append(ids)
        width = max((len(r) for r in rows), default=1)
        if not pad and len({len(r) for r in rows}) > 1:
            raise ValueError("inputs of several lengths: pass pad=True and run with pad_hooks(mask) (see docs/interop.md)")
        ids = torch.tensor([r + [self.bos_id] * (width - len(r)) for r in rows], dtype=torch.long)
        if not pad:
            return ids
        mask = torch.tensor([[True] * len(r) + [False] * (width - len(r)) for r in rows], dtype=torch.bool)
        return ids, mask

    __call__ = encode

    @staticmethod
    def pad_hooks(mask, n_layers: int) -> list:
        """fwd_hooks for run_with_hooks / run_with_cache: pad keys get -inf in every layer's attention scores."""
        def hook(scores, hook):   # (B, H, query, key)
            return scores.masked_fill(~mask[:, None, None, :], float("-inf"))
        return [(f"blocks.{i}.attn.hook_attn_scores", hook) for i in range(n_layers)]

    def decode(self, logits, mask=None) -> list:
        """Output values per input (positions after BOS; pads dropped): class names, or numbers."""
        out = logits.detach().cpu().numpy()[:, 1:]
        keep = None if mask is None else mask.cpu().numpy()[:, 1:]
        rows = []
        for b in range(out.shape[0]):
            n = out.shape[1] if keep is None else int(keep[b].sum())
            if self.output["kind"] == "categorical":
                rows.append([self.output["classes"][i] for i in out[b, :n].argmax(-1).tolist()])
            else:
                rows.append(out[b, :n, 0].tolist())
        return rows


def load_hooked_transformer(out_dir):
    """Load what export_transformer_lens wrote (config.json + state_dict.pt, else state_dict.npz)."""
    out = Path(out_dir)
    doc = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    if (out / STATE_FILE).exists():
        import torch
        state = torch.load(out / STATE_FILE, weights_only=True)
    else:
        with np.load(out / NPZ_FILE) as data:
            state = {k: data[k] for k in data.files}
    return hooked_transformer(doc, state)


def to_hooked_transformer(model, beta: float | None = None):
    """A CompiledModel (or .npz) straight to a HookedTransformer, in memory."""
    config, weights, meta = _read(model)
    doc = {"hooked_transformer_config": tl_config(config, meta, beta)}
    return hooked_transformer(doc, tl_state_dict(config, weights))


def token_ids(config_doc: dict, inputs: list) -> np.ndarray:
    """Inputs of one length (strings or token lists) -> TransformerLens ids (B, n+1), BOS first."""
    vocab, bos = config_doc["tokens"]["vocab"], config_doc["tokens"]["bos_id"]
    index = {json.dumps(t): i for i, t in enumerate(vocab)}
    rows = []
    for item in inputs:
        tokens = list(item)
        rows.append(([bos] if bos is not None else []) + [index[json.dumps(t)] for t in tokens])
    if len({len(r) for r in rows}) > 1:
        raise ValueError("inputs of one length per batch (there is no padding token)")
    return np.array(rows, dtype=np.int64)
