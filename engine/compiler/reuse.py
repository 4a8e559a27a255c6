"""Pass 9, reuse residual dimensions: a block whose value has no later reader gives its dimensions to a
block written later, so the residual gets narrower with the same layers.

The live intervals come from the assembled weights (liveness.py). Sublayers add to the residual, so a
dead value must be erased before another block is written over it: the MLP at the block's `freed`
sublayer (the MLP that reads it last, or the first MLP after the attention that reads it last) gets
erasure units, relu(x) -> -x per dimension (categorical one-hots and non-negative numbers: one unit per
dimension; a number of either sign: relu(x) and relu(-x)). x - relu(x) is exactly 0, so the next writer
adds to zeros. The erasure units stay on at BOS too (the assembly keeps the BOS residual it tracks
exact), so no stage of the stream holds a stale value.

Dimensions are chosen first-fit in the order the blocks are written: a block may take dimensions of a
block written earlier once that block is freed (strictly after its `freed` sublayer; at that same MLP
only when both are categorical, whose 0/1 values the sum x + (v - x) gives back exactly); a block's
dimensions need not be contiguous (`Block.dims`).
A block is erased only when some later block takes its dimensions. Nothing is reused when that would
not make the model narrower.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .heads import HeadWeights
from .liveness import Interval, bounds, intervals
from .mlps import MLPWeights
from .plan import Plan


@dataclass
class Reuse:
    width: int
    new_dim: np.ndarray                 # old dimension -> new dimension
    starts: dict                        # id(block) -> its new dimensions
    erase: list[Interval]               # blocks erased (each by the MLP at its `freed` sublayer)
    live: dict                          # block name -> (written, erased) model sublayers, blocks sharing dims


def _frees_for(p: Interval, b: Interval, end: int) -> bool:
    """May block b be written over the dimensions of p (placed earlier)?"""
    if p.freed >= end:
        return False
    if b.written > p.freed:
        return True
    return b.written == p.freed and p.block.kind == "categorical" and b.block.kind == "categorical"


def plan_reuse(plan: Plan, config: dict, weights: dict, items: list[Interval] | None = None) -> Reuse | None:
    """Dimensions by first fit over the live intervals, or None when no dimension would be saved. A block's
    dimensions need not be contiguous: it takes the lowest dimensions free for it (a dimension is free when
    its last holder may be written over, `_frees_for`), so the width reached is the peak of live widths
    except where the categorical-only rule at a freeing MLP costs more."""
    end = 2 * config["n_layers"] + 1
    items = list(intervals(plan.blocks, config, weights) if items is None else items)
    fixed = {"one": 0, "bos": 1}
    items.sort(key=lambda it: (fixed.get(it.block.kind, 2), it.written, it.block.start))
    holder: list[Interval] = []            # per new dimension: the block that holds it last
    takers: dict[int, list] = {}
    placed: list[tuple[np.ndarray, Interval]] = []
    for it in items:
        free = [j for j, p in enumerate(holder) if _frees_for(p, it, end)][:it.size]
        dims = free + list(range(len(holder), len(holder) + it.size - len(free)))
        holder.extend([it] * (it.size - len(free)))
        for j in free:
            takers.setdefault(id(holder[j]), []).append(it)
            holder[j] = it
        placed.append((np.asarray(dims, dtype=np.int64), it))
    width = len(holder)
    if width >= config["d_model"]:
        return None
    new_dim = np.zeros(config["d_model"], dtype=np.int64)
    starts = {}
    for dims, it in placed:
        new_dim[it.block.dims] = dims
        starts[id(it.block)] = dims
    erase = [it for _, it in placed if id(it) in takers]
    sharing = {id(it) for it in erase} | {id(t) for ts in takers.values() for t in ts}
    live = {it.block.name: (it.written, it.freed if id(it) in takers else end + 1)
            for _, it in placed if id(it) in sharing}
    return Reuse(width, new_dim, starts, erase, live)


def _cols(W: np.ndarray, new_dim: np.ndarray, width: int) -> np.ndarray:
    out = np.zeros((W.shape[0], width))
    np.add.at(out.T, new_dim, W.T)
    return out


def _rows(W: np.ndarray, new_dim: np.ndarray, width: int) -> np.ndarray:
    return _cols(W.T, new_dim, width).T


def remap(heads: list[HeadWeights], mlps: dict[int, MLPWeights], r: Reuse) -> None:
    """Move every head's and MLP's reads and writes to the new dimensions (in place). Two old dimensions
    that share a new one are never read or written by the same matrix (their blocks' lives do not overlap),
    so the sums are exact."""
    for h in heads:
        h.q, h.k, h.v = (_cols(W, r.new_dim, r.width) for W in (h.q, h.k, h.v))
        h.o = _rows(h.o, r.new_dim, r.width)
    for m in mlps.values():
        m.fc1 = _cols(m.fc1, r.new_dim, r.width)
        m.fc2 = _rows(m.fc2, r.new_dim, r.width)


def _erasure_units(it: Interval, dims: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(fc1 rows, fc2 columns) of the units that erase one block at its new dimensions."""
    b = it.block
    signs = [1.0]
    if b.kind == "numerical":
        vals = None if b.values is None else b.phys_values()
        if vals is None or (vals.min() < 0 < vals.max()):
            signs = [1.0, -1.0]
        elif vals.max() <= 0:
            signs = [-1.0]
    rows = []
    for sign in signs:
        for j in dims:
            rows.append((j, sign))
    fc1 = np.zeros((len(rows), width))
    fc2 = np.zeros((width, len(rows)))
    for u, (j, sign) in enumerate(rows):
        fc1[u, j] = sign            # relu(sign * x)
        fc2[j, u] = -sign           # x - relu(x) + relu(-x) = 0
    return fc1, fc2


def add_erasures(mlps: dict[int, MLPWeights], r: Reuse, offset: int, name_of_block) -> None:
    """Append each erased block's units to the MLP of its `freed` sublayer (created if that layer has none);
    `MLPWeights.erase` counts them (the assembly leaves them on at BOS)."""
    for it in r.erase:
        layer = (it.freed - 2) // 2 + 1 - offset          # model sublayer 2i+2 -> analysis MLP layer
        fc1, fc2 = _erasure_units(it, r.starts[id(it.block)], r.width)
        m = mlps.get(layer)
        if m is None:
            m = mlps[layer] = MLPWeights(layer, np.zeros((0, r.width)), np.zeros(0), np.zeros((r.width, 0)), [])
        m.fc1 = np.vstack([m.fc1, fc1])
        m.b1 = np.concatenate([m.b1, np.zeros(fc1.shape[0])])
        m.fc2 = np.hstack([m.fc2, fc2])
        m.erase += fc1.shape[0]
        m.targets.append({"name": f"erase {name_of_block(it.block)}", "units": int(fc1.shape[0]),
                          "inputs": [name_of_block(it.block)], "method": "erasure (its dimensions are reused)"})


def apply_reuse(plan: Plan, config: dict, weights: dict, heads: list[HeadWeights], mlps: dict[int, MLPWeights],
                offset: int) -> tuple[Reuse | None, dict]:
    """Reuse dimensions in the plan's blocks, heads and MLPs (in place) when that narrows the model; also
    the figures of the model without reuse (its width, the liveness bounds) for `model.residual_reuse`."""
    items = intervals(plan.blocks, config, weights)
    doc = bounds(plan.blocks, config, weights, items)
    doc = {"width_without_reuse": doc.pop("width"), **doc}
    r = plan_reuse(plan, config, weights, items)
    if r is None:
        return None, doc
    remap(heads, mlps, r)
    for b in plan.blocks:
        dims = r.starts[id(b)]
        b.start = int(dims[0])
        b.dim_list = None if (np.diff(dims) == 1).all() else dims
    plan.blocks.sort(key=lambda b: (b.start, b.written, b.order))
    add_erasures(mlps, r, offset, lambda b: b.name)
    doc["erased"] = [it.block.name for it in r.erase]
    return r, doc
