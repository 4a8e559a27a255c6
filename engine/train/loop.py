"""The training loop: AdamW (on the CPU, or a GPU with cfg.device) within a step or time budget, seeded,
cancellable, reporting progress.

Curve points (held-out evaluations) fall on fixed steps (every `eval_every`, and the last step), so
a seed gives the same curve whatever the machine's speed; only `elapsed` differs. Between them the
progress callback still hears from the loop at least twice a second.
"""
from __future__ import annotations

import math
import time
from typing import Callable

import torch
import torch.nn.functional as F

from .config import TrainConfig
from .data import Split, TaskData
from .errors import TrainError
from .torch_transformer import TrainableTransformer

TICK_SECONDS = 0.5


class Batches:
    """A split as tensors, served in shuffled mini-batches trimmed to their longest input."""

    def __init__(self, split: Split, selector_ids=(), seed: int = 0):
        self.ids = torch.from_numpy(split.ids)
        self.lengths = torch.from_numpy(split.lengths)
        self.targets = torch.from_numpy(split.targets)
        self.loss_mask = torch.from_numpy(split.loss_mask)
        self.selectors = {k: torch.from_numpy(split.selectors[k]) for k in selector_ids}
        self.gen = torch.Generator().manual_seed(seed)
        self.order, self.pos = torch.empty(0, dtype=torch.long), 0

    def __len__(self):
        return len(self.ids)

    def rows(self, idx: torch.Tensor) -> dict:
        T = int(self.lengths[idx].max())
        return {"ids": self.ids[idx, :T], "mask": torch.arange(T)[None, :] < self.lengths[idx, None],
                "targets": self.targets[idx, :T], "loss_mask": self.loss_mask[idx, :T],
                "selectors": {k: v[idx, :T, :T] for k, v in self.selectors.items()}}

    def next(self, size: int) -> dict:
        if self.pos + size > len(self.order):
            self.order, self.pos = torch.randperm(len(self), generator=self.gen), 0
        idx = self.order[self.pos:self.pos + size]
        self.pos += size
        return self.rows(idx)


