"""How often a learned program (RASP text read with "<s>" first, and "</s>" last when it has an end token)
gives the task program's output, over every input of each length (numpy batches through the evaluator;
no torch). Used by program mode's tests and bench/learned_emit.py; engine/learned/check.py is the
user-facing check."""
from __future__ import annotations

import itertools
import time

import numpy as np

from ..elementwise import array_from_values
from ..graph_runner import run_graph
from ..header import default_output
from ..interpret import interpret
from ..limits import DEFAULT_LIMITS
from .errors import TrainError

MAX_INPUTS = 200_000   # inputs of one length evaluated at once (exhaustive below this)


def _compiled(source: str, output: str | None = None):
    interp = interpret(source)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        raise TrainError(f"the program has an error: {errors[0]['message']}")
    name = output or default_output(interp)
    node = next(d.value for d in reversed(interp.definitions) if d.name == name)
    return node, interp.graph.ancestors([node])


def _run(compiled, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    node, nodes = compiled
    vals = run_graph(nodes, tokens, {node.id}, time.monotonic() + 600, DEFAULT_LIMITS)[node.id]
    ok = np.array([e is None for e in vals.errors]) if vals.data is not None else np.zeros(len(tokens), bool)
    return (np.asarray(vals.data) if vals.data is not None else None), ok


def all_inputs(vocab: list, n: int, limit: int = MAX_INPUTS, seed: int = 0) -> tuple[np.ndarray, bool]:
    """Every input of length n (token indices), or `limit` seeded samples when there are more."""
    if len(vocab) ** n <= limit:
        return np.array(list(itertools.product(range(len(vocab)), repeat=n)), dtype=np.int64).reshape(-1, n), True
    return np.random.default_rng(seed + n).integers(0, len(vocab), size=(limit, n)), False


def agreement(task_source: str, learned_source: str, vocab: list, lengths, task_output: str | None = None,
              bos: str = "<s>", eos: str | None = None, limit: int = MAX_INPUTS) -> list[dict]:
    """Per length: inputs checked (all, or seeded samples), positions and inputs on which the learned
    program equals the task's output, and the first input on which it does not."""
    task, learned = _compiled(task_source, task_output), _compiled(learned_source)
    values = array_from_values(list(vocab), "the vocabulary")
    rows = []
    for n in lengths:
        idx, exhaustive = all_inputs(vocab, n, limit)
        inputs = values[idx]
        want, ok = _run(task, inputs)
        wrapped = np.concatenate([np.full((len(inputs), 1), bos, dtype=object), inputs.astype(object)]
                                 + ([np.full((len(inputs), 1), eos, dtype=object)] if eos else []), 1)
        got, ok2 = _run(learned, array_from_values(wrapped.ravel().tolist(), "input").reshape(wrapped.shape))
        got = got[:, 1:1 + n]
        same = (got == want) & ok[:, None] & ok2[:, None]
        seq = same.all(1)
        bad = np.nonzero(~seq & ok)[0]
        rows.append({"length": n, "inputs": int(ok.sum()), "exhaustive": exhaustive,
                     "position_agreement": float(same[ok].mean()) if ok.any() else None,
                     "input_agreement": float(seq[ok].mean()) if ok.any() else None,
                     "first_failure": [str(t) for t in inputs[bad[0]]] if len(bad) else None})
    return rows
