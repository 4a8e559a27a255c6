"""Names: scopes (Env), what a name can hold (functions, built-ins, failed definitions), the reserved
names, and binding and looking up names as a program runs."""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, Callable

from ..lang import ast
from ..lang.errors import RaspError, Span
from ..program import Map, Selector, SOp
from .interpretation import Definition, DefinitionList, replace_definition

# Names no scope may set (the original REPL's reserved words, and our built-in functions), and
# names the top level of a program or loaded file may not set either (the library's), as in the
# original, where library names are constants.
RESERVED_EVERYWHERE = frozenset({
    "if", "else", "not", "and", "or", "out", "def", "return", "range", "for", "in", "zip", "len", "get",
    "tokens_asis", "tokens_str", "tokens_int", "tokens_bool", "tokens_float", "indices", "True", "False",
    "aggregate", "select", "selector_width", "round", "indicator", "load", "draw",
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


class NamesMixin:
    """The Interpreter's handling of names (see interpreter.py)."""

    def check_settable(self, env: Env, name: str, span: Span):
        """The original's reserved names: its keywords and built-ins anywhere, the library's names
        at the top level of a program or loaded file."""
        if name in RESERVED_EVERYWHERE or (name in self.library_names and env.parent is self.library):
            what = "a library name" if name in self.library_names else "a built-in name"
            raise RaspError(f"cannot set reserved name '{name}' ({what}); choose another name", span, "name")

    def mark_failed(self, env: Env, names: list[str], error: RaspError):
        """Later uses of these names say why they are missing (reserved names keep their meaning)."""
        for name in names:
            if name not in RESERVED_EVERYWHERE and not (name in self.library_names and env.parent is self.library):
                env.vars[name] = Failed(name, error)

    def bind(self, env: Env, name: str, value, span: Span, definitions: list | None):
        env.vars[name] = value
        if definitions is not None and not isinstance(value, (SOp, Selector)) \
                and name in getattr(definitions, "names", (name,)):
            # rebound to a value that is not an s-op or selector: no s-op of that name remains
            for i, old in enumerate(definitions):
                if old.name == name and not old.is_expression:
                    del definitions[i]
                    if isinstance(definitions, DefinitionList):
                        definitions.names.discard(name)
                    names = self.node_names.get(old.value.id, [])
                    if name in names:
                        names.remove(name)
                    break
        if isinstance(value, (SOp, Selector)):
            if definitions is not None:
                replace_definition(definitions, Definition(name, value, span))
                names = self.node_names.setdefault(value.id, [])
                if name not in names:
                    names.append(name)
            elif value.id not in self.local_names:
                fn = self.function_stack[-1] if self.function_stack else None
                self.local_names[value.id] = f"{name} (in {fn})" if fn else name

    def used_before_definition(self, e: ast.Name) -> str | None:
        """The message for a name the running program defines only in this statement or a later one."""
        here = (e.span.line, e.span.col)
        for span in getattr(self, "definition_spans", {}).get(e.id, []):
            if span.source != e.span.source:
                continue
            if (span.line, span.col) <= here < (span.end_line, span.end_col):
                return (f"'{e.id}' is used before it is defined: this statement defines it, so it has no value "
                        f"yet (give '{e.id}' a value on an earlier line)")
            if (span.line, span.col) > here:
                return f"'{e.id}' is used before it is defined (on line {span.line}): define it above its first use"
        return None

    def lookup(self, e: ast.Name, env: Env):
        try:
            value = env.lookup(e.id)
        except KeyError:
            early = self.used_before_definition(e)
            if early:
                raise RaspError(early, e.span, "name") from None
            hint = closest(e.id, env.names())
            raise RaspError(f"'{e.id}' is not defined" + (f"; did you mean '{hint}'?" if hint else ""),
                            e.span, "name") from None
        if isinstance(value, Map) and value.op.startswith("to_") and value.origin is None \
                and e.span.source == "<program>":
            value.origin = e.span  # a token that fails to convert is reported where the program converts
        if isinstance(value, Failed):
            err = value.error
            where = f" on line {err.span.line}" if err.span and err.span.source == e.span.source else ""
            raise RaspError(f"'{e.id}' is not available: its definition{where} failed ({err.message})",
                            e.span, "name")
        return value
