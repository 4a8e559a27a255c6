"""Training for length: options, bins, longer held-out data, per-bin accuracy, position schemes, causal mask."""
import json
from pathlib import Path

import numpy as np
import pytest

from support.needs import need
from rasplay.engine.train import TrainConfig, TrainError
from rasplay.engine.train.lengths import length_bins, parse_range

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"vocab": "ab", "max_len": 6, "n_train": 400, "n_test": 60, "d_model": 16, "steps": 60, "eval_every": 30}


# ------------------------------------------------------------------ options (torch-free)

@pytest.mark.parametrize("change, message", [
    ({"test_min_len": 6, "test_max_len": 12}, "must be above max_len (6)"),
    ({"test_min_len": 7}, "give both test_min_len and test_max_len"),
    ({"test_min_len": 9, "test_max_len": 8}, "test_min_len (9) is larger than test_max_len (8)"),
    ({"test_min_len": 7, "test_max_len": 513}, "test_max_len 513 is above the limit of 512"),
    ({"test_min_len": 7, "test_max_len": 300, "bin_width": 1}, "more than 32 bins"),
    ({"bin_width": 4}, "bin_width needs test lengths"),
    ({"positional": "rotary"}, "positional must be one of learned, random_offset, none"),
    ({"device": "tpu"}, "device must be one of cpu, cuda, auto"),
    ({"causal": "yes"}, "causal must be true or false"),
    ({"test_min_len": "7", "test_max_len": 9}, "test_min_len must be an integer >= 1"),
])
def test_bad_length_options_are_refused_with_the_reason(change, message):
    with pytest.raises(TrainError, match=message.replace("(", r"\(").replace(")", r"\)")):
        TrainConfig.from_dict({"vocab": "ab", "max_len": 6, **change})


def test_defaults_keep_the_old_behaviour_and_bins_follow_the_training_width():
    cfg = TrainConfig.from_dict({"vocab": "ab"})
    assert (cfg.positional, cfg.causal, cfg.device, cfg.test_min_len, cfg.longest) == ("learned", False, "cpu",
                                                                                        None, 16)
    assert length_bins(cfg) == [{"lo": 1, "hi": 16, "held_out": False}]
    cfg = TrainConfig.from_dict({"vocab": "ab", "max_len": 20, "test_min_len": 21, "test_max_len": 55})
    assert [(b["lo"], b["hi"], b["held_out"]) for b in length_bins(cfg)] == [(1, 20, False), (21, 40, True),
                                                                            (41, 55, True)]
    assert cfg.longest == 55


@pytest.mark.parametrize("text, want", [("1-20", (1, 20)), (" 21 - 60 ", (21, 60)), ("7", (7, 7))])
def test_parse_range(text, want):
    assert parse_range(text) == want


@pytest.mark.parametrize("text", ["0-4", "9-3", "a-b", "1-", "-3", "1..4"])
def test_parse_range_refuses(text):
    with pytest.raises(TrainError, match="range"):
        parse_range(text)


# ------------------------------------------------------------------ with torch

def test_a_per_position_task_without_positions_is_exact_at_every_longer_length():
    need("torch")
    from rasplay.engine.train import train
    r = train("y = tokens == \"a\";", {**SMALL, "test_min_len": 7, "test_max_len": 18, "positional": "none",
                                       "causal": True, "steps": 150, "bin_width": 6})
    L = r["lengths"]
    assert [(b["lo"], b["hi"]) for b in L["bins"]] == [(1, 6), (7, 12), (13, 18)]
    assert all(b["seq_acc"] == 1.0 and b["acc"] == 1.0 and b["count"] > 0 for b in L["bins"])
    assert sorted(p["length"] for p in L["per_length"]) == list(range(1, 19))
    assert (L["positional"], L["causal"], L["device"], L["unseen_values"]) == ("none", True, "cpu", 0)
    assert r["model"]["positional"] == "none" and r["model"]["causal"] is True
    # the length-free compiled model, measured on the same inputs against the evaluator
    lf = L["compiled"]["length_free"]
    assert lf["available"] and [b["seq_acc"] for b in lf["bins"]] == [1.0, 1.0, 1.0]
    assert L["compiled"]["max_len"] == {"defined_up_to": 6}
    ex = L["long_example"]
    assert len(ex["input"]) == 18 and ex["correct"] == [True] * 18 and ex["prediction"] == ex["target"]
    assert len(ex["attention"]) == 0 or len(ex["attention"][0][0]) == 19
    assert all(len(p["bins"]) == 3 for p in r["curve"])   # every curve point carries the bins
    json.dumps(r)


