"""The trained model handed back is the best checkpoint (held-out per sequence), not the last step's: a run
that falls back late keeps its best model, and says which step it is (issue 20, item 7)."""
import pytest

from support.needs import need
torch = need("torch")
from rasplay.engine.train import TrainConfig  # noqa: E402
from rasplay.engine.train.loop import evaluate, Batches, train_model  # noqa: E402
from rasplay.engine.train.run import _make_data, build_model, load_task  # noqa: E402

pytestmark = pytest.mark.train
HIST = "same = select(tokens, tokens, ==);\nhist = selector_width(same);"


def test_a_run_that_falls_back_keeps_its_best_checkpoint():
    cfg = TrainConfig.from_dict({"vocab": "abc", "max_len": 5, "steps": 300, "eval_every": 50, "seed": 0,
                                "n_train": 2000, "n_test": 200, "d_model": 16, "threads": 1})
    task = load_task(HIST, None)
    data = _make_data(task, cfg, None)
    torch.manual_seed(cfg.seed)
    model = build_model(task, data, cfg)
    evals = []

    def progress(point):
        if point["point"] != "eval":
            return
        evals.append(point)
        if point["step"] == 200:   # a late collapse: every weight scrambled after the checkpoint at step 200
            with torch.no_grad():
                for p in model.parameters():
                    p.copy_(torch.randn_like(p))

    run = train_model(model, data, cfg, progress=progress)
    best = max(evals, key=lambda p: (p["test_seq_acc"], p["test_acc"]))
    assert run["last"]["test_seq_acc"] < best["test_seq_acc"], "the collapse should show in the last step"
    assert run["final"]["test_seq_acc"] == best["test_seq_acc"] and run["best_step"] == best["step"] <= 200
    # and the model itself is that checkpoint
    again = evaluate(model, Batches(data.test), data.kind, cfg.tolerance)
    assert again["test_seq_acc"] == best["test_seq_acc"]
