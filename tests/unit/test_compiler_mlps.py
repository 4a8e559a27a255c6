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


COARSE = 'o = (indices % 2) + (tokens == "a");'


def test_inputs_the_value_cannot_tell_apart_share_one_unit_and_every_value_is_exact():
    """o reads the tokens only through == "a" and the indices only through their parity: the table over
    classes of values ({a} / the 5 others, even / odd) has 4 units (3 when the common result comes
    from an always-on unit) where the table over every value has 24 (one per combination), and the
    5-token class is tested through its complement (-1 on a's dimension)."""
    program, plan, width, mlps = built(COARSE, "o", vocab="abcdef", max_len=4)
    target = next(t for t in plan.targets if t.node is node(program, "o"))
    mlp = mlps[target.layer]
    info = next(i for i in mlp.targets if i["name"] == "o")
    assert info["combinations"] == 24 and info["units"] <= 4
    assert "classes" in info["method"] and "tokens 6 values in 2 classes" in info["method"]
    assert (mlp.fc1[:, block(plan, "tokens").start:block(plan, "tokens").start + 6] < 0).any()
    for t in "abcdef":
        for i in range(4):
            y = apply(mlp, residual(width, plan, tokens=t, indices=i))
            assert read(target.block, y) == i % 2 + (t == "a"), (t, i)


def test_the_compiled_model_over_classes_is_exact_on_every_input_and_smaller():
    from rasplay import engine
    model = engine.compile(COARSE, "o", vocab="abcdef", max_len=4)
    r = model.check(exhaustive_limit=2000)
    assert r["exhaustive"] and r["agree"] == r["inputs"] == sum(6 ** n for n in range(1, 5))
    # the fine table: 24 units of 2 fc1 weights, a bias and an output weight each (96 non-zeros) where
    # the 4 class units have 1 + 1 fc1 weights (the even class through the odd one's dimensions: 2),
    # a bias where a test reads the class's own dimensions, an output weight
    mlp = model.transformer.weights
    nz = sum(int(np.count_nonzero(a)) for k, a in mlp.items() if ".mlp." in k)
    assert nz < 96 / 2, nz


def test_a_value_that_tells_every_input_apart_keeps_the_table_over_every_value():
    program, plan, width, mlps = built('o = (indices * 3 + (tokens == "a")) % 7;', "o", vocab="ab", max_len=4)
    target = next(t for t in plan.targets if t.node is node(program, "o"))
    info = next(i for i in mlps[target.layer].targets if i["name"] == "o")
    assert info["units"] == info["combinations"] == 8 and "classes" not in info["method"]


def test_the_most_common_result_comes_from_an_always_on_unit_that_the_others_correct():
    """o is False at 7 of the 8 (token, index) classes: one unit always on writes False, the unit of
    (b, 2) writes True and takes False back; the one-hot is exact at every combination."""
    program, plan, width, mlps = built('o = tokens == "b" and indices == 2;', "o", vocab="abcd", max_len=4)
    target = next(t for t in plan.targets if t.node is node(program, "o"))
    mlp = mlps[target.layer]
    always = [u for u in range(mlp.width) if not mlp.fc1[u].any() and mlp.b1[u] == 1.0]
    assert len(always) == 1 and mlp.width == 2
    for t in "abcd":
        for i in range(4):
            y = apply(mlp, residual(width, plan, tokens=t, indices=i))
            assert read(target.block, y) == (t == "b" and i == 2), (t, i)
