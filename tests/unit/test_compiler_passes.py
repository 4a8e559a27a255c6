"""Per-pass compiler unit tests on hand-built plans: each pass alone, without compiling a program.

Each test builds the blocks (and heads) a pass receives by hand, runs the pass, and checks the
matrices it produces by multiplying them with hand-made residual vectors.
"""
import numpy as np

from rasplay.engine.compiler.fused import lookup, near_duplicates, unique_values
from rasplay.engine.compiler.heads import build_head
from rasplay.engine.compiler.plan import Block, GroupTable, HeadPlan, Reader, ValueRead
from rasplay.engine.compiler.residual import allocate_residual
from rasplay.engine.compiler.value_sets import integral, mean_values


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


# ---------------------------------------------------------------- heads: values

def test_affine_value_read_adds_the_offset():
    """aggregate(..., a * x + b) of a numerical block x: the value row gives a*x + b at every position
    (the offset rides on the `one` dimension)."""
    one, bos, tokens, x, out, _ = blocks()
    read = ValueRead("out", out, Reader(x, np.array([]), np.array([]), affine=(2.0, 1.0)), 0, True)
    hw = build_head(head_plan([GroupTable(tokens, tokens, np.eye(3, dtype=bool))], [read]), D, one, bos)
    for xv in (0.0, 0.5, 1.0):
        pos = residual(D, d0=1.0, d2=1.0, d5=xv)
        assert np.allclose(hw.o @ (hw.v @ pos), residual(D, d6=2.0 * xv + 1.0))


def test_affine_value_read_with_a_negative_offset():
    one, bos, tokens, x, out, _ = blocks()
    read = ValueRead("out", out, Reader(x, np.array([]), np.array([]), affine=(-1.0, -3.0)), 0, True)
    hw = build_head(head_plan([GroupTable(tokens, tokens, np.eye(3, dtype=bool))], [read]), D, one, bos)
    pos = residual(D, d0=1.0, d3=1.0, d5=0.5)
    assert np.allclose(hw.o @ (hw.v @ pos), residual(D, d6=-3.5))


def test_categorical_value_read_folds_a_function_of_the_key_block():
    """A categorical value read from tokens through a function (a -> 30, b -> 10, c fails): the value
    row maps each token's dimension to the output's one-hot; where reading fails, nothing is written;
    the BOS value is the default's one-hot."""
    one, bos, tokens, _, _, cat = blocks()
    reader = Reader(tokens, np.array([30, 10, 0]), np.array([False, False, True]))
    read = ValueRead("cat", cat, reader, 20, True)
    hw = build_head(head_plan([GroupTable(tokens, tokens, np.eye(3, dtype=bool))], [read]), D, one, bos)
    for dim, want in ((2, 9), (3, 7)):
        got = hw.o @ (hw.v @ residual(D, d0=1.0, **{f"d{dim}": 1.0}))
        assert np.allclose(got, residual(D, **{f"d{want}": 1.0}))
    assert not np.any(hw.v @ residual(D, d0=1.0, d4=1.0))
    assert np.allclose(hw.v_bos, [0.0, 1.0, 0.0])


def test_numerical_value_read_of_a_categorical_block():
    one, bos, tokens, _, out, _ = blocks()
    reader = Reader(tokens, np.array([1.5, -2.0, 4.0]), np.zeros(3, dtype=bool))
    hw = build_head(head_plan([GroupTable(tokens, tokens, np.eye(3, dtype=bool))],
                              [ValueRead("out", out, reader, 7, True)]), D, one, bos)
    assert np.allclose((hw.o @ (hw.v @ residual(D, d0=1.0, d3=1.0)))[6], -2.0)
    assert np.allclose(hw.v_bos, [7.0])


# ---------------------------------------------------------------- heads: scores

def score(hw, qpos, kpos):
    return float((hw.q @ qpos) @ (hw.k @ kpos))


