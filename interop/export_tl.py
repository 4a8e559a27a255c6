"""TransformerLens out: a rasplay model (compiled, or any .npz in the docs/weights.md layout) as a
TransformerLens 4 `TransformerBridge` on its native architecture (`TransformerBridge.boot_native`, the
4.x path for models without a Hugging Face checkpoint), with a `TransformerBridgeConfig` and a state dict.

    from rasplay.interop.export_tl import export_transformer_lens, load_tl
    export_transformer_lens(model, "out/")          # out/config.json, out/state_dict.pt (+ .npz)
    bridge = load_tl("out/")                         # needs the `tl` extra (transformer-lens 4.x)

The weights are read through the model's public export (`export_npz`, docs/weights.md), so this
module only renames arrays (the bridge's native modules are torch Linear layers, [out, in] like ours):

    tok_emb.weight (V, d)                 -> embed.weight
    pos_emb.weight (n_ctx, d)             -> pos_embed.weight
    layers.i.attn.q/k/v.weight (H·dh, d)  -> blocks.i.attn.q/k/v.weight, biases zero
    layers.i.attn.o.weight (d, H·dh)      -> blocks.i.attn.o.weight, bias zero
    layers.i.mlp.fc1/fc2 weight, bias     -> blocks.i.mlp.in/out weight, bias
    unembed.weight (n_out, d), bias       -> unembed.weight, unembed.bias
    ln1/ln2/ln_f (trained models)         -> blocks.i.ln1/ln2.weight/bias, ln_final.weight/bias

Configuration: no layer norm (`normalization_type=None`) for compiled models; bidirectional
attention (`causal` configs map to TransformerLens' causal mask); `attn_scale = 1/beta` (TransformerLens
divides scores by it; rasplay multiplies by beta, default 100: softmax then reproduces the
average-hard model, see docs/compiler.md; where 1/beta is 1 with d_head > 1, which TransformerLens
refuses, the scale goes into the query weights instead); one MLP width for every layer; no MLPs at all
-> `attn_only=True`; a model without heads gets one zero head (uniform attention over a zero value: adds
nothing). float64 throughout. The output label is written explicitly: config.json's
`tokens.output_label` (the compiled output s-op's name; also `load_tl(dir).rasplay_output_label`).
Tokens: id 0 is BOS (`<bos>`), vocab[i] is id i + 1; `TokenEncoder` (or `load_tl(dir).rasplay_encoder`)
prepends BOS, pads mixed lengths (with the attention mask that hides pad keys) and decodes outputs
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
    """TransformerBridgeConfig keyword arguments, JSON-able and accepted as they are
    (`TransformerBridgeConfig(**cfg)`). The dtype is not among them (a torch.dtype is not JSON): the
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
        "seed": 0,
    }
    if scale is not None and not _scale_in_queries(scale, d_head):   # TransformerLens divides by attn_scale
        cfg["attn_scale"] = 1.0 / float(scale)
    if config["d_mlp"] > 0:
        cfg["d_mlp"] = config["d_mlp"]
    else:
        cfg["attn_only"] = True
    if config.get("layer_norm"):
        from ..engine.numpy_transformer import LN_EPS
        cfg["eps"] = LN_EPS
    return cfg


def _scale_in_queries(scale: float | None, d_head: int) -> bool:
    """TransformerLens refuses attn_scale 1 with d_head > 1: then the query weights carry the scale."""
    return scale is not None and d_head > 1 and abs(1.0 / float(scale) - 1.0) <= 1e-9


