"""The Interpreter (one per interpretation: its graph, limits, clock and diagnostics), assembled from the
mixins of this package, and `interpret`, the entry point."""
from __future__ import annotations

import time
from pathlib import Path

from ..lang.errors import RaspError, Span
from ..limits import DEFAULT_LIMITS, Limits
from ..program import Graph
from .expressions import ExpressionsMixin, NodesMixin
from .functions import FunctionsMixin
from .interpretation import Definition, DefinitionList, Interpretation
from .library import LibraryMixin, parse_program
from .loops import LoopsMixin
from .scope import Env
from .statements import NamesMixin, StatementsMixin


class Interpreter(StatementsMixin, ExpressionsMixin, FunctionsMixin, LoopsMixin, NodesMixin, NamesMixin,
                  LibraryMixin):
    """Runs one program into one graph: statements, expressions, calls, loops, names and the library each
    come from the module of that name; this class holds the state they share and the time and loop limits."""

    def __init__(self, graph: Graph, limits: Limits, load_dirs: list[Path], deadline: float):
        self.graph = graph
        self.limits = limits
        self.load_dirs = load_dirs
        self.deadline = deadline
        self.call_depth = 0
        self.iterations = 0
        self.diagnostics: list[dict] = []
        self.node_names: dict[int, list[str]] = {}
        self.local_names: dict[int, str] = {}
        self.sources: dict[str, str] = {}
        self.loading: list[str] = []
        self.function_stack: list[str] = []
        self.call_sites: list[Span] = []   # spans of calls written in the user's program
        self.example = None
        self.library: Env | None = None     # the library's environment (every program's parent)
        self.timed_out: RaspError | None = None
        self.warned: set = set()
        self.library_names: frozenset = frozenset()

    def check_time(self, span: Span | None):
        if time.monotonic() > self.deadline:
            raise RaspError(f"evaluation took longer than {self.limits.eval_seconds:g} s (the time limit)",
                            span, "timeout")

    def count_iterations(self, n: int, span: Span):
        self.iterations += n
        if self.iterations > self.limits.max_iterations:
            raise RaspError(f"more than {self.limits.max_iterations} loop steps (the loop limit)", span, "limit")
        if self.iterations % 1024 < n:
            self.check_time(span)


# ------------------------------------------------------------------ entry point

def interpret(source: str, limits: Limits = DEFAULT_LIMITS, load_dirs: list | None = None,
              deadline: float | None = None) -> Interpretation:
    """Interpret a RASP program: its graph, its top-level definitions and its diagnostics."""
    graph = Graph(limits.max_nodes)
    definitions: list[Definition] = DefinitionList()
    if len(source) > limits.max_source_chars:
        err = RaspError(f"the program is {len(source)} characters long; the limit is {limits.max_source_chars} "
                        "characters (Limits.max_source_chars; the server's --max-source-chars)",
                        Span(1, 1, 1, 2), "limit")
        return Interpretation(graph, [], [err.to_diagnostic()], {}, {}, source=source)
    program = parse_program(source)  # linear in the (bounded) program size; before the time limit starts
    if deadline is None:
        deadline = time.monotonic() + limits.eval_seconds
    interp = Interpreter(graph, limits, [Path(d) for d in (load_dirs or [])], deadline)
    env = Env(interp.library_env())
    interp.sources["<program>"] = source
    interp.run(program, env, top_level=True, definitions=definitions)
    _label_nodes(graph, interp.sources)
    return Interpretation(graph, definitions, interp.diagnostics, interp.node_names, interp.local_names,
                          interp.example, env, source, interp.sources)


def _label_nodes(graph: Graph, sources: dict[str, str]):
    for node in graph:
        if node.label is None and node.span is not None and node.span.source in sources:
            text = " ".join(node.span.text(sources[node.span.source]).split())
            node.label = text if len(text) <= 60 else text[:57] + "…"
