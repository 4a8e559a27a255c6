"""Training in "program" mode: the constrained model of program_model.py on a program's task, its Gumbel
temperature annealed geometrically from TAU_START to TAU_END over the step budget, then discretised and
written out as RASP (program_decode.py).

The data are the standard trainer's (data.py: inputs sampled from the vocabulary, labelled by the
evaluator), read with the learned programs' beginning token "<s>" at position 0 and, with `eos`, the end
token "</s>" after the last input token. Evaluation runs the *discrete* program (every choice its
argmax), so the accuracies reported are the emitted program's.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from .config import TrainConfig
from .data import Split, TaskData, load_task, make_data
from .errors import TrainError
from .program_model import ProgramModel, ProgramShape

BOS = "<s>"
EOS = "</s>"
TAU_START, TAU_END = 3.0, 0.01
TICK_SECONDS = 0.5


def with_eos(split: Split, eos_id: int) -> Split:
    """The split with the end token after each input (one more column; targets there are not scored)."""
    N, T = split.ids.shape
    ids = np.zeros((N, T + 1), dtype=split.ids.dtype)
    ids[:, :T] = split.ids
    ids[np.arange(N), split.lengths] = eos_id
    grow = lambda a: np.concatenate([a, np.zeros((N, 1), dtype=a.dtype)], 1)   # noqa: E731
    return Split(ids, split.lengths + 1, grow(split.targets), grow(split.loss_mask))


def program_data(task, cfg: TrainConfig) -> TaskData:
    """The task's data in the learned programs' layout (BOS "<s>" first, "</s>" last with cfg.eos)."""
    if any(str(t) in (BOS, EOS) for t in cfg.vocab):
        raise TrainError(f"the vocabulary holds {BOS} or {EOS}, which program mode reserves for the beginning "
                         "and end of each input")
    data = make_data(task, cfg.vocab, cfg.min_len, cfg.max_len, n_train=cfg.n_train, n_test=cfg.n_test,
                     seed=cfg.seed, bos=True, bos_token=BOS, kind="categorical")
    if cfg.eos:
        eos_id = len(data.vocab)
        data.vocab = data.vocab + [EOS]
        data.train, data.test = with_eos(data.train, eos_id), with_eos(data.test, eos_id)
        data.max_len += 1
    return data


def shape_for(task, data: TaskData, cfg: TrainConfig) -> ProgramShape:
    layers = cfg.layers if cfg.layers is not None else max(task.layers, 1)
    heads = cfg.heads if cfg.heads is not None else max(max(task.heads_per_layer, default=1), 1)
    return ProgramShape(n_tokens=len(data.vocab), n_pos=data.max_len, n_classes=len(data.classes),
                        layers=layers, cat_heads=heads,
                        num_heads=1 if cfg.num_heads is None else cfg.num_heads,
                        mlps=1 if cfg.mlps is None else cfg.mlps)


def tau_at(step: int, steps: int) -> float:
    t = min(1.0, step / max(1, steps - 1))
    return TAU_START * (TAU_END / TAU_START) ** t


def _tensors(split: Split):
    return (torch.from_numpy(split.ids), torch.from_numpy(split.lengths), torch.from_numpy(split.targets),
            torch.from_numpy(split.loss_mask))


@torch.no_grad()
def discrete_accuracy(model: ProgramModel, split: Split, chunk: int = 2048) -> dict:
    """The discrete program's per-position and per-input accuracy on a split."""
    ids, lengths, targets, loss_mask = _tensors(split)
    right = total = seqs = 0
    for s in range(0, len(ids), chunk):
        T = int(lengths[s:s + chunk].max())
        mask = torch.arange(T)[None, :] < lengths[s:s + chunk, None]
        pred = model(ids[s:s + chunk, :T], mask, hard=True).argmax(-1)
        m = loss_mask[s:s + chunk, :T]
        ok = (pred == targets[s:s + chunk, :T]) & m
        right += int(ok.sum())
        total += int(m.sum())
        seqs += int((ok | ~m).all(-1).sum())
    return {"test_acc": right / max(total, 1), "test_seq_acc": seqs / max(len(ids), 1)}


