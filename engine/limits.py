"""Explicit resource limits of the engine. Every limit has a documented default (docs/language.md)
and a clear error message when it is exceeded."""
from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Limits:
    max_source_chars: int = 1_000_000   # program text (the largest published programs are ~125,000)
    max_nodes: int = 20_000             # operations in the graph (program size)
    max_call_depth: int = 100           # nested function calls (recursion)
    max_collection: int = 100_000       # elements of a list/dict/string built by the program
    max_iterations: int = 1_000_000     # loop and comprehension steps, in all
    max_inputs: int = 256               # inputs per evaluation
    max_input_length: int = 4096        # tokens per input
    max_cells: int = 1 << 25            # batch x n x n selector cells evaluated at once
    max_result_cells: int = 1 << 25     # selector cells in one evaluation document (selectors x inputs x n x n)
    eval_seconds: float = 10.0          # wall time for one evaluation

    def with_(self, **changes) -> "Limits":
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


DEFAULT_LIMITS = Limits()
