"""Pass 7, build MLPs (engine/compiler/mlps.py), alone: each MLP computes its targets' tables exactly on
every input combination of their domain, read by multiplying the weights with hand-made residual
vectors (no forward pass of the model)."""
from __future__ import annotations

import numpy as np
import pytest

from rasplay.engine.compiler.mlps import build_mlps
from rasplay.engine.compiler.residual import allocate_residual

from support.compiler_stages import node, planned


def built(source, output, **kw):
    program, graph, vs, plan = planned(source, output, **kw)
    width = allocate_residual(plan)
    return program, plan, width, build_mlps(plan, width, plan.name_of, program.limits)


def block(plan, name):
    return next(b for b in plan.blocks if b.name == name)


def apply(mlp, r):
    return mlp.fc2 @ np.maximum(mlp.fc1 @ r + mlp.b1, 0.0)


def read(b, y):
    """The value a block holds in the residual update y: the class of its largest dimension (categorical),
    else its one dimension."""
    if b.kind == "categorical":
        part = y[b.start:b.start + b.size]
        assert np.isclose(part.max(), 1.0) and np.isclose(np.sort(part)[-2] if b.size > 1 else 0.0, 0.0)
        return b.values[int(part.argmax())]
    return y[b.start]


def residual(width, plan, **held):
    """A residual vector at a non-BOS position: `one` on, and each named categorical block one-hot."""
    r = np.zeros(width)
    r[block(plan, "one").start] = 1
    for name, value in held.items():
        b = block(plan, name)
        r[b.start + list(b.values).index(value)] = 1
    return r


@pytest.mark.parametrize("source, f", [
    ('o = tokens == "a" and indices < 2;', lambda t, i: t == "a" and i < 2),
    ('o = indices + 1 if tokens == "b" else 0;', lambda t, i: i + 1 if t == "b" else 0),
    ('o = (indices + (tokens == "a")) % 3;', lambda t, i: (i + (t == "a")) % 3),
])
def test_a_function_of_two_inputs_is_its_table_on_every_combination(source, f):
    """(A function of one categorical block needs no MLP: the reader folds it into its table.)"""
    program, plan, width, mlps = built(source, "o", vocab="ab", max_len=4)
    target = next(t for t in plan.targets if t.node is node(program, "o"))
    for t in "ab":
        for i in range(4):
            y = apply(mlps[target.layer], residual(width, plan, tokens=t, indices=i))
            assert read(target.block, y) == f(t, i), (t, i)


def test_an_mlp_writes_only_its_targets_blocks():
    program, plan, width, mlps = built('o = tokens == "a" and indices < 2;', "o", vocab="ab", max_len=4)
    target = next(t for t in plan.targets if t.node is node(program, "o"))
    mlp = mlps[target.layer]
    written = np.nonzero(np.any(mlp.fc2 != 0, axis=1))[0]
    b = target.block
    assert set(written.tolist()) <= set(range(b.start, b.start + b.size))