def resolve_device(name: str) -> torch.device:
    """cpu, cuda (TrainError when there is none) or auto (cuda when present)."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise TrainError("device cuda was asked for, but PyTorch sees no GPU here (use --device auto or cpu)")
    return torch.device(name)


def on(batch: dict, device: torch.device) -> dict:
    if device.type == "cpu":
        return batch
    return {k: ({s: t.to(device) for s, t in v.items()} if isinstance(v, dict) else v.to(device))
            for k, v in batch.items()}


def random_positions(batch: dict, table: int, gen: torch.Generator) -> torch.Tensor:
    """Position ids shifted by a random offset per input, so that every row of the position table up to
    the longest test input is trained (Huang et al.'s random offsets): offset uniform in 0..table - length."""
    lengths = batch["mask"].sum(-1)
    offsets = (torch.rand(len(lengths), generator=gen) * (table - lengths + 1).float()).long()
    positions = offsets[:, None] + torch.arange(batch["ids"].shape[1])[None, :]
    return positions.clamp_max(table - 1)      # (padding past a row's end: masked, its value unused)


@torch.no_grad()
def row_accuracy(model: TrainableTransformer, split: Split, kind: str, tolerance: float,
                 device: torch.device = torch.device("cpu"), chunk: int = 512):
    """Per input: its correct positions, its labelled positions, and whether all are correct (numpy)."""
    model.eval()
    batches = Batches(split)
    right, total, seq = [], [], []
    for start in range(0, len(batches), chunk):
        b = on(batches.rows(torch.arange(start, min(start + chunk, len(batches)))), device)
        ok = correct(model(b["ids"], b["mask"]), b, kind, tolerance) & b["loss_mask"]
        right.append(ok.sum(-1).cpu())
        total.append(b["loss_mask"].sum(-1).cpu())
        seq.append((ok | ~b["loss_mask"]).all(-1).cpu())
    model.train()
    return tuple(torch.cat(x).numpy() for x in (right, total, seq))


def task_loss(out, batch, kind: str):
    m = batch["loss_mask"]
    if kind == "numerical":
        return F.mse_loss(out[m], batch["targets"][m])
    return F.cross_entropy(out[m], batch["targets"][m])


def correct(out, batch, kind: str, tolerance: float) -> torch.Tensor:
    if kind == "numerical":
        return (out - batch["targets"]).abs() <= tolerance
    return out.argmax(-1) == batch["targets"]


def supervision_loss(atts, batch, pairs, bos: bool):
    """Cross-entropy between each paired head's attention and its selector's row-normalised pattern,
    over the query rows that have a target: rows that select something, and with a BOS token also
    rows that select nothing (their target is the BOS position)."""
    total = 0.0
    q = batch["loss_mask"]
    for layer, head, sel_id in pairs:
        target = batch["selectors"][sel_id].float()
        if bos:
            target[:, :, 0] += ((target.sum(-1) == 0) & q).float()
        rows = (target.sum(-1) > 0) & q
        target = target / target.sum(-1, keepdim=True).clamp_min(1.0)
        att = atts[layer][:, head]
        ce = -(target * torch.log(att.clamp_min(1e-9))).sum(-1)
        total = total + ce[rows].mean()
    return total / max(len(pairs), 1)


@torch.no_grad()
def evaluate(model: TrainableTransformer, batches: Batches, kind: str, tolerance: float, chunk: int = 1024,
             device: torch.device = torch.device("cpu")) -> dict:
    """Held-out loss, per-position accuracy and per-sequence accuracy."""
    model.eval()
    loss_sum, right, total, seq_right = 0.0, 0, 0, 0
    for start in range(0, len(batches), chunk):
        b = on(batches.rows(torch.arange(start, min(start + chunk, len(batches)))), device)
        out = model(b["ids"], b["mask"])
        loss_sum += float(task_loss(out, b, kind)) * int(b["loss_mask"].sum())
        ok = correct(out, b, kind, tolerance)
        right += int((ok & b["loss_mask"]).sum())
        total += int(b["loss_mask"].sum())
        seq_right += int((ok | ~b["loss_mask"]).all(-1).sum())
    model.train()
    return {"test_loss": loss_sum / max(total, 1), "test_acc": right / max(total, 1),
            "test_seq_acc": seq_right / len(batches)}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up, then constant, or (with a step budget and `decay`) cosine down to lr / 10."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if cfg.decay and cfg.steps:
        t = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup))
        return cfg.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))
    return cfg.lr


def _stop_reason(cfg: TrainConfig, step: int, start: float, should_stop) -> str | None:
    """Why training stops before this step ("steps", "time", "cancelled"), or None to go on."""
    if cfg.steps is not None and step >= cfg.steps:
        return "steps"
    if cfg.time_budget is not None and time.monotonic() - start >= cfg.time_budget:
        return "time"
    if should_stop is not None and should_stop():
        return "cancelled"
    return None


def _step(model, opt, batch: dict, cfg: TrainConfig, kind: str, pairs, bos: bool, window: dict,
          positions=None) -> None:
    """One optimiser step on `batch` (on the model's device; `positions`: the random offsets' positions or
    None), its loss and accuracy added to `window`."""
    out, atts = model(batch["ids"], batch["mask"], attention=True, positions=positions)
    loss = task_loss(out, batch, kind)
    if pairs:
        loss = loss + cfg.supervise_weight * supervision_loss(atts, batch, pairs, bos)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
    opt.step()
    with torch.no_grad():
        ok = correct(out, batch, kind, cfg.tolerance)[batch["loss_mask"]]
        window["loss"] += float(loss)
        window["acc"] += float(ok.float().mean())
        window["n"] += 1


