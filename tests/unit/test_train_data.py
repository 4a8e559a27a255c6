"""engine.train's torch-free half: the task and its datasets, labelled by the evaluator (numpy only)."""
from pathlib import Path

import numpy as np
import pytest

from rasplay import engine
from rasplay.engine.train import TrainConfig, TrainError, load_task, make_data

ROOT = Path(__file__).resolve().parents[2]
REVERSE = (ROOT / "examples" / "reverse.rasp").read_text()


def decode(data, split, row):
    n = split.lengths[row]
    return [data.vocab[i] for i in split.ids[row, data.offset:n]]


@pytest.mark.parametrize("bos", [True, False])
def test_labels_and_selectors_equal_the_evaluator(bos):
    task = load_task(REVERSE)
    data = make_data(task, list("abcde"), 1, 9, n_train=300, n_test=50, seed=3, bos=bos)
    assert data.kind == "categorical" and data.classes == list("abcde") and data.dropped == 0
    split = data.train
    rows = list(range(40))
    inputs = ["".join(decode(data, split, r)) for r in rows]
    doc = engine.evaluate(REVERSE, inputs, names=["reverse", "flip", "full_s"])
    flip_id = next(h["selector"] for layer in task.heads for h in layer if h["name"] == "flip")
    for r, want, want_flip in zip(rows, doc["results"]["reverse"]["values"], doc["results"]["flip"]["values"]):
        n, o = split.lengths[r], data.offset
        got = [data.classes[c] for c in split.targets[r, o:n]]
        assert got == want
        assert split.loss_mask[r].sum() == len(want) and not split.loss_mask[r, :o].any()
        assert (split.selectors[flip_id][r, o:n, o:n] == np.array(want_flip, bool)).all()
        assert not split.selectors[flip_id][r, :o].any()
    assert set(map(int, data.test.lengths - data.offset)) <= set(range(1, 10))


def test_held_out_inputs_stay_out_of_training():
    task = load_task(REVERSE)
    data = make_data(task, list("abcdefgh"), 6, 10, n_train=2000, n_test=200, seed=0)
    key = lambda s, r: tuple(s.ids[r, :s.lengths[r]])
    test = {key(data.test, r) for r in range(len(data.test))}
    assert not any(key(data.train, r) in test for r in range(len(data.train)))


def test_numerical_outputs_and_dropped_inputs():
    src = "n = selector_width(select(tokens, tokens, ==)) / length;"
    data = make_data(load_task(src), list("ab"), 1, 5, n_train=100, n_test=20)
    assert data.kind == "numerical" and data.classes is None and data.train.targets.dtype == np.float32
    bad = 'first_a = aggregate(select(tokens, "a", ==), tokens, "-");'   # several a's: no mean of strings
    data = make_data(load_task(bad), list("ab"), 1, 6, n_train=300, n_test=50)
    assert data.dropped > 0 and "mean is undefined" in data.drop_reason
    assert len(data.train) + len(data.test) + data.dropped <= 350
    with pytest.raises(TrainError, match="failed on every sampled input"):
        make_data(load_task('x = aggregate(select(tokens, tokens, ==), tokens);'), list("a"), 2, 3, n_train=20, n_test=5)


def test_task_errors_are_clear():
    with pytest.raises(TrainError, match="no s-op named 'nope'"):
        load_task(REVERSE, "nope")
    with pytest.raises(TrainError, match="is a selector"):
        load_task(REVERSE, "flip")
    with pytest.raises(TrainError, match="has an error"):
        load_task("x = tokens +;")
    with pytest.raises(TrainError, match="BOS token"):
        make_data(load_task(REVERSE), ["a", "<bos>"], 1, 3)
    with pytest.raises(TrainError, match="unknown training option"):
        TrainConfig.from_dict({"vocab": "ab", "stepz": 3})


