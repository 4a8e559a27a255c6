"""Pass 6, build the heads (engine/compiler/heads.py), on hand-built plans: the pass alone, without
compiling a program. Each test builds the blocks and the head plan by hand (support/compiler_plans.py),
runs the pass, and checks the matrices it produces by multiplying them with hand-made residual vectors."""
import numpy as np

from support.compiler_plans import D, block, blocks, head_plan, residual  # noqa: F401

from rasplay.engine.compiler.heads import build_head
from rasplay.engine.compiler.plan import GroupTable, Reader, ValueRead


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
