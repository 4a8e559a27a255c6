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




def runs_of(row):
    """The runs of one token in a row (padding -1 dropped): [(token, run length), ...]."""
    out = []
    for t in row[row >= 0]:
        if out and out[-1][0] == t:
            out[-1][1] += 1
        else:
            out.append([t, 1])
    return out


@pytest.mark.parametrize("n_tokens,blocks", [(2, 3), (5, 4), (3, 1)])
def test_block_inputs_are_runs_of_one_token_with_every_run_count(n_tokens, blocks):
    from rasplay.engine.train.data import sample_inputs

    toks, lengths = sample_inputs(n_tokens, 1, 12, 4000, np.random.default_rng(7), blocks=blocks)
    counts = set()
    for row, n in zip(toks, lengths):
        assert (row[:n] >= 0).all() and (row[n:] == -1).all() and row[:n].max() < n_tokens
        runs = runs_of(row)             # neighbouring runs differ, so these are the sampled runs
        assert 1 <= len(runs) <= min(blocks, n)
        counts.add(len(runs))
    assert counts == set(range(1, blocks + 1))
    firsts = {int(row[0]) for row in toks}
    assert firsts == set(range(n_tokens))


def test_block_inputs_train_data_and_are_refused_out_of_bounds():
    depth = (ROOT / "examples" / "depth_l3.rasp").read_text()
    data = make_data(load_task(depth), list("ab"), 3, 10, n_train=200, n_test=40, seed=1, blocks=3)
    for split in (data.train, data.test):
        for r in range(len(split)):
            row = split.ids[r, data.offset:split.lengths[r]]
            assert len(runs_of(row)) <= 3
    assert TrainConfig.from_dict({"vocab": "ab", "blocks": 3}).blocks == 3
    for bad in (0, 513, "2"):
        with pytest.raises(TrainError, match="blocks"):
            TrainConfig.from_dict({"vocab": "ab", "blocks": bad})
