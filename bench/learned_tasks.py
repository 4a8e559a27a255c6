"""The seven RASP tasks of TransformerPrograms (Friedman et al. 2023) as bench/learned_import.py uses them:
vocabulary and input lengths as their scripts/rasp.sh and scripts/dyck.sh train them, the rasplay example
that computes the task, and an independent Python statement of each task's definition (ours, written from
the paper's task descriptions, not their code), used to confirm that the example computes the task."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np


def _reverse(s):
    return s[::-1]


def _hist(s):
    c = Counter(s)
    return [c[t] for t in s]


def _double_hist(s):
    c = Counter(s)
    same = Counter(c.values())
    return [same[c[t]] for t in s]


def _sort(s):
    return sorted(s)


def _most_freq(s):
    """The distinct tokens, most frequent first (ties: the earlier first occurrence), then "<s>"."""
    c = Counter(s)
    order = sorted(c, key=lambda t: (-c[t], s.index(t)))
    return [order[i] if i < len(order) else "<s>" for i in range(len(s))]


def _most_freq_batch(raw: np.ndarray, vocab: tuple) -> np.ndarray:
    """_most_freq on a (B, n) batch of one length, vectorised: per row, each token's count and first
    position; the present tokens sorted by (-count, first position), then "<s>" (bench/learned_import.py
    confirms it against _most_freq on every input it checks)."""
    B, n = raw.shape
    tokens = np.array(vocab)
    hits = raw[:, None, :] == tokens[None, :, None]                      # (B, V, n)
    counts = hits.sum(axis=2)
    first = np.where(counts > 0, hits.argmax(axis=2), n)
    key = np.where(counts > 0, -counts * (n + 1) + first, (n + 1) ** 2)  # absent tokens last
    order = np.argsort(key, axis=1, kind="stable")[:, :n]
    shown = np.arange(order.shape[1])[None, :] < (counts > 0).sum(axis=1)[:, None]
    out = np.full((B, n), "<s>", dtype=f"<U{max(3, max(map(len, vocab)))}")
    out[:, :order.shape[1]] = np.where(shown, tokens[order], "<s>")
    return out


def _dyck(s):
    """Per prefix: T balanced, P still possible, F failed (and F from the first failure on)."""
    pairs = {")": "(", "}": "{"}
    stack, out = [], []
    for t in s:
        if t in ("(", "{"):
            stack.append(t)
            out.append("P")
        elif stack and stack[-1] == pairs[t]:
            stack.pop()
            out.append("P" if stack else "T")
        else:
            return out + ["F"] * (len(s) - len(out))
    return out


@dataclass(frozen=True)
class Task:
    name: str
    vocab: tuple
    lengths: tuple          # (shortest, longest) input length in training, without the beginning/end tokens
    eos: bool
    example: str | None     # examples/<file>: the rasplay program computing the task (None: none does)
    reference: Callable
    vectorised: Callable | None = None   # the task on a (B, n) batch of one length where no example computes it

    def batch(self, raw: np.ndarray) -> np.ndarray:
        return self.vectorised(raw, self.vocab)


DIGITS5, DIGITS6 = tuple("01234"), tuple("012345")
TASKS = {
    "reverse": Task("reverse", DIGITS5, (1, 6), True, "reverse.rasp", _reverse),
    "hist": Task("hist", DIGITS6, (1, 7), False, "histogram.rasp", _hist),
    "double_hist": Task("double_hist", DIGITS6, (1, 7), False, "double_histogram.rasp", _double_hist),
    "sort": Task("sort", DIGITS5, (1, 6), True, "sort_stable.rasp", _sort),
    "most_freq": Task("most_freq", DIGITS6, (1, 7), False, None, _most_freq, _most_freq_batch),
    "dyck1": Task("dyck1", ("(", ")"), (15, 15), False, "dyck1.rasp", _dyck),
    "dyck2": Task("dyck2", ("(", ")", "{", "}"), (15, 15), False, "dyck2.rasp", _dyck),
}
VARIANTS = ("rasp", "rasp_categorical_only")


def samples(task: Task, count: int, seed: int) -> list[list[str]]:
    """`count` seeded inputs: a length uniform over the task's lengths, tokens uniform over its vocabulary
    (their Dyck data also holds sampled balanced strings; ours are uniform, see the docs)."""
    rng = np.random.default_rng(seed)
    lo, hi = task.lengths
    out = []
    for _ in range(count):
        n = int(rng.integers(lo, hi + 1))
        out.append([task.vocab[i] for i in rng.integers(0, len(task.vocab), size=n)])
    return out


def wrap(task: Task, tokens: list[str]) -> list[str]:
    return ["<s>", *tokens] + (["</s>"] if task.eos else [])
