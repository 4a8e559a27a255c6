"""Statements: running a program's statements in order (a failing statement is reported and the rest
goes on), the dispatch of each statement kind, and the names statements bind (`NamesMixin`: reserved
names, binding, failed definitions, lookup)."""
from __future__ import annotations

from ..lang import ast
from ..lang.errors import RaspError, Span, diagnostic
from ..program import Map, Selector, SOp
from .atoms import show_value, source_text
from .interpretation import Definition, DefinitionList, replace_definition
from .scope import RESERVED_EVERYWHERE, Builtin, Env, Failed, Function, closest, defined_names


class StatementsMixin:
    """The Interpreter's statements (see interpreter.py)."""

    def run(self, program: ast.Program, env: Env, top_level: bool, definitions: list | None = None):
        """Run the statements; while a top-level program runs, `definition_spans` maps each name it defines to
        the statements that define it (so that a use before them says so: NamesMixin.lookup)."""
        outer = getattr(self, "definition_spans", {})
        if top_level:
            self.definition_spans = {}
            for stmt in program.statements:
                for name in defined_names(stmt):
                    self.definition_spans.setdefault(name, []).append(stmt.span)
        try:
            self._run_statements(program, env, top_level, definitions)
        finally:
            self.definition_spans = outer

    def _run_statements(self, program: ast.Program, env: Env, top_level: bool, definitions: list | None):
        # `exit` / `quit` end the program there, as they end the REPL's reading
        stop = next((stmt for stmt in program.statements if isinstance(stmt, ast.ReplNoop)
                     and stmt.text.split("(")[0] in ("exit", "quit")), None)

        def before_stop(err: RaspError) -> bool:
            return stop is None or err.span is None or (err.span.line, err.span.col) < (stop.span.line, stop.span.col)

        for err in filter(before_stop, program.syntax_errors):
            self.diagnostics.append(err.to_diagnostic())
        for warning in filter(before_stop, program.warnings):
            self.diagnostics.append(warning.to_diagnostic("warning"))
        for stmt in program.statements:
            if stmt is stop:
                self.diagnostics.append(diagnostic(f"'{stop.text}': the rest of the program is not run, as the "
                                                   "REPL stops reading there", stop.span, "info"))
                break
            if isinstance(stmt, ast.Invalid):  # reported with the syntax errors
                self.mark_failed(env, stmt.names, stmt.error)
                continue
            if self.timed_out is not None:  # reported once; the names after it are unavailable
                self.mark_failed(env, defined_names(stmt), self.timed_out)
                continue
            try:
                self.check_time(stmt.span)
                self.exec(stmt, env, definitions if top_level else None)
            except RaspError as e:
                e.located(stmt.span)
                self.diagnostics.append(e.to_diagnostic())
                self.mark_failed(env, defined_names(stmt), e)
                if e.kind == "timeout":
                    self.timed_out = e
            except RecursionError:
                e = RaspError("the program nests too deeply (expressions or calls)", stmt.span, "limit")
                self.diagnostics.append(e.to_diagnostic())
                self.mark_failed(env, defined_names(stmt), e)

    def exec(self, stmt: ast.Stmt, env: Env, definitions: list | None):
        if isinstance(stmt, ast.Assign):
            values = [self.eval(v, env) for v in stmt.values]
            if len(values) == 1 and isinstance(values[0], (tuple, list)) and len(stmt.names) > 1:
                values = list(values[0])  # a, b = f(x);  a, b = [x, y];
            # one name given several values (`z = f(x);` where f returns two) keeps them together, as the
            # original does: `z[1]` is the second
            if len(values) != len(stmt.names):
                raise RaspError(f"{len(values)} value{'s' if len(values) != 1 else ''} for "
                                f"{len(stmt.names)} name{'s' if len(stmt.names) != 1 else ''}", stmt.span, "value")
            for name, value in zip(stmt.names, values):  # in order: the names before a reserved one are set
                self.check_settable(env, name, stmt.span)
                self.bind(env, name, value, stmt.span, definitions)
        elif isinstance(stmt, ast.ExprStmt):
            value = self.eval(stmt.expr, env)
            if definitions is not None and not isinstance(value, (SOp, Selector, Function, Builtin)):
                self.diagnostics.append(diagnostic(f"{source_text(stmt.expr, self.sources)} = {show_value(value)}",
                                                   stmt.span, "info", "value"))
            if definitions is not None and isinstance(value, (SOp, Selector)):
                text = " ".join(stmt.expr.span.text(self.sources.get(stmt.span.source, "")).split())
                if not (isinstance(stmt.expr, ast.Name) and any(d.name == text for d in definitions)):
                    replace_definition(definitions, Definition(text, value, stmt.span, is_expression=True))
                    names = self.node_names.setdefault(value.id, [])
                    if text not in names:
                        names.append(text)
        elif isinstance(stmt, ast.FuncDef):
            self.check_settable(env, stmt.name, stmt.span)
            for param in stmt.params:
                if param in RESERVED_EVERYWHERE:
                    raise RaspError(f"cannot set reserved name '{param}' (a built-in name); "
                                    "choose another parameter name", stmt.span, "name")
            self.bind(env, stmt.name, Function(stmt.name, stmt.params, stmt.body, stmt.returns, env, stmt.span),
                      stmt.span, definitions)
        elif isinstance(stmt, ast.ForLoop):
            for name in stmt.names:
                self.check_settable(env, name, stmt.span)
            for item in self.iterate(self.eval(stmt.iterable, env), stmt.iterable.span):
                self.unpack(env, stmt.names, item, stmt.span)
                for inner in stmt.body:
                    self.exec(inner, env, definitions)
        elif isinstance(stmt, ast.Load):
            self.load(stmt, env, definitions)
        elif isinstance(stmt, ast.Draw):
            self.eval(stmt.target, env)
            self.diagnostics.append(diagnostic(
                "draw(…) is the original REPL's graph; here the layer x head diagram shows every s-op",
                stmt.span, "info"))
        elif isinstance(stmt, ast.SetExample):
            example = self.eval(stmt.example, env)
            if not isinstance(example, (str, list)):
                raise RaspError("set example needs a string or a list", stmt.span, "type")
            self.example = example
        elif isinstance(stmt, ast.ReplNoop):
            self.diagnostics.append(diagnostic(f"the REPL command '{stmt.text}' has no effect here", stmt.span, "info"))
        else:  # pragma: no cover - the parser makes no other statements
            raise RaspError(f"unsupported statement {type(stmt).__name__}", stmt.span, "syntax")


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
