"""Planner decisions pinned beside the per-pass tests (issue 24): the joint-values size guard of an
'or' selector width, and the BOS gates of the assembly pass (their savings and the margin at BOS)."""
import numpy as np
import pytest

from rasplay import engine
from rasplay.engine.compiler.encodings import JOINT_COST_FACTOR
from rasplay.engine.compiler.validate import CompileLimits
from rasplay.engine.examples import find_example

SORT = ("goes_before = select(tokens, tokens, <) or (select(tokens, tokens, ==) and select(indices, indices, <));\n"
        "target_pos = selector_width(goes_before);\n"
        "sorted = aggregate(select(target_pos, indices, ==), tokens);\n")


def test_joint_values_within_the_category_limit_serve_an_or_width_in_one_head():
    """3 tokens x 64 indices = 192 joint values (<= 1024, and 3 x 192 < 65^2 combinations of two parts)."""
    s = engine.compile(SORT, "sorted", vocab="abc", max_len=64).summary()
    assert s["heads_per_layer"] == [0, 1, 1]
    assert any("the extra MLP computes '(tokens, indices)'" in n for n in s["notes"])
    assert not any("count disjoint parts" in n for n in s["notes"])


def test_sort_at_max_len_64_over_17_tokens_splits_the_width_instead_of_joint_values():
    """17 x 64 = 1088 joint values pass the categorical-block limit (1024): the width is counted by
    two heads over disjoint parts, added by the MLP, instead of refusing to compile."""
    m = engine.compile(SORT, "sorted", vocab="abcdefghijklmnopq", max_len=64)
    s = m.summary()
    assert s["heads_per_layer"] == [2, 1]
    assert any("2 heads count disjoint parts of it and the MLP adds them" in n for n in s["notes"])
    assert not any("joint values" in n and "(tokens, indices)" in n for n in s["notes"])
    inputs = ["qpb", "abcdefghijklmnopq"[::-1] * 3 + "q" * 13, "ba" * 32]
    assert [len(x) for x in inputs] == [3, 64, 64]
    out = m.run(inputs, trace=False)
    assert out["agreement"] == {"inputs": 3, "agree": 3, "max_error": out["agreement"]["max_error"]}
    assert out["outputs"][0] == list("bpq") and out["outputs"][2] == list("a" * 32 + "b" * 32)


def test_the_guard_follows_the_category_limit():
    """With a lower limit, even 3 tokens x 64 indices are too many joint values: parts instead."""
    limits = CompileLimits(max_categories=150)
    s = engine.compile(SORT, "sorted", vocab="abc", max_len=64, limits=limits).summary()
    assert any("count disjoint parts" in n for n in s["notes"])
    assert JOINT_COST_FACTOR == 3


# ------------------------------------------------------------------ BOS gates (assembly pass)

@pytest.mark.parametrize("name,nonzero", [("histogram", 192), ("length", 183)])
def test_bos_gates_only_where_needed_pin_the_non_zero_weights(name, nonzero):
    """No gate on units already off at BOS, none in the last layer's MLP (its output at BOS is read by
    nothing): histogram and length at max_len 20 have these non-zeros without residual reuse (docs; Tracr's:
    205 / 211; reuse narrows histogram from 26 to 23 dimensions for 6 more, test_compiler_reuse.py)."""
    m = engine.compile(find_example(name).source, vocab="abc", max_len=20, reuse_residual=False)
    assert m.summary()["nonzero_params"] == nonzero
    bos = next(b for b in m.blocks if b.kind == "bos").start
    last = m.config["n_layers"] - 1
    assert not np.any(m.weights[f"layers.{last}.mlp.fc1.weight"][:, bos])


@pytest.mark.parametrize("name,vocab,max_len,nonzero,gates", [("reverse", "abc", 10, 618, [94, 0]),
                                                               ("dyck2", "()[]", 6, 3372, [6, 22, 4, 0])])
def test_bos_gates_per_layer_of_deeper_models(name, vocab, max_len, nonzero, gates):
    """Gates (non-zeros of the bos column of fc1) only on units that are on at BOS: gating every unit
    would add 6 to reverse; a margin of 1/2 instead of 1 would leave 3 of reverse's. dyck2's MLPs test
    classes of input values (gates.py), some through the other values' dimensions, which pass at BOS
    (where every one-hot is 0): those units are gated (10 of them), and the model has 3,372 non-zeros
    where one unit per combination had 5,860. Without residual reuse, whose erasure units add their own
    non-zeros (test_compiler_reuse.py)."""
    m = engine.compile(find_example(name).source, vocab=vocab, max_len=max_len, reuse_residual=False)
    bos = next(b for b in m.blocks if b.kind == "bos").start
    assert [int(np.count_nonzero(m.weights[f"layers.{i}.mlp.fc1.weight"][:, bos]))
            for i in range(m.config["n_layers"])] == gates
    assert m.summary()["nonzero_params"] == nonzero


def bos_pre_activations(m, inputs):
    """Each layer's MLP pre-activations at the BOS position, recomputed from the residual after attention."""
    fw = m.forward(np.stack([m.encode(x) for x in inputs]), trace=True)
    attn = [x for stage, x in fw.residual if stage.endswith("attention")]
    out = []
    for i in range(m.config["n_layers"]):
        fc1, b1 = m.weights[f"layers.{i}.mlp.fc1.weight"], m.weights[f"layers.{i}.mlp.fc1.bias"]
        used = np.any(fc1 != 0, axis=1) | (b1 != 0)          # padding units (all zero) stay at 0
        # erasure units (residual reuse) stay on at BOS by design: they clear a dead value there too
        width = m.mlps[i]["width"]
        erase = sum(t["units"] for t in m.mlps[i]["targets"] if t["method"].startswith("erasure"))
        used[width - erase:width] = False
        out.append((attn[i][:, 0] @ fc1.T + b1)[:, used])
    return out


@pytest.mark.parametrize("name,vocab,max_len", [("sort_unique", "abcd", 4), ("sort_by_frequency", "abc", 5),
                                                ("dyck1", "()", 6), ("reverse", "abc", 10)])
def test_every_mlp_unit_but_the_last_layers_is_off_at_bos_by_a_margin_of_one(name, vocab, max_len):
    ex = find_example(name)
    m = engine.compile(ex.source, vocab=vocab, max_len=max_len)
    assert m.config["n_layers"] >= 2
    inputs = [(vocab * max_len)[:max_len], vocab[0] * max_len, (vocab[::-1] * max_len)[:max_len]]
    pres = bos_pre_activations(m, inputs)
    gated = 0
    for i, pre in enumerate(pres[:-1]):
        if pre.size:
            assert pre.max() <= -1.0 + 1e-9, (i, pre.max())
            gated += int(np.isclose(pre, -1.0).sum())
    assert gated > 0                      # some units needed a gate (and it puts them exactly at -1)
    r = m.check(lengths=range(1, min(max_len, 5) + 1))   # the gates change nothing off BOS
    assert r["agree"] == r["inputs"]
