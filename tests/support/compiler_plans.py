"""Hand-built plans for the compiler's per-pass tests: blocks placed at given dimensions, residual vectors,
head plans (engine/compiler/plan.py)."""
import numpy as np

from rasplay.engine.compiler.plan import Block, HeadPlan


def block(name, kind, values, start, written=-1):
    values = None if values is None else np.asarray(values)
    b = Block(name, kind, values, {name: values}, written, key=name)
    b.start = start
    return b


def blocks():
    """one (dim 0), bos (1), tokens a/b/c (2..4), x numerical (5), out numerical (6), cat out (7..9)."""
    one = block("one", "one", [1], 0)
    bos = block("bos", "bos", [1], 1)
    tokens = block("tokens", "categorical", ["a", "b", "c"], 2)
    x = block("x", "numerical", [0.0, 0.5, 1.0], 5, written=1)
    out = block("out", "numerical", None, 6, written=3)
    cat = block("cat", "categorical", [10, 20, 30], 7, written=3)
    return one, bos, tokens, x, out, cat


def residual(d, **dims):
    r = np.zeros(d)
    for k, v in dims.items():
        r[int(k[1:])] = v
    return r


D = 10


def head_plan(tables, reads=(), mode="aggregate", out=None):
    return HeadPlan(layer=1, selector=None, mode=mode, tables=list(tables), reads=list(reads), out=out)