def test_score_reads_the_table_and_scores_bos_below_a_match():
    """select(tokens, tokens, <) as one table: the score is the table entry (key < query); the key
    BOS scores m - 1/2 for an aggregate."""
    one, bos, tokens, _, out, _ = blocks()
    table = np.array([[k < q for k in range(3)] for q in range(3)])
    hw = build_head(head_plan([GroupTable(tokens, tokens, table)],
                              [ValueRead("out", out, Reader(None, np.array([1.0]), np.array([False])), 0, True)]),
                    D, one, bos)
    tok = [residual(D, d0=1.0, **{f"d{2 + i}": 1.0}) for i in range(3)]
    for q in range(3):
        for k in range(3):
            assert score(hw, tok[q], tok[k]) == float(k < q)
        bos_key = residual(D, d0=1.0, d1=1.0)
        assert score(hw, tok[q], bos_key) == 0.5


def test_width_head_scores_bos_like_a_match_and_writes_its_weight():
    one, bos, tokens, _, out, _ = blocks()
    hw = build_head(head_plan([GroupTable(tokens, tokens, np.eye(3, dtype=bool))], mode="width", out=out),
                    D, one, bos)
    q = residual(D, d0=1.0, d2=1.0)
    assert score(hw, q, residual(D, d0=1.0, d1=1.0)) == 1.0
    assert score(hw, q, residual(D, d0=1.0, d2=1.0)) == 1.0
    assert score(hw, q, residual(D, d0=1.0, d3=1.0)) == 0.0
    assert np.allclose(hw.v_bos, [1.0])
    assert np.allclose(hw.o @ np.ones(1), residual(D, d6=1.0))


def test_two_tables_add_up():
    """A conjunction over two groups: score 2 exactly where both tables hold, BOS at 1.5."""
    one, bos, tokens, x, out, _ = blocks()
    idx = block("indices", "categorical", [0, 1], 5)
    t1 = GroupTable(tokens, tokens, np.eye(3, dtype=bool))
    t2 = GroupTable(idx, idx, np.array([[False, False], [True, False]]))    # key < query
    hw = build_head(head_plan([t1, t2], [ValueRead("out", out, Reader(None, np.array([1.0]), np.array([False])),
                                                   0, True)]), 8, one, bos)
    def pos(t, i):
        r = np.zeros(8)
        r[0] = 1.0
        r[2 + t] = 1.0
        r[5 + i] = 1.0
        return r
    assert score(hw, pos(0, 1), pos(0, 0)) == 2.0
    assert score(hw, pos(0, 1), pos(1, 0)) == 1.0
    assert score(hw, pos(0, 0), pos(0, 0)) == 1.0
    assert score(hw, pos(0, 1), np.eye(8)[0] + np.eye(8)[1]) == 1.5


# ---------------------------------------------------------------- residual allocation

def test_residual_allocation_orders_fixed_blocks_then_by_writer():
    from rasplay.engine.compiler.plan import Availability
    one, bos, tokens, x, out, cat = blocks()
    late, early = block("late", "categorical", [1, 2], -1, written=4), block("early", "numerical", None, -1,
                                                                             written=1)
    avail = Availability({})
    for b in (late, cat, early, tokens, bos, one):
        avail.register(b)

    class P:
        blocks = [late, cat, early, tokens, bos, one]
    width = allocate_residual(P)
    assert [b.name for b in P.blocks] == ["one", "bos", "tokens", "early", "cat", "late"]
    assert [b.start for b in P.blocks] == [0, 1, 2, 5, 6, 9]
    assert width == 11


# ---------------------------------------------------------------- value sets and helpers

def test_means_of_integers_are_the_evaluators_floats():
    """Every mean of 1..3 values from {0, 1}: k/w correctly rounded, as the evaluator's sum / count."""
    got = mean_values(np.array([0, 1]), 3, 1000)
    want = sorted({k / w for w in (1, 2, 3) for k in range(w + 1)})
    assert got.tolist() == want


def test_exact_unique_keeps_last_bit_differences_and_near_duplicates_finds_them():
    v = np.array([3.0, 7 * (3 / 9) + 3 * (2 / 9), 1.0])
    assert unique_values(v).size == 2
    exact = unique_values(v, exact=True)
    assert exact.size == 3
    assert near_duplicates(exact) == [(2.9999999999999996, 3.0)]
    assert lookup(exact, np.array([2.9999999999999996, 3.0])).tolist() == [1, 2]


def test_integral():
    assert integral(np.array([1, 2])) and integral(np.array([1.0, -4.0])) and integral(np.array([True]))
    assert not integral(np.array([0.5])) and not integral(np.array([np.inf]))
