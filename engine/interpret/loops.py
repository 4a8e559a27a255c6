"""Loops and comprehensions: what can be iterated, unpacking into names, list and dict comprehensions
(a `for` statement's body runs in statements.py), all counted against the loop limit."""
from __future__ import annotations

from ..lang import ast
from ..lang.errors import RaspError, Span
from ..program import SOp
from .atoms import ATOM_TYPES, a_type, type_name
from .scope import Env


class LoopsMixin:
    """The Interpreter's loops and comprehensions (see interpreter.py)."""

    def unpack(self, env: Env, names: list[str], item, span: Span):
        if len(names) == 1:
            env.vars[names[0]] = item
            return
        if not isinstance(item, (list, tuple)) or len(item) != len(names):
            raise RaspError(f"cannot unpack {type_name(item)} into {len(names)} names", span, "value")
        for n, v in zip(names, item):
            env.vars[n] = v

    def comprehension(self, e, env: Env):
        items = self.iterate(self.eval(e.iterable, env), e.iterable.span)
        scope = Env(env)
        if isinstance(e, ast.ListComp):
            out = []
            for item in items:
                self.unpack(scope, e.names, item, e.span)
                out.append(self.eval(e.element, scope))
            return self.collection(out, e.span)
        out = {}
        for item in items:
            self.unpack(scope, e.names, item, e.span)
            key = self.eval(e.key, scope)
            if not isinstance(key, ATOM_TYPES):
                raise RaspError(f"a dict key must be a number, string or bool, not {a_type(key)}",
                                e.key.span, "type")
            out[key] = self.eval(e.value, scope)
        return self.collection(out, e.span)

    def iterate(self, value, span: Span) -> list:
        if isinstance(value, (list, tuple)):
            items = list(value)
        elif isinstance(value, dict):
            items = list(value.keys())
        elif isinstance(value, str):
            items = list(value)
        elif isinstance(value, SOp):
            raise RaspError("cannot loop over an s-op: its values exist only per input; "
                            "loop over a list instead", span, "type")
        else:
            raise RaspError(f"cannot loop over {a_type(value)}", span, "type")
        self.count_iterations(len(items), span)
        return items
