"""Read a trained program model (program_model.py) back as a discrete program: every choice its argmax,
each variable with the values it can take, the parts the output does not depend on left out.

`decode` returns a `Decoded`: plain data (JSON-able) that program_emit.py turns into the learned-program
IR and RASP text. Values: the tokens variable takes the model's tokens ("<s>" and "</s>" included),
positions and the MLPs' outputs take integers, a categorical head's output the values of the variable it
reads. The model's hard forward pass and the decoded program compute the same function (the tests check
this on every input up to a length).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .program_model import ProgramModel



@dataclass
class Var:
    name: str
    kind: str                 # "tokens" | "indices" | "head" | "mlp" | "count" | "count_mlp"
    values: list              # value ids (categorical) the variable can take; [] for counts
    labels: list              # the value of each id (same order as values)
    layer: int = 0            # 1-based layer that writes it (0: input)
    spec: dict = field(default_factory=dict)


@dataclass
class Decoded:
    vars: list[Var]                       # in dependency order; only those the output depends on
    classifier: dict                      # {var name: {value label: [score per class]}}
    bias: list                            # score per class
    classes: list
    bos: str
    eos: str | None
    layers: int

    def var(self, name: str) -> Var:
        return next(v for v in self.vars if v.name == name)


def _arg(p: torch.Tensor) -> int:
    return int(p.detach().argmax())


def _all_vars(model: ProgramModel, vocab: list) -> list[Var]:
    """Every variable of the model in residual order, with its reads and value domains."""
    s = model.shape
    out = [Var("tokens", "tokens", list(range(s.n_tokens)), list(vocab)),
           Var("indices", "indices", list(range(s.n_pos)), list(range(s.n_pos)))]
    counts = []
    for i in range(s.layers):
        L = i + 1
        readable = list(out)
        heads = []
        for h, head in enumerate(model.cat_heads[i]):
            q, k, v = (readable[_arg(p)] for p in (head.q, head.k, head.v))
            pred = head.pred.detach().argmax(-1).tolist()
            heads.append(Var(f"attn_{L}_{h}", "head", list(v.values), list(v.labels), L,
                             {"query": q.name, "key": k.name, "value": v.name, "pred": pred}))
        nums = []
        for h, head in enumerate(model.num_heads[i]):
            q, k = (readable[_arg(p)] for p in (head.q, head.k))
            nums.append(Var(f"count_{L}_{h}", "count", [], [], L,
                            {"query": q.name, "key": k.name, "pred": head.pred.detach().argmax(-1).tolist()}))
        readable = readable + heads
        mlps = []
        for m, mlp in enumerate(model.cat_mlps[i]):
            a, b = readable[_arg(mlp.a)], readable[_arg(mlp.b)]
            table = mlp.table.detach().argmax(-1).numpy()
            cells = {(x, y): int(table[x, y]) for x in a.values for y in b.values}
            vals = sorted(set(cells.values()))
            mlps.append(Var(f"mlp_{L}_{m}", "mlp", vals, vals, L, {"a": a.name, "b": b.name, "cells": cells}))
        for h, mlp in enumerate(model.num_mlps[i]):
            rows = mlp.table.detach().argmax(-1).tolist()
            vals = sorted(set(rows))
            mlps.append(Var(f"count_mlp_{L}_{h}", "count_mlp", vals, vals, L,
                            {"count": nums[h].name, "rows": rows}))
        out += heads + mlps
        counts += nums
    return out, counts


def _reads(v: Var) -> list[str]:
    sp = v.spec
    return [sp[k] for k in ("query", "key", "value", "a", "b", "count") if k in sp]


def decode(model: ProgramModel, vocab: list, classes: list, bos: str, eos: str | None = None) -> Decoded:
    """The discrete program of a trained model (vocab: the model's tokens by id; classes: by class id)."""
    cat, counts = _all_vars(model, vocab)
    W, bias = (t.numpy() for t in model.scores())
    bias = bias.copy()
    classifier = {}
    for i, v in enumerate(cat):
        rows = W[i, v.values]                                  # (values, classes)
        if len(rows) == 0:
            continue
        if np.ptp(rows, axis=0).max() == 0:
            bias += rows[0]                                    # a constant: part of the bias
            continue
        classifier[v.name] = {label: rows[j].tolist() for j, label in enumerate(v.labels)}
    by_name = {v.name: v for v in cat + counts}
    needed, todo = set(), list(classifier) + ["tokens"]   # the tokens carry the bias (program_emit.py)
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo += _reads(by_name[name])
    order = [v for v in cat[:2] + _layered(cat[2:], counts) if v.name in needed]
    return Decoded(order, classifier, bias.tolist(), list(classes), bos, eos, model.shape.layers)


def _layered(cat: list[Var], counts: list[Var]) -> list[Var]:
    """Per layer: heads, counts, then MLPs (the order a layer computes them)."""
    out = []
    for L in sorted({v.layer for v in cat + counts}):
        out += [v for v in cat if v.layer == L and v.kind == "head"]
        out += [v for v in counts if v.layer == L]
        out += [v for v in cat if v.layer == L and v.kind in ("mlp", "count_mlp")]
    return out
