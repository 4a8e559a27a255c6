"""The encoder-only transformer of docs/weights.md in PyTorch: parameter names, shapes and forward pass
exactly as documented, so compiled weights load into it for fine-tuning and trained weights run in
the numpy runner. A padding mask (keys) lets inputs of several lengths share a batch without changing
any result. Config `causal` adds a causal (decoder) mask; `positional` "none" keeps pos_emb at zero
(frozen), "random_offset" trains the learned positions at random offsets (the model runs at offset 0).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .errors import TrainError


@dataclass
class ModelConfig:
    vocab: list
    max_len: int
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 1
    d_head: int | None = None       # default: d_model // n_heads
    d_mlp: int | None = None        # default: 4 * d_model
    layer_norm: bool = True
    attn_scale: float | None = None  # default: 1 / sqrt(d_head)
    bos_id: int | None = None
    output: dict = field(default_factory=lambda: {"kind": "numerical"})
    positional: str = "learned"     # learned | random_offset (learned, trained at random offsets) | none
    causal: bool = False            # each position attends to itself and earlier positions only

    def __post_init__(self):
        if self.d_head is None:
            self.d_head = max(1, self.d_model // max(self.n_heads, 1))
        if self.d_mlp is None:
            self.d_mlp = 4 * self.d_model
        for name in ("max_len", "d_model", "n_heads", "d_head", "d_mlp"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise TrainError(f"model config: {name} must be a positive integer (got {getattr(self, name)!r})")
        if not isinstance(self.n_layers, int) or self.n_layers < 0:
            raise TrainError(f"model config: n_layers must be a non-negative integer (got {self.n_layers!r})")
        if not self.vocab:
            raise TrainError("model config: the vocabulary is empty")
        if self.output.get("kind") not in ("categorical", "numerical"):
            raise TrainError("model config: output.kind must be 'categorical' or 'numerical'")
        if self.output["kind"] == "categorical" and not self.output.get("classes"):
            raise TrainError("model config: a categorical output needs its classes")
        if self.positional not in ("learned", "random_offset", "none"):
            raise TrainError("model config: positional must be 'learned', 'random_offset' or 'none'")

    @property
    def n_out(self) -> int:
        return len(self.output["classes"]) if self.output["kind"] == "categorical" else 1

    @property
    def scale(self) -> float:
        return self.attn_scale if self.attn_scale is not None else 1.0 / math.sqrt(self.d_head)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        missing = [k for k in ("vocab", "max_len") if k not in d]
        if missing:
            raise TrainError(f"model config: missing {', '.join(missing)}")
        return cls(**{k: v for k, v in d.items() if k in known})


class Attention(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.n_heads, self.d_head, self.scale = c.n_heads, c.d_head, c.scale
        inner = c.n_heads * c.d_head
        self.q = nn.Linear(c.d_model, inner, bias=False)
        self.k = nn.Linear(c.d_model, inner, bias=False)
        self.v = nn.Linear(c.d_model, inner, bias=False)
        self.o = nn.Linear(inner, c.d_model, bias=False)

    def forward(self, x, key_mask, hard: bool = False, beta: float | None = None, causal: bool = False):
        B, n, _ = x.shape
        split = lambda t: t.view(B, n, self.n_heads, self.d_head).transpose(1, 2)  # (B, H, n, dh)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = q @ k.transpose(-1, -2)
        if not hard:   # hard attention compares the unscaled scores
            scores = scores * (beta if beta is not None else self.scale)
        if key_mask is not None:
            scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        if causal:
            later = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(later, float("-inf"))
        if hard:
            top = scores >= scores.amax(dim=-1, keepdim=True) - 1e-6
            att = top.float() / top.sum(dim=-1, keepdim=True)
        else:
            att = F.softmax(scores, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, n, self.n_heads * self.d_head)
        return self.o(y), att


class MLP(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.fc1 = nn.Linear(c.d_model, c.d_mlp)
        self.fc2 = nn.Linear(c.d_mlp, c.d_model)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, c: ModelConfig):
        super().__init__()
        self.attn, self.mlp = Attention(c), MLP(c)
        self.ln1 = nn.LayerNorm(c.d_model) if c.layer_norm else nn.Identity()
        self.ln2 = nn.LayerNorm(c.d_model) if c.layer_norm else nn.Identity()

    def forward(self, x, key_mask, hard=False, beta=None, causal=False):
        a, att = self.attn(self.ln1(x), key_mask, hard, beta, causal)
        x = x + a
        return x + self.mlp(self.ln2(x)), att


class TrainableTransformer(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = c = config
        self.tok_emb = nn.Embedding(len(c.vocab), c.d_model)
        self.pos_emb = nn.Embedding(c.max_len, c.d_model)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.n_layers))
        self.ln_f = nn.LayerNorm(c.d_model) if c.layer_norm else nn.Identity()
        self.unembed = nn.Linear(c.d_model, c.n_out)
        self.apply(self._init)
        if c.positional == "none":   # kept (all zero, frozen) so that the weights keep docs/weights.md's layout
            nn.init.zeros_(self.pos_emb.weight)
            self.pos_emb.weight.requires_grad_(False)

    @staticmethod
    def _init(m):
        # unit-variance embeddings and 1/sqrt(fan_in) weights: position and token directions are
        # distinct from the start, which lets position-matching heads (reverse, sort) form quickly;
        # GPT-2's 0.02 initialisation learns reverse many times slower
        if isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=1.0)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=1.0 / math.sqrt(m.weight.shape[1]))
            if m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor | None = None, attention: bool = False,
                hard: bool = False, beta: float | None = None, positions: torch.Tensor | None = None):
        """ids (B, n) token ids; mask (B, n) True at real positions (None: all real); positions (B, n) the
        position ids (default 0..n-1; training with random offsets shifts them).
        Returns per-position outputs (B, n, n_out) -- class logits, or (B, n) numbers for a numerical
        output -- and, with attention=True, the list of per-layer attention (B, H, n, n)."""
        n = ids.shape[1]
        if n > self.config.max_len:
            raise TrainError(f"the input has {n} positions; the model has {self.config.max_len}")
        x = self.tok_emb(ids)
        if self.config.positional != "none":
            x = x + (self.pos_emb.weight[:n] if positions is None else self.pos_emb(positions))
        atts = []
        for block in self.layers:
            x, att = block(x, mask, hard, beta, self.config.causal)
            atts.append(att)
        out = self.unembed(self.ln_f(x))
        if self.config.output["kind"] == "numerical":
            out = out[..., 0]
        return (out, atts) if attention else out

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


# ------------------------------------------------------------------ saving and loading (docs/weights.md)

def state_arrays(model: TrainableTransformer) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def model_from_state(config: dict | ModelConfig, state: dict) -> TrainableTransformer:
    """A TrainableTransformer with the given weights (torch tensors or numpy arrays, docs/weights.md names);
    TrainError naming every missing, unexpected or misshapen parameter."""
    cfg = config if isinstance(config, ModelConfig) else ModelConfig.from_dict(config)
    model = TrainableTransformer(cfg)
    expected = model.state_dict()
    problems = [f"missing {k} {tuple(v.shape)}" for k, v in expected.items() if k not in state]
    problems += [f"unexpected {k}" for k in state if k not in expected]
    tensors = {}
    for k, v in state.items():
        if k in expected:
            t = torch.as_tensor(np.asarray(v) if not isinstance(v, torch.Tensor) else v, dtype=torch.float32)
            if tuple(t.shape) != tuple(expected[k].shape):
                problems.append(f"{k} has shape {tuple(t.shape)}, expected {tuple(expected[k].shape)}")
            tensors[k] = t
    if problems:
        raise TrainError("the weights do not fit the model config: " + "; ".join(problems[:6])
                         + (f" (and {len(problems) - 6} more)" if len(problems) > 6 else ""))
    model.load_state_dict(tensors)
    return model


def save_model(model: TrainableTransformer, path, extra: dict | None = None) -> None:
    """`.npz`: the parameters plus `config` (a JSON string); otherwise a torch file holding
    {"config", "state_dict", **extra}."""
    path = Path(path)
    if path.suffix == ".npz":
        np.savez(path, config=np.array(json.dumps(model.config.to_dict())), **state_arrays(model))
    else:
        torch.save({"config": model.config.to_dict(), "state_dict": model.state_dict(), **(extra or {})}, path)


def load_model(path) -> TrainableTransformer:
    """A model saved by save_model or exported by the compiler (.npz or torch file)."""
    path = Path(path)
    try:
        if path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as z:
                if "config" not in z:
                    raise TrainError(f"{path}: no 'config' entry (the model configuration as JSON)")
                config = json.loads(str(z["config"]))
                # weights only: text entries are metadata (the compiler adds its residual layout as "rasplay")
                state = {k: z[k] for k in z.files if k != "config" and z[k].dtype.kind not in "USO"}
        else:
            blob = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(blob, dict) or "config" not in blob or "state_dict" not in blob:
                raise TrainError(f"{path}: not a rasplay model (expected a dict with 'config' and 'state_dict')")
            config, state = blob["config"], blob["state_dict"]
    except TrainError:
        raise
    except (OSError, ValueError, RuntimeError, KeyError, json.JSONDecodeError) as e:
        raise TrainError(f"cannot read the model {path}: {e}") from None
    return model_from_state(config, state)
