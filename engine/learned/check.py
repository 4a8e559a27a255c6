"""The check of a learned program: compare it with the task's program on every input up to a length.

For each length from `min_length` to `max_length` (and `beyond` lengths past it, marked so), every
input over the vocabulary is checked when their count (vocabulary size ^ length) is at most
`exhaustive`; above that, `samples` seeded inputs (drawn uniformly, duplicates removed) are. Each
length's inputs run in batches through the graph runner (one (B, n) array per program per batch, no
Python call per token). The report gives, per length, the inputs and tokens checked and how many agree,
the inputs on which the task program itself fails (left out: they have no expected value) and those on
which the learned program fails (counted as disagreeing), the shortest failing inputs with expected
and got values, which of the learned program's selectors equal one of the task's (selector_match.py),
and the time taken. Limits (CheckLimits) are explicit; a check past them is refused with the reason
before it runs, or, past its time limit, stopped with a CheckError of kind "timeout".
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..elementwise import array_from_values
from ..lang.errors import RaspError
from ..limits import DEFAULT_LIMITS, Limits
from .check_programs import (CheckError, Program, comparable, equal_positions, load_program, run_batch,
                             token_batch)
from .selector_match import SelectorMatch

MAX_BATCH = 20_000


@dataclass(frozen=True)
class CheckLimits:
    """The most a check may do (the API's and the CLI's limits; docs/learned_programs.md, "Checking")."""
    max_length: int = 16            # longest input checked (beyond lengths included)
    max_vocab: int = 256            # tokens in the vocabulary
    max_exhaustive: int = 1_000_000     # the largest per-length count a check may enumerate
    max_samples: int = 100_000      # seeded samples per length
    max_inputs: int = 2_000_000     # inputs in all, over every length
    max_show: int = 50              # failing inputs reported
    seconds: float = 300.0          # wall time


@dataclass(frozen=True)
class CheckOptions:
    min_length: int = 1
    max_length: int = 6
    beyond: int = 0                 # lengths past max_length, checked the same way and marked "beyond"
    exhaustive: int = 100_000       # enumerate a length's every input when there are at most this many
    samples: int = 1000             # seeded samples at a length with more inputs than that
    seed: int = 0
    show: int = 5                   # the shortest failing inputs reported


def check_learned(learned: str, task: str, vocab, options: CheckOptions | None = None, *,
                  output: str | None = None, learned_output: str | None = None,
                  limits: CheckLimits | None = None, engine_limits: Limits | None = None, load_dirs=None) -> dict:
    """Compare the learned program's output (`learned_output`, else its `# output:`) with the task
    program's (`output`, else its default output) on the inputs over `vocab` (a list of tokens, or a
    string: one token per character). Returns the report (module docstring); CheckError for a refusal."""
    options, limits = options or CheckOptions(), limits or CheckLimits()
    engine_limits = engine_limits or DEFAULT_LIMITS
    started = time.monotonic()
    tokens = _vocabulary(vocab, limits)
    plan = make_plan(len(tokens), options, limits)
    task_program = load_program(task, "task", output, engine_limits, load_dirs)
    learned_program = load_program(learned, "learned", learned_output, engine_limits, load_dirs)
    longest = plan[-1]["length"] + learned_program.extra
    if longest > engine_limits.max_input_length:
        raise CheckError(f"the learned program would read inputs of {longest} tokens; the limit is "
                         f"{engine_limits.max_input_length}", kind="limit")
    state = _State(task_program, learned_program, options.show)
    deadline = started + limits.seconds
    for step in plan:
        try:
            _check_length(state, tokens, step, options, engine_limits, deadline)
        except TimeoutError:
            raise CheckError(f"the check took longer than {limits.seconds:g} s (its time limit) at length "
                             f"{step['length']}; check fewer lengths, fewer samples or a smaller vocabulary",
                             kind="timeout") from None
    return state.report(time.monotonic() - started)


def _vocabulary(vocab, limits: CheckLimits) -> np.ndarray:
    items = list(vocab) if isinstance(vocab, (str, list, tuple)) else None
    if not items:
        raise CheckError("the vocabulary is empty; give at least one token (e.g. \"abc\" or [0, 1, 2])")
    if len(items) > limits.max_vocab:
        raise CheckError(f"the vocabulary has {len(items)} tokens; the limit is {limits.max_vocab}", kind="limit")
    if len({(type(t).__name__, t) for t in items if isinstance(t, (bool, int, float, str))}) != len(items):
        raise CheckError("the vocabulary has a repeated token, or a token that is not a number, bool or string")
    try:
        return array_from_values(items, "the vocabulary")
    except RaspError as e:
        raise CheckError(e.message) from None


def make_plan(vocab_size: int, options: CheckOptions, limits: CheckLimits) -> list[dict]:
    """Per length: how its inputs are chosen ("exhaustive" or "sampled") and how many; CheckError when
    the options are outside the limits."""
    o = options
    if not 1 <= o.min_length <= o.max_length:
        raise CheckError(f"the lengths must satisfy 1 <= min_length <= max_length (got {o.min_length} and "
                         f"{o.max_length})")
    if o.beyond < 0 or o.samples < 1 or o.exhaustive < 0 or o.show < 0:
        raise CheckError("beyond, exhaustive and show must be at least 0, samples at least 1")
    top = o.max_length + o.beyond
    for value, limit, what in ((top, limits.max_length, "the longest length checked (max_length + beyond)"),
                               (o.exhaustive, limits.max_exhaustive, "exhaustive"),
                               (o.samples, limits.max_samples, "samples"), (o.show, limits.max_show, "show")):
        if value > limit:
            raise CheckError(f"{what} is {value}; the limit is {limit}", kind="limit")
    plan = []
    for n in range(o.min_length, top + 1):
        count = vocab_size ** n
        mode = "exhaustive" if count <= o.exhaustive else "sampled"
        plan.append({"length": n, "mode": mode, "count": count if mode == "exhaustive" else o.samples,
                     "beyond": n > o.max_length})
    total = sum(p["count"] for p in plan)
    if total > limits.max_inputs:
        raise CheckError(f"the check would run {total:,} inputs; the limit is {limits.max_inputs:,} "
                         "(lower exhaustive, samples or the lengths)", kind="limit")
    return plan


def _index_rows(step: dict, vocab_size: int, options: CheckOptions):
    """The inputs of one length as (B, n) vocabulary indices, in chunks: every input in order, or the
    seeded samples (sorted, duplicates removed)."""
    n = step["length"]
    if step["mode"] == "exhaustive":
        powers = vocab_size ** np.arange(n - 1, -1, -1, dtype=np.int64)
        for start in range(0, step["count"], MAX_BATCH):
            k = np.arange(start, min(start + MAX_BATCH, step["count"]), dtype=np.int64)
            yield (k[:, None] // powers[None, :]) % vocab_size
        return
    rng = np.random.default_rng([options.seed, n])
    rows = np.unique(rng.integers(0, vocab_size, size=(step["count"], n)), axis=0)
    for start in range(0, len(rows), MAX_BATCH):
        yield rows[start:start + MAX_BATCH]


def _check_length(state: "_State", vocab: np.ndarray, step: dict, options: CheckOptions, limits: Limits,
                  deadline: float) -> None:
    n = step["length"]
    row = state.new_length(step)
    kept = 1 + len(state.learned.heads) + len(state.task.heads)
    per = max(1, min(MAX_BATCH, limits.max_cells // ((n + state.learned.extra) ** 2 * kept)))
    for chunk in _index_rows(step, len(vocab), options):
        for start in range(0, len(chunk), per):
            idx = chunk[start:start + per]
            expected = run_batch(state.task, token_batch(vocab, idx, state.task), n, deadline, limits, True)
            got = run_batch(state.learned, token_batch(vocab, idx, state.learned), n, deadline, limits, True)
            state.add(row, vocab[idx], expected, got, step["beyond"])


class _State:
    """What a check has found so far: the rows by length, the shortest failing inputs, the selector match."""

    def __init__(self, task: Program, learned: Program, show: int):
        self.task, self.learned, self.show = task, learned, show
        self.lengths: list[dict] = []
        self.failing: list[dict] = []
        self.compared_as: set[str] = set()
        self.match = SelectorMatch(learned.heads, task.heads)

    def new_length(self, step: dict) -> dict:
        row = {"length": step["length"], "mode": step["mode"], "beyond": step["beyond"], "inputs": 0, "agree": 0,
               "tokens": 0, "tokens_agree": 0, "task_failed": 0, "learned_failed": 0}
        self.lengths.append(row)
        return row

    def add(self, row: dict, inputs: np.ndarray, expected, got, beyond: bool) -> None:
        B, n = inputs.shape
        task_ok = np.array([e is None for e in expected.errors]) & (expected.output is not None)
        learned_ok = np.array([e is None for e in got.errors]) & (got.output is not None)
        equal = np.zeros((B, n), dtype=bool)
        if expected.output is not None and got.output is not None:
            how = comparable(expected.output, got.output)
            self.compared_as.add(how)
            equal = equal_positions(expected.output, got.output, how) & learned_ok[:, None]
        agree = task_ok & equal.all(axis=1)
        row["inputs"] += int(task_ok.sum())
        row["agree"] += int(agree.sum())
        row["tokens"] += int(task_ok.sum()) * n
        row["tokens_agree"] += int(equal[task_ok].sum())
        row["task_failed"] += int((~task_ok).sum())
        row["learned_failed"] += int((task_ok & ~learned_ok).sum())
        self.match.update(got.selectors, expected.selectors)
        for b in np.nonzero(task_ok & ~agree)[0][: max(0, self.show - len(self.failing))]:
            self.failing.append(self._example(inputs[b], expected, got, equal[b], int(b), beyond))

    @staticmethod
    def _example(tokens: np.ndarray, expected, got, equal: np.ndarray, b: int, beyond: bool) -> dict:
        return {"input": tokens.tolist(), "length": len(tokens), "beyond": beyond,
                "expected": expected.output[b].tolist(),
                "got": None if got.errors[b] is not None or got.output is None else got.output[b].tolist(),
                "differs": np.nonzero(~equal)[0].tolist(), "error": got.errors[b]}

    def report(self, seconds: float) -> dict:
        total = {k: sum(r[k] for r in self.lengths) for k in
                 ("inputs", "agree", "tokens", "tokens_agree", "task_failed", "learned_failed")}
        for r in [*self.lengths, total]:
            r["input_agreement"] = r["agree"] / r["inputs"] if r["inputs"] else None
            r["token_agreement"] = r["tokens_agree"] / r["tokens"] if r["tokens"] else None
        return {"task_output": self.task.output, "learned_output": self.learned.output,
                "bos": self.learned.bos, "eos": self.learned.eos,
                "compared_as": "text" if "text" in self.compared_as else "value",
                "all_agree": total["inputs"] > 0 and total["agree"] == total["inputs"],
                "lengths": self.lengths, "total": total, "failing": self.failing,
                "selectors": self.match.report(),
                "task_selectors": [h["name"] for h in self.task.heads],
                "seconds": round(seconds, 3)}
