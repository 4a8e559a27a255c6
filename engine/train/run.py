"""Train a transformer on a program's task, then lay its attention over the program's selectors.

`train` reads as its stages: task -> data -> model -> loop -> matches -> example overlay -> result.
Everything it returns is JSON-able; a job runner passes `progress` (called at least twice a second
while training) and `should_stop` (checked every step).
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
import torch

from .config import TrainConfig
from .data import Task, TaskData, load_task, make_data, program_on
from .errors import TrainError
from .lengths import aggregate, length_bins, length_free_reach, make_longer, program_lengths
from .loop import resolve_device, row_accuracy, train_model
from .match import match_heads, overlay
from .torch_transformer import ModelConfig, TrainableTransformer, load_model, save_model


# ------------------------------------------------------------------ model and supervision

def build_model(task: Task, data: TaskData, cfg: TrainConfig) -> TrainableTransformer:
    """A fresh model for the data, its layers and heads defaulting to the program's analysis."""
    layers = task.layers if cfg.layers is None else cfg.layers
    heads = cfg.heads if cfg.heads is not None else max(task.heads_per_layer, default=1) or 1
    return TrainableTransformer(ModelConfig(vocab=data.vocab, max_len=data.max_len, d_model=cfg.d_model, n_layers=layers,
                                   n_heads=heads, d_mlp=cfg.d_mlp, layer_norm=cfg.layer_norm, bos_id=data.bos_id,
                                   output=data.output_config(), positional=cfg.positional, causal=cfg.causal))


def supervision_pairs(task: Task, model: TrainableTransformer, cfg: TrainConfig) -> list[tuple[int, int, int]]:
    """(layer index, head, selector id) to supervise: cfg.supervise_pairs, or each layer's heads paired
    in order with the analysis' selectors of that layer."""
    L, H = model.config.n_layers, model.config.n_heads
    if not cfg.supervise_pairs:
        return [(i, j, h["selector"]) for i, layer in enumerate(task.heads[:L]) for j, h in enumerate(layer[:H])]
    by_name = {h["name"]: h["selector"] for layer in task.heads for h in layer}
    pairs = []
    for p in cfg.supervise_pairs:
        if not isinstance(p, dict) or not {"layer", "head", "selector"} <= set(p):
            raise TrainError("each supervised pair needs 'layer' (from 1), 'head' (from 0) and 'selector'")
        sel = by_name.get(p["selector"], p["selector"])
        if sel not in task.selector_ids:
            raise TrainError(f"the output's heads use no selector {p['selector']!r} "
                             f"(they use: {', '.join(by_name) or 'none'})")
        if not (isinstance(p["layer"], int) and 1 <= p["layer"] <= L and isinstance(p["head"], int)
                and 0 <= p["head"] < H):
            raise TrainError(f"no head {p['head']} in layer {p['layer']} (the model has {L} layers of {H} heads)")
        pairs.append((p["layer"] - 1, p["head"], sel))
    return pairs


# ------------------------------------------------------------------ attention

@torch.no_grad()
def extract_attention(model: TrainableTransformer, ids: np.ndarray, lengths: np.ndarray | None = None,
                      chunk: int = 256) -> np.ndarray:
    """Attention of every layer and head: ids (B, T) token ids (padded rows give their lengths) ->
    (B, L, H, T, T) float32; padded keys get 0."""
    model.eval()
    ids_t = torch.as_tensor(ids, dtype=torch.long)
    T = ids_t.shape[1]
    lengths_t = torch.full((len(ids_t),), T) if lengths is None else torch.as_tensor(lengths)
    out = []
    for s in range(0, len(ids_t), chunk):
        mask = torch.arange(T)[None, :] < lengths_t[s:s + chunk, None]
        _, atts = model(ids_t[s:s + chunk], mask, attention=True)
        if atts:
            out.append(torch.stack(atts, dim=1).numpy())
        else:
            out.append(np.zeros((len(mask), 0, model.config.n_heads, T, T), dtype=np.float32))
    return np.concatenate(out)


def encode(model: TrainableTransformer, tokens) -> np.ndarray:
    """Model token ids of an input (a string: one token per character, or a list), BOS prepended."""
    c = model.config
    tokens = list(tokens)
    index = {(type(t).__name__, t): i for i, t in enumerate(c.vocab) if i != c.bos_id}
    ids = []
    for t in tokens:
        i = index.get((type(t).__name__, t))
        if i is None:
            shown = ", ".join(str(v) for j, v in enumerate(c.vocab) if j != c.bos_id)
            raise TrainError(f"the token {t!r} is not in the model's vocabulary ({shown})")
        ids.append(i)
    ids = ([c.bos_id] if c.bos_id is not None else []) + ids
    if not tokens or len(ids) > c.max_len:
        raise TrainError(f"the input must have 1 to {c.max_len - (c.bos_id is not None)} tokens (it has {len(tokens)})")
    return np.array(ids, dtype=np.int64)