def _loss(model: ProgramModel, batch, tau: float) -> torch.Tensor:
    ids, lengths, targets, loss_mask = batch
    T = int(lengths.max())
    mask = torch.arange(T)[None, :] < lengths[:, None]
    out = model(ids[:, :T], mask, tau=tau)
    m = loss_mask[:, :T]
    return F.cross_entropy(out[m], targets[:, :T][m])


def fit(model: ProgramModel, data: TaskData, cfg: TrainConfig, progress: Callable[[dict], None] | None = None,
        should_stop: Callable[[], bool] | None = None) -> dict:
    """Adam with the temperature annealed over the step budget (a time budget anneals over the steps it
    expects from the first steps' pace). Returns the curve, the steps run and why it stopped."""
    train = _tensors(data.train)
    gen = torch.Generator().manual_seed(cfg.seed)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    start = last_tick = time.monotonic()
    steps, curve, stopped = cfg.steps, [], "steps"
    step = 0
    while True:
        if cfg.time_budget is not None:
            elapsed = time.monotonic() - start
            if elapsed >= cfg.time_budget:
                stopped = "time"
                break
            pace = elapsed / step if step else None
            steps = cfg.steps or (max(step + 1, int(cfg.time_budget / pace)) if pace else 10 ** 6)
        if step >= steps:
            break
        if should_stop is not None and should_stop():
            stopped = "cancelled"
            break
        tau = tau_at(step, steps)
        rows = torch.randint(0, len(train[0]), (cfg.batch_size,), generator=gen)
        loss = _loss(model, tuple(t[rows] for t in train), tau)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        point = None
        if step % cfg.eval_every == 0 or step == steps:
            point = {"step": step, "tau": round(tau, 4), "loss": round(float(loss.detach()), 5),
                     **discrete_accuracy(model, data.test)}
            curve.append(point)
            if cfg.stop_at is not None and point["test_seq_acc"] >= cfg.stop_at:
                stopped = "stop_at"
        now = time.monotonic()
        if progress is not None and (point is not None or now - last_tick >= TICK_SECONDS):
            last_tick = now
            progress({"point": "curve" if point else "tick", "step": step, "steps": steps, "elapsed": now - start,
                      "loss": float(loss.detach()), "tau": tau, **(point or {})})
        if stopped == "stop_at":
            break
    if step and not math.isfinite(float(loss.detach())):
        raise TrainError("training diverged (the loss is not finite); try a smaller lr")
    return {"steps": step, "stopped": stopped, "curve": curve, "seconds": round(time.monotonic() - start, 3)}


@torch.no_grad()
def prune(model: ProgramModel, split: Split, rows: int = 2000) -> list[int]:
    """Drop classifier features (zero their weights) one by one, last first, while the discrete program's
    accuracy on (up to `rows` of) the training inputs does not fall: the emitted program then reads only
    what its prediction needs. The model itself changes, so model and program stay the same function.
    Returns the indices of the variables dropped."""
    sample = split.take(np.arange(min(rows, len(split))))
    base = discrete_accuracy(model, sample)["test_acc"]
    dropped = []
    for v in reversed(range(model.shape.n_cat)):
        keep = model.classifier.data[v].clone()
        if not keep.abs().max():
            continue
        model.classifier.data[v] = 0.0
        if discrete_accuracy(model, sample)["test_acc"] >= base:
            dropped.append(v)
        else:
            model.classifier.data[v] = keep
    return dropped


def build(source: str, cfg: TrainConfig, load_dirs=None):
    """The task, its data and a fresh model (seeded)."""
    task = load_task(source, cfg.output, load_dirs)
    data = program_data(task, cfg)
    torch.manual_seed(cfg.seed)
    return task, data, ProgramModel(shape_for(task, data, cfg))
