"""Training for length (docs/length_generalization.md): inputs held out by length, their bins, accuracy
per length and per bin, and how far the compiled models reach (numpy only, no torch).

The training range is min_len..max_len; the longer range test_min_len..test_max_len (all longer than
max_len, so no test input can occur in training) is cut into bins of `bin_width` lengths (default: the
training range's width, so 1-20 trains and 21-40, 41-60 test). The in-distribution held-out split is the
first bin. A longer input whose output takes a value the training data never showed cannot be
predicted by a classifier over the training classes: its target is -1 (always wrong) and it is counted.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ..elementwise import array_from_values
from ..limits import DEFAULT_LIMITS, Limits
from .config import TrainConfig
from .data import Split, Task, TaskData, _assemble, _key, label, sample_inputs
from .errors import TrainError

UNSEEN = -1


def parse_range(text: str, what: str = "lengths") -> tuple[int, int]:
    """'1-20' -> (1, 20); '20' -> (20, 20); TrainError otherwise."""
    m = re.fullmatch(r"\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?", str(text))
    if not m:
        raise TrainError(f"{what} must be a range like 1-20 (got {text!r})")
    lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
    if lo < 1 or lo > hi:
        raise TrainError(f"{what} {text!r}: the range must satisfy 1 <= low <= high")
    return lo, hi


def length_bins(cfg: TrainConfig) -> list[dict]:
    """The training bin, then the longer range in bins of cfg.bin_width."""
    bins = [{"lo": cfg.min_len, "hi": cfg.max_len, "held_out": False}]
    if cfg.test_min_len is None:
        return bins
    width = cfg.bin_width or (cfg.max_len - cfg.min_len + 1)
    for lo in range(cfg.test_min_len, cfg.test_max_len + 1, width):
        bins.append({"lo": lo, "hi": min(lo + width - 1, cfg.test_max_len), "held_out": True})
    return bins


@dataclass
class Longer:
    split: Split
    unseen: int            # positions whose value is not one of the training classes
    dropped: int
    drop_reason: str | None


def _targets(values: np.ndarray, data: TaskData) -> tuple[np.ndarray, int]:
    if data.kind == "numerical":
        if values.dtype.kind == "U":
            raise TrainError("the output holds strings at the longer lengths; it cannot be scored as a number")
        return values.astype(np.float32), 0
    uniq, inv = np.unique(values, return_inverse=True)
    index = {_key(c): i for i, c in enumerate(data.classes)}
    codes = np.array([index.get(_key(v.item()), UNSEEN) for v in uniq], dtype=np.int64)
    out = codes[inv.reshape(values.shape)]
    return out, int((out == UNSEEN).sum())


def make_longer(task: Task, data: TaskData, vocab: list, cfg: TrainConfig, limits: Limits | None = None) -> Longer:
    """n_test inputs per longer bin, lengths uniform over the longer range (runs of one token with cfg.blocks),
    labelled by the program."""
    limits = limits or DEFAULT_LIMITS
    lo, hi = cfg.test_min_len, cfg.test_max_len
    count = cfg.n_test * (len(length_bins(cfg)) - 1)
    rng = np.random.default_rng([cfg.seed, 0x10A6])
    toks, lengths = sample_inputs(len(vocab), lo, hi, count, rng, cfg.blocks)
    plain = replace(task, heads=[])          # no selectors: the overlay runs the program on its one input
    groups, dropped, reason = label(plain, array_from_values(vocab, "the vocabulary"), toks, lengths, limits)
    if not groups:
        raise TrainError(f"the program failed on every longer input ({dropped} of {dropped}): {reason}")
    converted = [_targets(g[1], data) for g in groups]
    index = {_key(t): i for i, t in enumerate(data.vocab)}
    model_ids = np.array([index[_key(t)] for t in vocab], dtype=np.int64)
    split, _ = _assemble(groups, [c[0] for c in converted], hi + data.offset, data.offset, model_ids, toks,
                         data.bos_id, data.kind, [])
    return Longer(split, sum(c[1] for c in converted), dropped, reason)


def aggregate(lengths: np.ndarray, right: np.ndarray, total: np.ndarray, seq_ok: np.ndarray,
              bins: list[dict]) -> dict:
    """Per length and per bin: per-position accuracy (acc), per-sequence accuracy (seq_acc), inputs (count).
    lengths: each row's program length; right/total: its correct and labelled positions; seq_ok: all right."""
    per_length = []
    for n in np.unique(lengths):
        rows = lengths == n
        per_length.append({"length": int(n), "count": int(rows.sum()),
                           "acc": _ratio(right[rows].sum(), total[rows].sum()), "seq_acc": _ratio(seq_ok[rows].sum(),
                                                                                                  rows.sum())})
    out_bins = []
    for b in bins:
        rows = (lengths >= b["lo"]) & (lengths <= b["hi"])
        out_bins.append({**b, "count": int(rows.sum()), "acc": _ratio(right[rows].sum(), total[rows].sum()),
                         "seq_acc": _ratio(seq_ok[rows].sum(), rows.sum())})
    return {"per_length": per_length, "bins": out_bins}


def _ratio(a, b):
    return None if not b else round(float(a) / float(b), 4)


def program_lengths(split: Split, offset: int) -> np.ndarray:
    return split.lengths - offset


def vocab_rows(split: Split, rows: np.ndarray, n: int, offset: int, to_vocab: np.ndarray) -> np.ndarray:
    """The inputs `rows` (all of program length n) as indices into the training vocabulary."""
    return to_vocab[split.ids[rows, offset:offset + n]]


def length_free_reach(source: str, output: str, vocab: list, data: TaskData, splits: list[Split], bins: list[dict],
                      load_dirs=None) -> dict:
    """The length-free compiled model on the same held-out inputs, measured against the evaluator (it is
    exact at every length by construction; this checks it on these inputs), or why there is none."""
    from .. import compile as compile_program
    from ..lang.errors import RaspError

    try:
        model = compile_program(source, output, vocab=list(vocab), length_free=True, load_dirs=load_dirs)
    except RaspError as e:
        return {"available": False, "reason": e.message}
    index = {_key(t): i for i, t in enumerate(data.vocab)}
    to_vocab = np.full(len(data.vocab), -1, dtype=np.int64)
    lf_ids = model.encode(list(vocab))
    for t, j in zip(vocab, lf_ids):
        to_vocab[index[_key(t)]] = j
    lengths, agree, inputs = [], [], []
    for split in splits:
        plen = program_lengths(split, data.offset)
        for n in np.unique(plen):
            rows = np.nonzero(plen == n)[0]
            doc = model.agreement(vocab_rows(split, rows, int(n), data.offset, to_vocab))
            lengths.append(int(n))
            agree.append(doc["agree"])
            inputs.append(doc["inputs"])
    lengths_a, agree_a, inputs_a = (np.array(x) for x in (lengths, agree, inputs))
    per_length = [{"length": n, "count": int(c), "seq_acc": _ratio(a, c)} for n, a, c in zip(lengths, agree, inputs)]
    out_bins = []
    for b in bins:
        rows = (lengths_a >= b["lo"]) & (lengths_a <= b["hi"])
        out_bins.append({**b, "count": int(inputs_a[rows].sum()), "seq_acc": _ratio(agree_a[rows].sum(),
                                                                                     inputs_a[rows].sum())})
    return {"available": True, "reason": None, "per_length": per_length, "bins": out_bins}
