"""What interpreting a program gives: its graph, its top-level definitions in order, its diagnostics."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..lang.errors import Span
from ..program import Graph


@dataclass
class Definition:
    """A top-level name of the program (or an expression statement) and what it holds."""
    name: str
    value: Any
    span: Span
    is_expression: bool = False


@dataclass
class Interpretation:
    graph: Graph
    definitions: list[Definition]            # top-level s-ops and selectors, in definition order
    diagnostics: list[dict]
    node_names: dict[int, list[str]]          # node id -> top-level names bound to it
    local_names: dict[int, str]               # node id -> "name (in function)" for unnamed nodes
    example: Any = None                       # `set example ...` from the program, if any
    env: Any = None                           # the program's scope (a scope.Env): its names and values
    source: str = ""
    sources: dict[str, str] = field(default_factory=dict)  # source name -> text, for labels
    memo: dict = field(default_factory=dict)  # results derived from this interpretation alone (analyses)

    @property
    def ok(self) -> bool:
        return not any(d["severity"] == "error" for d in self.diagnostics)

    def display_name(self, node) -> str:
        names = self.node_names.get(node.id)
        if names:
            return names[0]
        return self.local_names.get(node.id) or node.label or node.describe()


class DefinitionList(list):
    """The program's definitions in order, with the set of their names (a name defined again is found
    without scanning a long program's list)."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()


def replace_definition(definitions: list[Definition], d: Definition):
    if d.name in getattr(definitions, "names", (d.name,)):
        for i, old in enumerate(definitions):
            if old.name == d.name:
                del definitions[i]
                break
    definitions.append(d)
    if isinstance(definitions, DefinitionList):
        definitions.names.add(d.name)