def test_values_never_seen_in_training_are_counted_and_scored_wrong():
    need("torch")
    from rasplay.engine.train import train
    r = train("y = length;", {**SMALL, "test_min_len": 7, "test_max_len": 9, "positional": "none"})
    L = r["lengths"]
    longer = [b for b in L["bins"] if b["held_out"]]
    assert len(longer) == 1 and longer[0]["seq_acc"] == 0.0 and longer[0]["acc"] == 0.0
    assert L["unseen_values"] == sum(p["length"] * p["count"] for p in L["per_length"] if p["length"] > 6)


def test_a_program_without_a_length_free_model_says_why():
    need("torch")
    from rasplay.engine.train import train
    src = (ROOT / "examples" / "reverse.rasp").read_text()
    r = train(src, {**SMALL, "test_min_len": 7, "test_max_len": 8, "positional": "random_offset"})
    lf = r["lengths"]["compiled"]["length_free"]
    assert lf["available"] is False and lf["reason"]
    assert r["model"]["max_len"] == 9 and r["lengths"]["positional"] == "random_offset"


def test_causal_mask_hides_later_positions_and_random_offsets_stay_in_the_table():
    torch = need("torch")
    from rasplay.engine.train.loop import random_positions, resolve_device
    from rasplay.engine.train.torch_transformer import ModelConfig, TrainableTransformer
    torch.manual_seed(0)
    m = TrainableTransformer(ModelConfig(vocab=["a", "b", "c"], max_len=8, d_model=8, n_layers=2, n_heads=2,
                                         causal=True, output={"kind": "categorical", "classes": ["a", "b"]}))
    x = torch.tensor([[0, 1, 2, 1, 0]])
    y = torch.tensor([[0, 1, 2, 0, 2]])
    out_x, out_y = m(x), m(y)
    assert torch.allclose(out_x[0, :3], out_y[0, :3]) and not torch.allclose(out_x[0, 3:], out_y[0, 3:])
    m.config.causal = False
    assert not torch.allclose(m(x)[0, :3], m(y)[0, :3])
    batch = {"ids": torch.zeros((200, 5), dtype=torch.long),
             "mask": torch.arange(5)[None, :] < torch.randint(1, 6, (200, 1))}
    pos = random_positions(batch, 12, torch.Generator().manual_seed(0))
    real = pos[batch["mask"]]
    assert int(real.min()) == 0 and int(pos.max()) <= 11
    assert int(real.max()) == 11      # the offsets reach the end of the table
    assert np.all(np.diff(pos.numpy(), axis=1)[batch["mask"][:, 1:].numpy()] == 1)
    has_gpu = torch.cuda.is_available()
    assert resolve_device("auto").type == ("cuda" if has_gpu else "cpu") and resolve_device("cpu").type == "cpu"
    if not has_gpu:
        with pytest.raises(TrainError, match="no GPU"):
            resolve_device("cuda")


def test_no_positional_encoding_keeps_the_weights_layout_at_zero():
    need("torch")
    from rasplay.engine.train.torch_transformer import ModelConfig, TrainableTransformer
    m = TrainableTransformer(ModelConfig(vocab=["a", "b"], max_len=5, d_model=8, n_layers=1, positional="none",
                                         output={"kind": "numerical"}))
    assert m.pos_emb.weight.shape == (5, 8) and not m.pos_emb.weight.requires_grad
    assert float(m.pos_emb.weight.abs().sum()) == 0.0


@pytest.mark.parametrize("k", [2, 3, 4])
def test_the_depth_hierarchy_programs_need_k_layers_by_the_analysis(k):
    from rasplay.engine.train import load_task
    task = load_task((ROOT / "examples" / f"depth_l{k}.rasp").read_text())
    assert task.output == f"in_L{k}" and task.layers == k and task.heads_per_layer == [1] * k


def test_the_memory_estimate_counts_the_longer_positions_and_inputs():
    from rasplay.engine.train.memory import estimate_bytes
    short = TrainConfig.from_dict({"vocab": "ab", "max_len": 20})
    longer = TrainConfig.from_dict({"vocab": "ab", "max_len": 20, "test_min_len": 21, "test_max_len": 60})
    assert estimate_bytes(longer, 2, 1) > 2 * estimate_bytes(short, 2, 1) - (350 << 20)
