"""Calls: user functions and closures (a new scope over the defining one, bounded depth, errors inside
the library reported at the user's call), built-ins, and applying an s-op or selector to an input."""
from __future__ import annotations

from ..graph_runner import row_values, run_graph
from ..inputs import parse_input
from ..lang import ast
from ..lang.errors import RaspError
from ..program import Selector, SOp
from .atoms import a_type
from .scope import Builtin, Env, Function


class FunctionsMixin:
    """The Interpreter's calls (see interpreter.py)."""

    def call(self, e: ast.Call, env: Env):
        func = self.eval(e.func, env)
        args = [self.eval(a, env) for a in e.args]
        spans = [a.span for a in e.args]
        if isinstance(func, Builtin):
            return func.fn(self, args, spans, e.span)
        if isinstance(func, (SOp, Selector)):
            return self.apply_to_input(func, args, spans, e)
        if not isinstance(func, Function):
            raise RaspError(f"{a_type(func)} cannot be called", e.func.span, "type")
        if len(args) != len(func.params):
            raise RaspError(f"{func.name} takes {len(func.params)} argument{'s' if len(func.params) != 1 else ''} "
                            f"({', '.join(func.params)}), given {len(args)}", e.span, "type")
        if self.call_depth >= self.limits.max_call_depth:
            raise RaspError(f"calls nest more than {self.limits.max_call_depth} deep (the recursion limit)",
                            e.span, "limit")
        self.check_time(e.span)
        scope = Env(func.env)
        scope.vars.update(zip(func.params, args))
        self.call_depth += 1
        self.function_stack.append(func.name)
        at_call_site = e.span.source == "<program>"
        if at_call_site:
            self.call_sites.append(e.span)
        try:
            for stmt in func.body:
                self.exec(stmt, scope, None)
            results = [self.eval(r, scope) for r in func.returns]
        except RaspError as err:
            if at_call_site and err.span is not None and err.span.source != "<program>":
                raise RaspError(f"in {func.name}: {err.message} ({err.span.source} line {err.span.line})",
                                e.span, err.kind) from None
            raise
        finally:
            self.call_depth -= 1
            self.function_stack.pop()
            if at_call_site:
                self.call_sites.pop()
        if len(results) == 1:
            value = results[0]
            if isinstance(value, (SOp, Selector)) and value.id not in self.local_names and not isinstance(
                    func.returns[0], ast.Name):
                self.local_names[value.id] = f"{func.name}(…)"
            return value
        return tuple(results)

    def apply_to_input(self, node, args, spans, e: ast.Call):
        """`sop("hello")`, `sel([1, 2])`: the value on that input, as in the original REPL (a list
        for an s-op, a matrix of bools, rows = queries, for a selector)."""
        if len(args) != 1:
            raise RaspError(f"applying {a_type(node)} takes one input, given {len(args)}", e.span, "type")
        inp = parse_input(args[0], None, self.limits)
        if inp.error is not None:
            raise RaspError(f"applying {a_type(node)}: {inp.error.message}", spans[0], "type")
        self.check_time(e.span)
        vals = run_graph(self.graph.ancestors([node]), inp.array[None, :], {node.id}, self.deadline, self.limits)
        result = vals[node.id]
        if result.errors[0] is not None:
            raise RaspError(result.errors[0].message, e.span, result.errors[0].kind)
        if isinstance(node, Selector):
            return result.data[0].tolist()
        return row_values(result.data[0], None if result.int_like is None else result.int_like[0])[0]
