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
Tokens: id 0 is BOS (`<bos>`), vocab[i] is id i + 1; prepend BOS yourself (`default_prepend_bos`
is off, there is no tokenizer) and read outputs from position 1 on.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from ..engine.model import load_npz

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
    """HookedTransformerConfig keyword arguments (JSON-able; `dtype` is the string "float64")."""
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
        "dtype": "float64",
        "seed": 0,
    }
    if scale is not None:   # TransformerLens divides by attn_scale; rasplay multiplies by it
        cfg["attn_scale"] = 1.0 / float(scale)
    if config["d_mlp"] > 0:
        cfg["d_mlp"] = config["d_mlp"]
    else:
        cfg["attn_only"] = True
    if config.get("layer_norm"):
        from ..engine.model import LN_EPS
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
    from transformer_lens import HookedTransformer, HookedTransformerConfig

    kwargs = dict(config_doc["hooked_transformer_config"])
    kwargs["dtype"] = getattr(torch, kwargs.get("dtype", "float64"))
    model = HookedTransformer(HookedTransformerConfig(**kwargs))
    tensors = {k: torch.as_tensor(np.asarray(v), dtype=torch.float64) for k, v in state.items()}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    missing = [k for k in missing if not k.endswith((".attn.mask", ".attn.IGNORE"))]
    if missing or unexpected:
        raise ValueError(f"state dict does not fit HookedTransformer: missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]}")
    return model.eval()


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