def attention_maps(model: TrainableTransformer, tokens) -> np.ndarray:
    """(L, H, T, T) attention of the model on one input (BOS prepended when the model has one)."""
    return extract_attention(model, encode(model, tokens)[None])[0]


@torch.no_grad()
def predict(model: TrainableTransformer, tokens) -> list:
    """The model's output on one input, per program position (class values, or numbers)."""
    model.eval()
    ids = torch.as_tensor(encode(model, tokens))[None]
    out = model(ids)[0]
    offset = 0 if model.config.bos_id is None else 1
    if model.config.output["kind"] == "numerical":
        return [round(float(v), 4) for v in out[offset:]]
    classes = model.config.output["classes"]
    return [classes[int(i)] for i in out[offset:].argmax(-1)]


def example_overlay(task: Task, model: TrainableTransformer, tokens) -> dict:
    """One input's attention over the program's selectors, with the model's and the program's outputs."""
    offset = 0 if model.config.bos_id is None else 1
    tokens = list(tokens)
    ids = encode(model, tokens)
    target, sels = program_on(task, tokens, offset)
    att = extract_attention(model, ids[None])[0]
    doc = overlay(task.heads, att, sels, [model.config.vocab[i] for i in ids], offset)
    return {"input": tokens, "prediction": predict(model, tokens), "target": target, **doc}


def _default_example(data: TaskData) -> list:
    longest = int(np.argmax(data.test.lengths))
    ids = data.test.ids[longest, data.offset:data.test.lengths[longest]]
    return [data.vocab[i] for i in ids]


# ------------------------------------------------------------------ the pipeline

def train(source: str, config: TrainConfig | dict, progress: Callable[[dict], None] | None = None,
          should_stop: Callable[[], bool] | None = None, load_dirs=None, init=None, save_path=None) -> dict:
    """Train a transformer on the task of `source`'s output s-op; return the JSON-able result.

    config: TrainConfig or its dict. init: a model file (or TrainableTransformer) to start from, e.g. compiled
    weights (its vocabulary, positions and output classes then fix the data's). save_path: where to
    save the trained model (.pt, or .npz in the docs/weights.md layout). Raises TrainError for
    anything the user can fix."""
    cfg = config if isinstance(config, TrainConfig) else TrainConfig.from_dict(dict(config))
    cfg.validated()
    if cfg.mode == "program":
        if init is not None or save_path is not None:
            raise TrainError("program mode trains its own model from scratch and returns a RASP program "
                             "(learned_program); it neither starts from nor saves a model file")
        from .program_run import train_program
        return train_program(source, cfg, progress, should_stop, load_dirs)
    threads = torch.get_num_threads()
    torch.set_num_threads(cfg.threads)
    try:
        t0 = time.monotonic()
        phase = (lambda name, message: progress({"point": "phase", "phase": name, "message": message})) \
            if progress else (lambda name, message: None)
        phase("program", "reading the program and its analysis")
        task = load_task(source, cfg.output, load_dirs)
        start = init if isinstance(init, TrainableTransformer) or init is None else load_model(init)
        phase("data", f"sampling {cfg.n_train:,} training and {cfg.n_test:,} held-out inputs "
                      f"(lengths {cfg.min_len}-{cfg.max_len}) and labelling them with the program")
        data = _make_data(task, cfg, start)
        torch.manual_seed(cfg.seed)
        model = start or build_model(task, data, cfg)
        phase("model", f"training a {model.config.n_layers}-layer, {model.config.n_heads}-head transformer "
                       f"({model.n_params():,} parameters)")
        pairs = supervision_pairs(task, model, cfg) if cfg.supervise else []
        shown = list(cfg.example) if cfg.example is not None else _default_example(data)
        encode(model, shown)   # a bad example input fails now, not after training
        longer = None
        if cfg.test_min_len is not None:
            phase("longer", f"sampling {cfg.n_test:,} held-out inputs per bin of lengths {cfg.test_min_len}-"
                            f"{cfg.test_max_len} and labelling them with the program")
            longer = make_longer(task, data, cfg.vocab, cfg)
        t1 = time.monotonic()
        run = train_model(model, data, cfg, pairs, progress, should_stop,
                          length_eval=_bins_now(data, longer, cfg) if longer is not None else None)
        t2 = time.monotonic()
        lengths = _length_report(source, task, model, data, longer, cfg, load_dirs) if longer is not None else None
        test = data.test.take(np.arange(min(cfg.match_examples, len(data.test))))
        matches = match_heads(task.heads, extract_attention(model, test.ids, test.lengths), test.selectors,
                              test.loss_mask, data.offset)
        example = example_overlay(task, model, shown)
        if save_path is not None:
            save_model(model, save_path, {"train_config": cfg.to_dict(), "output_name": task.output})
    finally:
        torch.set_num_threads(threads)
    return {
        "output": task.output,
        "config": cfg.to_dict(),
        "model": model.config.to_dict(),
        "params": model.n_params(),
        "program": {"layers": task.layers, "heads_per_layer": task.heads_per_layer, "heads": task.heads},
        "data": {"train": len(data.train), "test": len(data.test), "dropped": data.dropped,
                 "drop_reason": data.drop_reason, **data.output_config()},
        "supervised": [{"layer": i + 1, "head": h, "selector": s} for i, h, s in pairs],
        **run,
        "matches": matches,
        "example": example,
        "lengths": lengths,
        "timings": {"data": round(t1 - t0, 3), "train": round(t2 - t1, 3), "total": round(time.monotonic() - t0, 3)},
    }