def train_model(model: TrainableTransformer, data: TaskData, cfg: TrainConfig, pairs=(),
                progress: Callable[[dict], None] | None = None,
                should_stop: Callable[[], bool] | None = None,
                length_eval: Callable[[TrainableTransformer, torch.device], list] | None = None) -> dict:
    """Train `model` on `data`. pairs: (layer index, head, selector id) to supervise. length_eval: the
    accuracy per length bin of the model now (each curve point then carries it as "bins").
    Returns {"curve": [...], "final": {...}, "steps": n, "elapsed": s, "stopped": why}, where `stopped`
    is "steps", "time", "target" (stop_at reached) or "cancelled". The model is back on the CPU after."""
    device = resolve_device(cfg.device)
    model.to(device)
    offsets = torch.Generator().manual_seed(cfg.seed + 2) if model.config.positional == "random_offset" else None
    sel_ids = sorted({p[2] for p in pairs})
    train = Batches(data.train, sel_ids, seed=cfg.seed + 1)
    test = Batches(data.test)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, betas=(0.9, 0.98),
                            foreach=True)   # one kernel per step for all parameters: a third less time per step at d_model 32
    bos = data.bos_id is not None
    curve: list[dict] = []
    last_eval = {"test_loss": None, "test_acc": None, "test_seq_acc": None}
    window = {"loss": 0.0, "acc": 0.0, "n": 0}
    start = time.monotonic()
    last_tick = start
    step, stopped = 0, "steps"

    def payload(kind_of_point: str) -> dict:
        n = max(window["n"], 1)
        elapsed = time.monotonic() - start
        done = [step / cfg.steps if cfg.steps else 0.0,
                elapsed / cfg.time_budget if cfg.time_budget else 0.0]
        return {"step": step, "steps": cfg.steps, "time_budget": cfg.time_budget, "elapsed": round(elapsed, 3),
                "fraction": round(min(1.0, max(done)), 4), "lr": lr_at(max(step - 1, 0), cfg),
                "loss": window["loss"] / n if window["n"] else None,
                "train_acc": window["acc"] / n if window["n"] else None, **last_eval, "point": kind_of_point}

    best = {"point": None, "state": None}   # the best checkpoint (held-out per sequence, then per position)

    def record():
        nonlocal window
        last_eval.update(evaluate(model, test, data.kind, cfg.tolerance, device=device))
        point = payload("eval")
        if length_eval is not None:
            point["bins"] = length_eval(model, device)
        curve.append(point)
        window = {"loss": 0.0, "acc": 0.0, "n": 0}
        key = lambda p: (p["test_seq_acc"], p["test_acc"])  # noqa: E731
        # among equally good checkpoints the latest, the one trained longest (its heads are the sharpest)
        if best["point"] is None or key(point) >= key(best["point"]):
            best["point"] = point
            best["state"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
        if progress:
            progress(point)
        return point

    model.train()
    while True:
        reason = _stop_reason(cfg, step, start, should_stop)
        if reason is not None:
            stopped = reason
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        batch = train.next(min(cfg.batch_size, len(train)))
        positions = random_positions(batch, model.config.max_len, offsets) if offsets is not None else None
        _step(model, opt, on(batch, device), cfg, data.kind, pairs, bos, window,
              None if positions is None else positions.to(device))
        step += 1
        if step % cfg.eval_every == 0:
            point = record()
            last_tick = time.monotonic()
            if cfg.stop_at is not None and point["test_seq_acc"] >= cfg.stop_at:
                stopped = "target"
                break
        elif progress and time.monotonic() - last_tick >= TICK_SECONDS:
            progress(payload("tick"))
            last_tick = time.monotonic()
    if not curve or curve[-1]["step"] != step:
        record()
    # the model handed back is the best checkpoint, not the last step's (a run can fall back from 90% to 45%)
    fields = ("step", "elapsed", "loss", "train_acc", "test_loss", "test_acc", "test_seq_acc")
    last = {k: curve[-1][k] for k in fields}
    if best["point"] is not curve[-1]:
        model.load_state_dict(best["state"])
    model.to("cpu")
    final = {k: best["point"][k] for k in fields}
    return {"curve": curve, "final": final, "last": last, "best_step": final["step"], "steps": step,
            "elapsed": last["elapsed"], "stopped": stopped}
