"""The inputs an exercise is checked on, deterministic for a file: its explicit cases first, then
every input of the shortest lengths (while they fit in a quarter of the budget), then random inputs
with lengths uniform over the range and tokens uniform over the alphabet, without repeats; where the
random rounds draw only repeats (a small space), the inputs not drawn yet, shortest first."""
from __future__ import annotations

import itertools

import numpy as np

from .format import Exercise

EXHAUSTIVE_SHARE = 4   # every input of the shortest lengths may take up to 1/4 of the inputs


def _as_input(tokens, input_format: str):
    return "".join(tokens) if input_format == "str" else list(tokens)


def generate_inputs(exercise: Exercise) -> list:
    """Strings (input_format str) or lists of tokens (json), at most exercise.n_inputs of them."""
    fmt = exercise.input_format
    seen: set[tuple] = set()
    out: list = []

    def add(tokens) -> None:
        key = tuple((type(t).__name__, t) for t in tokens)
        if key not in seen and len(out) < exercise.n_inputs:
            seen.add(key)
            out.append(_as_input(tokens, fmt))

    for case in exercise.cases:
        add(list(case))
    alphabet = list(exercise.alphabet)
    if not alphabet:
        return out
    k = len(alphabet)
    share = exercise.n_inputs // EXHAUSTIVE_SHARE
    length = exercise.min_length
    while length <= exercise.max_length and len(out) + k ** length <= len(exercise.cases) + share:
        for combo in itertools.product(alphabet, repeat=length):
            add(list(combo))
        length += 1

    rng = np.random.default_rng(exercise.seed)
    lengths = np.arange(exercise.min_length, exercise.max_length + 1)
    # the inputs that can exist at all, so that a tiny space never loops
    space = sum(min(k ** int(n), 10**9) for n in lengths)
    for _ in range(8):   # a few rounds: repeats are dropped and redrawn
        missing = min(exercise.n_inputs - len(out), space - len(seen))
        if missing <= 0:
            break
        drawn_lengths = rng.choice(lengths, size=missing)
        codes = rng.integers(0, k, size=(missing, exercise.max_length))
        for n, row in zip(drawn_lengths, codes):
            add([alphabet[c] for c in row[:n]])
    # still short (repeats drawn in every round, as in a small space): the inputs not drawn, shortest first.
    # Each step adds one or passes one already seen: inputs + seen steps are enough.
    every = itertools.chain.from_iterable(itertools.product(alphabet, repeat=int(n)) for n in lengths)
    for combo in itertools.islice(every, exercise.n_inputs + len(seen)):
        add(list(combo))
    return out