def _make_data(task: Task, cfg: TrainConfig, start: TrainableTransformer | None) -> TaskData:
    common = dict(n_train=cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, kind=cfg.kind, blocks=cfg.blocks)
    if start is None:
        data = make_data(task, cfg.vocab, cfg.min_len, cfg.max_len, bos=cfg.bos, **common)
        data.max_len = cfg.longest + data.offset   # the position table reaches the longest test input
        return data
    c = start.config
    offset = 0 if c.bos_id is None else 1
    if cfg.longest + offset > c.max_len:
        raise TrainError(f"length {cfg.longest} is longer than the model takes ({c.max_len - offset})")
    if (cfg.positional, cfg.causal) != ("learned", False) and (cfg.positional, cfg.causal) != (c.positional, c.causal):
        raise TrainError("a model to start from keeps its own position encoding and mask (it has positional "
                         f"{c.positional}, causal {str(c.causal).lower()}); leave positional and causal unset")
    out = c.output
    data = make_data(task, cfg.vocab, cfg.min_len, cfg.max_len, model_vocab=c.vocab, bos_id=c.bos_id,
                     classes=out.get("classes"), **{**common, "kind": out["kind"]})
    data.max_len = c.max_len
    return data


# ------------------------------------------------------------------ training for length

def _accuracy_by_length(model, data: TaskData, longer, cfg: TrainConfig, device) -> dict:
    parts = [row_accuracy(model, split, data.kind, cfg.tolerance, device) for split in (data.test, longer.split)]
    lengths = np.concatenate([program_lengths(data.test, data.offset), program_lengths(longer.split, data.offset)])
    right, total, seq = (np.concatenate([p[i] for p in parts]) for i in range(3))
    return aggregate(lengths, right, total, seq, length_bins(cfg))


def _bins_now(data: TaskData, longer, cfg: TrainConfig):
    return lambda model, device: _accuracy_by_length(model, data, longer, cfg, device)["bins"]


def _correct(pred: list, target: list | None, kind: str, tolerance: float) -> list | None:
    if target is None:
        return None
    if kind == "numerical":
        return [abs(float(p) - float(t)) <= tolerance for p, t in zip(pred, target)]
    return [p == t and type(p) is type(t) for p, t in zip(pred, target)]


def _length_report(source: str, task: Task, model: TrainableTransformer, data: TaskData, longer, cfg: TrainConfig,
                   load_dirs) -> dict:
    """Accuracy per length and per bin of the trained model, the compiled models' reach on the same
    inputs, and the longest held-out input's outputs and attention ("where it breaks")."""
    doc = _accuracy_by_length(model, data, longer, cfg, torch.device("cpu"))
    split = longer.split
    row = int(np.argmax(split.lengths))
    tokens = [data.vocab[i] for i in split.ids[row, data.offset:split.lengths[row]]]
    long_example = example_overlay(task, model, tokens)
    long_example["correct"] = _correct(long_example["prediction"], long_example["target"], data.kind, cfg.tolerance)
    return {
        "train": [cfg.min_len, cfg.max_len], "test": [cfg.test_min_len, cfg.test_max_len],
        "positional": model.config.positional, "causal": model.config.causal,
        "device": resolve_device(cfg.device).type, **doc,
        "unseen_values": longer.unseen, "dropped": longer.dropped, "drop_reason": longer.drop_reason,
        "compiled": {"max_len": {"defined_up_to": cfg.max_len},
                     "length_free": length_free_reach(source, task.output, cfg.vocab, data, [data.test, split],
                                                      length_bins(cfg), load_dirs)},
        "long_example": long_example,
    }
