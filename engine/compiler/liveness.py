"""Residual liveness: when each block of a compiled model is written and when it is last read, read off
the assembled weights themselves (a column of a reading matrix that is non-zero on a block's dimensions
is a read), so the figures do not depend on the planner's own bookkeeping.

Sublayers are numbered as the model runs them (the stages of `model.run(..., trace=True)`): 0 the
embedding, 2i+1 the attention of model layer i (0-based), 2i+2 its MLP, 2L+1 the unembedding. A block
written at sublayer w and last read at sublayer r is live at the boundaries w .. r-1 (the residual after
sublayer b is boundary b). `one` and `bos` are read by every layer (biases, the BOS gates) and the
output block by the unembedding, so they live to the end.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .plan import Block


@dataclass
class Interval:
    block: Block
    written: int          # model sublayer that writes it (0: the embedding)
    last_read: int        # model sublayer that reads it last (2L+1: the unembedding)
    freed: int            # the first sublayer that can erase it: last_read for an MLP, the next MLP after
                          # an attention (attention cannot erase); 2L+1 when it lives to the end

    @property
    def size(self) -> int:
        return self.block.size


def _nonzero_cols(W: np.ndarray) -> np.ndarray:
    return np.any(W != 0, axis=0)


def intervals(blocks: list[Block], config: dict, weights: dict) -> list[Interval]:
    """Each block's live interval in the assembled model."""
    L = config["n_layers"]
    end = 2 * L + 1
    d = config["d_model"]
    reads: list[np.ndarray] = []         # per sublayer 1..2L+1: the dims it reads
    writes: list[np.ndarray] = [_nonzero_cols(weights["tok_emb.weight"]) | _nonzero_cols(weights["pos_emb.weight"])]
    for i in range(L):
        p = f"layers.{i}."
        reads.append(_nonzero_cols(weights[p + "attn.q.weight"]) | _nonzero_cols(weights[p + "attn.k.weight"])
                     | _nonzero_cols(weights[p + "attn.v.weight"]))
        writes.append(np.any(weights[p + "attn.o.weight"] != 0, axis=1))
        reads.append(_nonzero_cols(weights[p + "mlp.fc1.weight"]))
        writes.append(np.any(weights[p + "mlp.fc2.weight"] != 0, axis=1) | (weights[p + "mlp.fc2.bias"] != 0))
    reads.append(_nonzero_cols(weights["unembed.weight"]))
    read_at = np.stack(reads)            # (2L+1, d): row s-1 is sublayer s
    write_at = np.stack(writes)          # (2L+1, d): row s is sublayer s
    assert read_at.shape[1] == d
    out = []
    for b in blocks:
        dims = b.dims
        wrote = np.nonzero(write_at[:, dims].any(axis=1))[0]
        written = int(wrote[0]) if wrote.size else 0
        if b.kind in ("one", "bos"):
            out.append(Interval(b, written, end, end))
            continue
        read = np.nonzero(read_at[:, dims].any(axis=1))[0] + 1
        last = int(read[-1]) if read.size else written + 1
        freed = last if last == end or last % 2 == 0 else last + 1
        out.append(Interval(b, written, last, freed))
    return out


def peak(items: list[Interval], n_sublayers: int, end_attr: str) -> int:
    """The largest total size of the blocks live at one boundary (live: written <= b < end)."""
    best = 0
    for b in range(n_sublayers):
        best = max(best, sum(it.size for it in items if it.written <= b < getattr(it, end_attr)))
    return best


def bounds(blocks: list[Block], config: dict, weights: dict, items: list[Interval] | None = None) -> dict:
    """Today's width, the smallest width any reuse of dimensions could reach (every block's dimensions free
    right after its last reader), and the smallest with erasure by MLPs only (a block last read by an
    attention sublayer is freed by the next MLP). items: the intervals, when already computed."""
    items = intervals(blocks, config, weights) if items is None else items
    n = 2 * config["n_layers"] + 1
    return {"width": config["d_model"], "bound": peak(items, n, "last_read"),
            "bound_mlp_erasure": peak(items, n, "freed")}
