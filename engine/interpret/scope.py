"""Names: scopes (Env), what a name can hold (functions, built-ins, failed definitions), the reserved
names (binding and looking them up as a program runs is statements.py's NamesMixin)."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from ..lang import ast
from ..lang.errors import RaspError, Span

# Names no scope may set (the original REPL's reserved words, and our built-in functions), and
# names the top level of a program or loaded file may not set either (the library's), as in the
# original, where library names are constants.
RESERVED_EVERYWHERE = frozenset({
    "if", "else", "not", "and", "or", "out", "def", "return", "range", "for", "in", "zip", "len", "get",
    "tokens_asis", "tokens_str", "tokens_int", "tokens_bool", "tokens_float", "indices", "True", "False",
    "aggregate", "select", "selector_width", "aggregate_sum", "select_closest", "round", "indicator", "load", "draw",
})


@dataclass
class Function:
    name: str
    params: list[str]
    body: list[ast.Stmt]
    returns: list[ast.Expr]
    env: "Env"
    span: Span


@dataclass
class Builtin:
    name: str
    fn: Callable  # fn(interp, args: list, spans: list[Span], span: Span) -> value


@dataclass
class Failed:
    """A name whose definition failed: using it repeats why."""
    name: str
    error: RaspError


class Env:
    def __init__(self, parent: "Env | None" = None):
        self.vars: dict[str, Any] = {}
        self.parent = parent

    def lookup(self, name: str):
        env = self
        while env is not None:
            if name in env.vars:
                return env.vars[name]
            env = env.parent
        raise KeyError(name)

    def names(self) -> set[str]:
        out, env = set(), self
        while env is not None:
            out |= env.vars.keys()
            env = env.parent
        return out


def closest(name: str, candidates) -> str | None:
    found = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


def defined_names(stmt: ast.Stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return stmt.names
    if isinstance(stmt, ast.FuncDef):
        return [stmt.name]
    if isinstance(stmt, ast.ForLoop):
        names = list(stmt.names)
        for s in stmt.body:
            names += defined_names(s)
        return names
    return []
