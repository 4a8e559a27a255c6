"""Pass 9, reuse residual dimensions (engine/compiler/reuse.py) and the liveness it reads off the weights
(engine/compiler/liveness.py): narrower models, the same layers, the same outputs on every input, exact
against the evaluator, and a decoded residual view that never shows a stale value."""
from pathlib import Path

import numpy as np
import pytest

from rasplay import engine
from rasplay.engine.compiler.liveness import bounds, intervals

ROOT = Path(__file__).resolve().parents[2]
CASES = [("double_histogram", "abc", 4), ("dyck2", "abc", 4), ("histogram_bos", "abc", 4), ("depth_l3", "abc", 4),
         ("most_frequent", "abc", 4), ("reverse", "abc", 5)]


def both(name, vocab, max_len):
    source = (ROOT / "examples" / f"{name}.rasp").read_text()
    return (engine.compile(source, vocab=vocab, max_len=max_len, reuse_residual=False),
            engine.compile(source, vocab=vocab, max_len=max_len))


@pytest.mark.parametrize("name,vocab,max_len", CASES)
def test_reuse_is_never_wider_nor_deeper_and_exact_on_every_input(name, vocab, max_len):
    plain, reused = both(name, vocab, max_len)
    assert reused.config["n_layers"] == plain.config["n_layers"]
    assert reused.config["d_model"] <= plain.config["d_model"]
    check = reused.check()                         # against the evaluator, every input up to max_len
    assert check["exhaustive"] and check["agree"] == check["inputs"] > 0
    for n in range(1, max_len + 1):
        idx = np.array(np.meshgrid(*[range(len(vocab))] * n)).reshape(n, -1).T
        assert reused.decode_output(reused.forward_outputs(idx)) == plain.decode_output(plain.forward_outputs(idx))
    # no reuse beats the liveness bound (read off the model without reuse)
    assert reused.config["d_model"] >= bounds(plain.plan.blocks, plain.config, plain.weights)["bound"]


def test_reuse_narrows_the_shipped_double_histogram_with_erasure_units():
    plain, reused = both("double_histogram", "abc", 4)
    assert (plain.config["d_model"], reused.config["d_model"]) == (23, 11)
    erased = [b for b in reused.layout if "erased_by" in b]
    units = [t for m in reused.mlps for t in m["targets"] if t["method"].startswith("erasure")]
    assert erased and len(units) == len(erased)
    # each erasure unit costs two non-zero weights (its input and its output), nothing else changes
    assert reused.transformer.nonzero_parameters() - plain.transformer.nonzero_parameters() == \
        2 * sum(t["units"] for t in units)


@pytest.mark.parametrize("name,vocab,max_len", CASES[:3])
def test_decoded_residual_holds_no_stale_value(name, vocab, max_len):
    """At every stage every block decodes as without reuse while it holds its value, and as None where its
    dimensions hold another block's value (BOS column included)."""
    plain, reused = both(name, vocab, max_len)
    inputs = ["abca", "cab", "b", "aacb"]
    a, b = plain.run(inputs), reused.run(inputs)
    assert [s["stage"] for s in a["residual"]] == [s["stage"] for s in b["residual"]]
    shared = 0
    for k, (sa, sb) in enumerate(zip(a["residual"], b["residual"])):
        for name_, cols in sb["blocks"].items():
            span = reused.live.get(name_)
            if span is None or span[0] <= k < span[1]:
                assert cols == sa["blocks"][name_], (sa["stage"], name_)
            else:
                shared += 1
                assert all(v is None for row in cols for v in row)
    assert shared > 0


def test_blocks_share_dimensions_only_when_their_lives_do_not_overlap():
    """Lives from the model without reuse (the weights of a reused model mix the blocks that share a
    dimension), dimensions from the reused model's layout."""
    plain, reused = both("dyck2", "abc", 4)
    life = {it.block.name: it for it in intervals(plain.plan.blocks, plain.config, plain.weights)}
    dims = {b["name"]: set(b.get("dims", range(b["start"], b["start"] + b["size"]))) for b in reused.layout}
    names = sorted(dims)
    overlaps = 0
    for i, p in enumerate(names):
        for q in names[i + 1:]:
            if dims[p] & dims[q]:
                overlaps += 1
                first, second = sorted((life[p], life[q]), key=lambda it: it.written)
                assert second.written >= first.freed, (first.block.name, second.block.name)
    assert overlaps > 0


def test_reuse_can_be_turned_off():
    plain, _ = both("double_histogram", "abc", 4)
    assert plain.live == {} and all("erased_by" not in b for b in plain.layout)
    starts = [b["start"] for b in plain.layout]
    assert starts == sorted(starts) and len(set(starts)) == len(starts)


def test_liveness_bounds_of_reverse():
    """reverse at max_len 5: 19 dimensions without reuse; at the widest boundary (before layer 2's head)
    15 are live (one, bos, tokens, indices, opp_index); 18 when what layer 2's head reads last keeps its
    dimensions until an MLP could erase it (attention cannot), so `reverse` needs 3 more; reached: 18."""
    plain, reused = both("reverse", "abc", 5)
    assert plain.residual_reuse is None
    assert reused.residual_reuse == {"width_without_reuse": 19, "bound": 15, "bound_mlp_erasure": 18,
                                     "erased": ["length [1/(w+1)]"]}
    assert bounds(plain.plan.blocks, plain.config, plain.weights) == {"width": 19, "bound": 15,
                                                                      "bound_mlp_erasure": 18}
    assert reused.config["d_model"] == 18
