"""engine.train's whole runs with torch: accuracy reached and the selector matched, supervised attention,
the same seed the same curve, cancel and the time budget, fine-tuning from saved weights (the model's parts:
tests/unit/test_train.py)."""
import json
from pathlib import Path

import pytest

from support.needs import need
torch = need("torch")
from rasplay.engine.train import TrainError, train  # noqa: E402

pytestmark = pytest.mark.train
ROOT = Path(__file__).resolve().parents[2]
REVERSE = (ROOT / "examples" / "reverse.rasp").read_text()
HISTOGRAM = (ROOT / "examples" / "histogram.rasp").read_text()


def test_fast_training_reaches_high_accuracy_and_matches_the_selector():
    seen = []
    r = train(HISTOGRAM, {"vocab": "abcd", "max_len": 8, "steps": 800, "seed": 0}, progress=seen.append)
    assert r["final"]["test_seq_acc"] >= 0.95 and r["final"]["test_acc"] >= 0.97
    assert r["model"]["n_layers"] == 1 and r["model"]["n_heads"] == 1 and r["stopped"] == "steps"
    assert len(r["matches"]) == 1 and r["matches"][0]["name"] == "same_token" and r["matches"][0]["head"] == 0
    assert seen and seen[-1]["step"] == 800 and {"step", "loss", "train_acc", "test_acc", "test_seq_acc",
                                                  "elapsed"} <= set(seen[-1])
    assert r["curve"][-1]["step"] == 800 and len(r["curve"]) == 16
    ex = r["example"]
    assert ex["prediction"] == ex["target"] and len(ex["attention"][0][0]) == len(ex["input"]) + 1
    json.dumps(r)


def test_supervised_reverse_learns_the_flip_pattern():
    r = train(REVERSE, {"vocab": "abcd", "max_len": 6, "steps": 300, "supervise": True, "d_model": 32})
    assert r["supervised"] == [{"layer": 1, "head": 0, "selector": r["program"]["heads"][0][0]["selector"]},
                               {"layer": 2, "head": 0, "selector": r["program"]["heads"][1][0]["selector"]}]
    flip = next(m for m in r["matches"] if m["name"] == "flip")
    assert flip["score"] > 0.9 and r["final"]["test_seq_acc"] > 0.9


def test_same_seed_same_curve_and_cancel():
    opts = {"vocab": "abc", "max_len": 5, "steps": 60, "eval_every": 20, "d_model": 16}
    strip = lambda curve: [{k: v for k, v in p.items() if k != "elapsed"} for p in curve]
    a, b = train(REVERSE, opts), train(REVERSE, opts)
    assert strip(a["curve"]) == strip(b["curve"]) and len(a["curve"]) == 3
    c = train(REVERSE, {**opts, "seed": 1})
    assert strip(c["curve"]) != strip(a["curve"])
    calls = iter(range(100))
    r = train(REVERSE, opts, should_stop=lambda: next(calls) >= 7)
    assert r["stopped"] == "cancelled" and r["steps"] == 7 and r["curve"][-1]["step"] == 7


def test_time_budget_stops_training():
    # no step count: only the time budget can stop it (how close to the budget it stops: bench/train_reverse.py)
    r = train(HISTOGRAM, {"vocab": "ab", "max_len": 4, "time_budget": 1.0, "d_model": 16})
    assert r["stopped"] == "time" and r["elapsed"] >= 1.0 and r["steps"] > 0


def test_fine_tuning_starts_from_loaded_weights(tmp_path):
    first = train(HISTOGRAM, {"vocab": "abc", "max_len": 5, "steps": 150, "d_model": 32}, save_path=tmp_path / "h.pt")
    again = train(HISTOGRAM, {"vocab": "abc", "max_len": 5, "steps": 10, "d_model": 32, "lr": 1e-5},
                  init=tmp_path / "h.pt")
    assert again["curve"][0]["test_acc"] >= first["final"]["test_acc"] - 0.05
    with pytest.raises(TrainError, match="longer than the model takes"):
        train(HISTOGRAM, {"vocab": "abc", "max_len": 9, "steps": 1}, init=tmp_path / "h.pt")