def tl_state_dict(config: dict, weights: dict, beta: float | None = None) -> dict:
    """The weights under the bridge's names (numpy float64 arrays)."""
    d, H, dh = config["d_model"], config["n_heads"], config["d_head"]
    scale = float(beta) if beta is not None else config.get("attn_scale")
    f = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
    sd = {"embed.weight": f["tok_emb.weight"], "pos_embed.weight": f["pos_emb.weight"],
          "unembed.weight": f["unembed.weight"], "unembed.bias": f["unembed.bias"]}
    Ht, dht = max(H, 1), max(dh, 1)
    q_factor = np.sqrt(dh) if _scale_in_queries(scale, dh) else 1.0   # TL then divides by sqrt(d_head)
    for i in range(config["n_layers"]):
        p, q = f"layers.{i}.", f"blocks.{i}."
        for m in "qkv":
            w = f[p + f"attn.{m}.weight"] if H and dh else np.zeros((Ht * dht, d))
            sd[q + f"attn.{m}.weight"] = w * q_factor if m == "q" else w
            sd[q + f"attn.{m}.bias"] = np.zeros(Ht * dht)
        sd[q + "attn.o.weight"] = f[p + "attn.o.weight"] if H and dh else np.zeros((d, Ht * dht))
        sd[q + "attn.o.bias"] = np.zeros(d)
        if config["d_mlp"] > 0:
            sd[q + "mlp.in.weight"], sd[q + "mlp.in.bias"] = f[p + "mlp.fc1.weight"], f[p + "mlp.fc1.bias"]
            sd[q + "mlp.out.weight"], sd[q + "mlp.out.bias"] = f[p + "mlp.fc2.weight"], f[p + "mlp.fc2.bias"]
        if config.get("layer_norm"):
            for n in ("ln1", "ln2"):
                sd[q + f"{n}.weight"], sd[q + f"{n}.bias"] = f[p + f"{n}.weight"], f[p + f"{n}.bias"]
    if config.get("layer_norm"):
        sd["ln_final.weight"], sd["ln_final.bias"] = f["ln_f.weight"], f["ln_f.bias"]
    return sd


def export_transformer_lens(model, out_dir, beta: float | None = None, torch_file: bool = True) -> dict:
    """Write `config.json` (TransformerBridgeConfig arguments + rasplay's token mapping and output label),
    `state_dict.npz` (numpy) and, with torch installed, `state_dict.pt`. Returns the config.json document."""
    config, weights, meta = _read(model)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = tl_config(config, meta, beta)
    doc = {
        "transformer_bridge_config": cfg,
        "transformer_lens": "4.x: TransformerBridge.boot_native(TransformerBridgeConfig(**transformer_bridge_config))",
        "torch_dtype": "float64",
        "tokens": {"vocab": config["vocab"], "bos_id": config.get("bos_id"),
                   "input": "ids: BOS (bos_id) then the tokens' indices in vocab; no padding token",
                   "output": config["output"], "output_label": (meta or {}).get("output"),
                   "output_position": "position p+1 is input position p"},
        "rasplay": {"output": (meta or {}).get("output"), "layout": (meta or {}).get("layout")},
    }
    (out / CONFIG_FILE).write_text(json.dumps(doc, indent=1, ensure_ascii=False), encoding="utf-8")
    sd = tl_state_dict(config, weights, beta)
    np.savez(out / NPZ_FILE, **sd)
    if torch_file:
        try:
            import torch
        except ImportError:
            pass
        else:
            torch.save({k: torch.tensor(v, dtype=torch.float64) for k, v in sd.items()}, out / STATE_FILE)
    return doc


def transformer_bridge(config_doc: dict, state: dict):
    """A transformer_lens TransformerBridge (native architecture) from a config.json document and a state dict
    (numpy or torch), every weight checked in (strict)."""
    import torch
    from transformer_lens import TransformerBridge, TransformerBridgeConfig
    import transformer_lens.model_bridge.sources.native  # noqa: F401  (registers TransformerBridge.boot_native)

    if "transformer_bridge_config" not in config_doc:
        raise ValueError("this export was written for transformer-lens 3.x (HookedTransformer, removed in 4.0): "
                         "export the model again with this rasplay")
    dtype = getattr(torch, config_doc.get("torch_dtype", "float64"))
    model = TransformerBridge.boot_native(TransformerBridgeConfig(**config_doc["transformer_bridge_config"]),
                                          dtype=dtype)
    tensors = {k: torch.as_tensor(np.asarray(v), dtype=dtype) for k, v in state.items()}
    try:
        model.load_state_dict(tensors, strict=True)
    except RuntimeError as e:
        raise ValueError(f"state dict does not fit the TransformerBridge: {e}") from None
    _refuse_loss_on_numbers(model, (config_doc.get("tokens") or {}).get("output", {}).get("kind"))
    return model.eval()


def _refuse_loss_on_numbers(model, kind: str | None) -> None:
    """return_type="loss" on a numerical output (one number per position: there is no next-token
    distribution to score) raises a clear error instead of a meaningless number."""
    model.rasplay_output_kind = kind
    if kind != "numerical":
        return
    forward = model.forward

    def checked(input, return_type="logits", *args, **kwargs):   # noqa: A002 - TransformerLens' name
        if return_type in ("loss", "both"):
            raise ValueError(
                'return_type="loss" needs logits over tokens, but this compiled model outputs one number '
                'per position (a numerical output): run it with return_type="logits" and compare '
                'logits[..., 0] with the expected values')
        return forward(input, return_type, *args, **kwargs)
    model.forward = checked


def load_tl(out_dir):
    """A compiled model exported by `export_transformer_lens` (or `rasplay compile --export transformer-lens`)
    as a transformer_lens 4 `TransformerBridge` in float64, with `.rasplay_encoder`, a TokenEncoder that adds
    BOS, pads mixed lengths and decodes outputs, and `.rasplay_output_label`, the output s-op's name. Also
    `rasplay.interop.load_tl`."""
    model = load_transformer_bridge(out_dir)
    doc = json.loads((Path(out_dir) / CONFIG_FILE).read_text(encoding="utf-8"))
    model.rasplay_encoder = TokenEncoder(doc)
    model.rasplay_output_label = doc["tokens"].get("output_label")
    return model


class TokenEncoder:
    """Tokenizer-like: inputs (strings or token lists) -> TransformerLens ids with BOS first, and outputs back.

        enc = TokenEncoder(json.load(open("out/config.json")))    # or load_tl("out").rasplay_encoder
        ids = enc(["abc", "cab"])                                  # (2, 4) LongTensor, BOS first
        ids, mask = enc(["abc", "a"], pad=True)                    # mixed lengths: padded, mask True on real ids
        logits = model(ids, attention_mask=mask)                   # pad keys masked in every layer
        enc.decode(logits, mask)                                   # [[...values...], ...] without BOS and pads

    Padding recipe: pad after the tokens (with BOS's id; any id works) and pass the mask as the bridge's
    `attention_mask` (TransformerLens 4 masks those keys in every layer), so no real position attends to a
    pad; the outputs at real positions then equal the unpadded run's (the MLPs act per position)."""

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
            raise ValueError("inputs of several lengths: pass pad=True and run with attention_mask=mask "
                             "(see docs/interop.md)")
        ids = torch.tensor([r + [self.bos_id] * (width - len(r)) for r in rows], dtype=torch.long)
        if not pad:
            return ids
        mask = torch.tensor([[True] * len(r) + [False] * (width - len(r)) for r in rows], dtype=torch.bool)
        return ids, mask

    __call__ = encode

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


def load_transformer_bridge(out_dir):
    """Load what export_transformer_lens wrote (config.json + state_dict.pt, else state_dict.npz)."""
    out = Path(out_dir)
    doc = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    if (out / STATE_FILE).exists():
        import torch
        state = torch.load(out / STATE_FILE, weights_only=True)
    else:
        with np.load(out / NPZ_FILE) as data:
            state = {k: data[k] for k in data.files}
    return transformer_bridge(doc, state)


def to_transformer_bridge(model, beta: float | None = None):
    """A CompiledModel (or .npz) straight to a TransformerBridge, in memory."""
    config, weights, meta = _read(model)
    doc = {"transformer_bridge_config": tl_config(config, meta, beta),
           "tokens": {"output": config["output"], "output_label": (meta or {}).get("output")}}
    return transformer_bridge(doc, tl_state_dict(config, weights, beta))


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
