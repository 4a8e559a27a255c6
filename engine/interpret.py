"""AST -> operation graph: names, functions and closures, loops, lists, dicts, the library, load.

Interpretation runs the program's Python-level part (atoms, lists, dicts, functions, loops) at
once and builds s-op and selector nodes for everything that depends on the input. A statement
that fails is reported with its line and column and the rest of the program goes on; names it
would have defined are marked as failed, so later uses say why they are missing.
"""
from __future__ import annotations

import functools
import math
import operator
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable

from . import elementwise
from .lang import ast
from .lang.errors import RaspError, Span, a_type, diagnostic, type_name
from .lang.parser import parse
from .limits import DEFAULT_LIMITS, Limits
from .program import (
    Aggregate,
    Full,
    Graph,
    IndicesInput,
    Map,
    Select,
    SelectAnd,
    SelectNot,
    SelectOr,
    Selector,
    SelectorWidth,
    SequenceMap,
    SOp,
    TokensInput,
)

LIBRARY_RESOURCE = ("rasplay.engine", "library.rasp")
ATOM_TYPES = (bool, int, float, str)

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
    env: Env | None = None
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


class Interpreter:
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

    # ---------------------------------------------------------------- environments

    def builtin_env(self) -> Env:
        env = Env()
        tokens = self.graph.add(TokensInput(label="tokens"))
        indices = self.graph.add(IndicesInput(label="indices"))
        env.vars.update({
            "tokens": tokens, "tokens_asis": tokens, "indices": indices,
            "True": True, "False": False,
        })
        for conv in ("str", "int", "float", "bool"):
            env.vars[f"tokens_{conv}"] = self.graph.add(
                Map(f"to_{conv}", (("arg", 0),), (tokens,), label=f"tokens_{conv}"))
        for name, fn in BUILTINS.items():
            env.vars[name] = Builtin(name, fn)
        return env

    def library_env(self) -> Env:
        """The library, interpreted into this graph. It runs outside the user's time limit (it is
        part of rasplay, not of the program): a short limit must not break it."""
        env = Env(self.builtin_env())
        program = _library_program()
        self.sources[program.source_name] = program.source
        before = len(self.diagnostics)
        deadline, self.deadline = self.deadline, math.inf
        try:
            self.run(program, env, top_level=False)
        finally:
            self.deadline = deadline
        if len(self.diagnostics) > before:  # a broken library is a bug in rasplay, say so loudly
            raise RuntimeError(f"library.rasp failed: {self.diagnostics[before:]}")
        self.library = env
        self.library_names = frozenset(n for n in env.vars if not n.startswith("_"))
        return env

    def check_settable(self, env: Env, name: str, span: Span):
        """The original's reserved names: its keywords and built-ins anywhere, the library's names
        at the top level of a program or loaded file."""
        if name in RESERVED_EVERYWHERE or (name in self.library_names and env.parent is self.library):
            what = "a library name" if name in self.library_names else "a built-in name"
            raise RaspError(f"cannot set reserved name '{name}' ({what}); choose another name", span, "name")

    # ---------------------------------------------------------------- statements

    def run(self, program: ast.Program, env: Env, top_level: bool, definitions: list | None = None):
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
                self.mark_failed(env, _defined_names(stmt), self.timed_out)
                continue
            try:
                self.check_time(stmt.span)
                self.exec(stmt, env, definitions if top_level else None)
            except RaspError as e:
                e.located(stmt.span)
                self.diagnostics.append(e.to_diagnostic())
                self.mark_failed(env, _defined_names(stmt), e)
                if e.kind == "timeout":
                    self.timed_out = e
            except RecursionError:
                e = RaspError("the program nests too deeply (expressions or calls)", stmt.span, "limit")
                self.diagnostics.append(e.to_diagnostic())
                self.mark_failed(env, _defined_names(stmt), e)

    def mark_failed(self, env: Env, names: list[str], error: RaspError):
        """Later uses of these names say why they are missing (reserved names keep their meaning)."""
        for name in names:
            if name not in RESERVED_EVERYWHERE and not (name in self.library_names and env.parent is self.library):
                env.vars[name] = Failed(name, error)

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
                self.diagnostics.append(diagnostic(f"{_source_text(stmt.expr, self.sources)} = {_show_value(value)}",
                                                   stmt.span, "info", "value"))
            if definitions is not None and isinstance(value, (SOp, Selector)):
                text = " ".join(stmt.expr.span.text(self.sources.get(stmt.span.source, "")).split())
                if not (isinstance(stmt.expr, ast.Name) and any(d.name == text for d in definitions)):
                    _replace_definition(definitions, Definition(text, value, stmt.span, is_expression=True))
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
                _replace_definition(definitions, Definition(name, value, span))
                names = self.node_names.setdefault(value.id, [])
                if name not in names:
                    names.append(name)
            elif value.id not in self.local_names:
                fn = self.function_stack[-1] if self.function_stack else None
                self.local_names[value.id] = f"{name} (in {fn})" if fn else name

    def unpack(self, env: Env, names: list[str], item, span: Span):
        if len(names) == 1:
            env.vars[names[0]] = item
            return
        if not isinstance(item, (list, tuple)) or len(item) != len(names):
            raise RaspError(f"cannot unpack {type_name(item)} into {len(names)} names", span, "value")
        for n, v in zip(names, item):
            env.vars[n] = v

    def load(self, stmt: ast.Load, env: Env, definitions):
        name = stmt.path if stmt.path.endswith(".rasp") else stmt.path + ".rasp"
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise RaspError(f"load \"{stmt.path}\": only files beside the program can be loaded", stmt.span, "load")
        path = next((d / name for d in self.load_dirs if (d / name).is_file()), None)
        if path is None:
            where = ", ".join(str(d) for d in self.load_dirs) or "no directory (give the program as a file)"
            raise RaspError(f"load \"{stmt.path}\": no file {name} in {where}", stmt.span, "load")
        key = str(path.resolve())
        if key in self.loading:
            raise RaspError(f"load \"{stmt.path}\": files load each other in a cycle", stmt.span, "load")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise RaspError(f"load \"{stmt.path}\": cannot read {name} ({e})", stmt.span, "load")
        program = parse(text, name)
        self.sources[name] = text
        child = Env(self.library)  # a loaded file sees the library, not the loading program's names
        before = len(self.diagnostics)
        self.loading.append(key)
        try:
            self.run(program, child, top_level=False)
        finally:
            self.loading.pop()
        failures = [d for d in self.diagnostics[before:] if d["severity"] == "error"]
        del self.diagnostics[before:]  # diagnostics locate places in the program; the file's are summarised
        for n, v in child.vars.items():
            if not n.startswith("_"):  # shown and usable as outputs, as the original shows them
                self.bind(env, n, v, stmt.span, definitions)
        if failures:
            raise RaspError(f"load \"{stmt.path}\": {len(failures)} error(s) in {name}, first: "
                            f"{failures[0]['message']} (line {failures[0].get('line', '?')})", stmt.span, "load")

    # ---------------------------------------------------------------- expressions

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

    def eval(self, e: ast.Expr, env: Env):
        try:
            return self._eval(e, env)
        except RaspError as err:
            raise err.located(e.span)

    def _eval(self, e: ast.Expr, env: Env):
        if isinstance(e, ast.Literal):
            return e.value
        if isinstance(e, ast.Name):
            return self.lookup(e, env)
        if isinstance(e, ast.BinOp):
            return self.binop(e.op, self.eval(e.left, env), self.eval(e.right, env), e.span)
        if isinstance(e, ast.UnOp):
            return self.unop(e.op, self.eval(e.operand, env), e.span)
        if isinstance(e, ast.IfElse):
            cond = self.eval(e.cond, env)
            if isinstance(cond, Selector):
                raise RaspError("the condition of if/else cannot be a selector", e.cond.span, "type")
            if not isinstance(cond, SOp):
                if not isinstance(cond, (*ATOM_TYPES, list, tuple, dict)):
                    _check_atom_like(cond, e.cond.span, "the condition of if/else")
                return self.eval(e.then if cond else e.orelse, env)  # Python truthiness, as the original
            then, orelse = self.eval(e.then, env), self.eval(e.orelse, env)
            return self.elementwise("if", [then, cond, orelse], e.span)
        if isinstance(e, ast.Select):
            keys = self.as_sop(self.eval(e.keys, env), e.keys.span, "the keys of select")
            queries = self.as_sop(self.eval(e.queries, env), e.queries.span, "the queries of select")
            return self.add(Select(keys, queries, e.op, span=e.span), e.span)
        if isinstance(e, ast.Call):
            return self.call(e, env)
        if isinstance(e, ast.Index):
            return self.index(self.eval(e.target, env), self.eval(e.index, env), e)
        if isinstance(e, ast.Contains):
            return self.contains(self.eval(e.item, env), self.eval(e.container, env), e)
        if isinstance(e, ast.ListLit):
            return self.collection([self.eval(i, env) for i in e.items], e.span)
        if isinstance(e, ast.DictLit):
            out = {}
            for k, v in e.pairs:
                key = self.eval(k, env)
                if not isinstance(key, ATOM_TYPES):
                    raise RaspError(f"a dict key must be a number, string or bool, not {a_type(key)}",
                                    k.span, "type")
                out[key] = self.eval(v, env)
            return self.collection(out, e.span)
        if isinstance(e, (ast.ListComp, ast.DictComp)):
            return self.comprehension(e, env)
        raise RaspError(f"unsupported expression {type(e).__name__}", e.span, "syntax")  # pragma: no cover

    def lookup(self, e: ast.Name, env: Env):
        try:
            value = env.lookup(e.id)
        except KeyError:
            hint = _closest(e.id, env.names())
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

    def collection(self, value, span: Span):
        if len(value) > self.limits.max_collection:
            raise RaspError(f"a list or dict of {len(value)} elements is over the limit of "
                            f"{self.limits.max_collection}", span, "limit")
        return value

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

    # ---------------------------------------------------------------- graph building

    def add(self, node, span: Span):
        if span is not None and span.source != "<program>" and self.call_sites:
            node.origin = self.call_sites[-1]
        try:
            return self.graph.add(node)
        except RaspError as e:
            raise e.located(node.origin or span)

    def as_sop(self, value, span: Span, what: str) -> SOp:
        if isinstance(value, SOp):
            return value
        if isinstance(value, ATOM_TYPES):
            elementwise.as_array(value)  # range check
            return self.add(Full(value, span=span), span)
        raise RaspError(f"{what} must be an s-op or a number, string or bool, not {a_type(value)}",
                        span, "type")

    def elementwise(self, op: str, operands: list, span: Span, consts_ok: tuple = ()):
        """An elementwise op on operands; consts_ok lists operand positions that may be containers."""
        template, inputs = [], []
        for i, v in enumerate(operands):
            if isinstance(v, SOp):
                template.append(("arg", len(inputs)))
                inputs.append(v)
            elif isinstance(v, Selector):
                raise RaspError(f"a selector cannot be an operand of {_op_word(op)}; "
                                "use it in aggregate or selector_width", span, "type")
            elif isinstance(v, ATOM_TYPES) or (i in consts_ok and isinstance(v, (list, dict, str))):
                if i in consts_ok and isinstance(v, (list, dict)):
                    for x in (v.keys() if isinstance(v, dict) else v):
                        _check_atom_like(x, span, "elements of the container")
                    if isinstance(v, dict):
                        for x in v.values():
                            _check_atom_like(x, span, "values of the dict")
                else:
                    elementwise.as_array(v)
                template.append(("const", v))
            else:
                raise RaspError(f"{_op_word(op)} cannot take {a_type(v)} together with an s-op", span, "type")
        cls = Map if len(inputs) == 1 else SequenceMap
        return self.add(cls(op, tuple(template), tuple(inputs), span=span), span)

    def apply_to_input(self, node, args, spans, e: ast.Call):
        """`sop("hello")`, `sel([1, 2])`: the value on that input, as in the original REPL (a list
        for an s-op, a matrix of bools, rows = queries, for a selector)."""
        from .evaluate import row_values, run_graph  # evaluate imports this module
        from .inputs import parse_input

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

    def binop(self, op: str, a, b, span: Span):
        if op in ("and", "or") and (isinstance(a, Selector) or isinstance(b, Selector)):
            if not (isinstance(a, Selector) and isinstance(b, Selector)):
                other = b if isinstance(a, Selector) else a
                raise RaspError(f"'{op}' combines two selectors, or two s-ops/values; "
                                f"here a selector meets {a_type(other)}", span, "type")
            cls = SelectAnd if op == "and" else SelectOr
            return self.add(cls(a, b, span=span), span)
        if isinstance(a, SOp) or isinstance(b, SOp) or isinstance(a, Selector) or isinstance(b, Selector):
            if op in ("and", "or") and not (_static_type(a) == _static_type(b) == "bool") \
                    and (op, span) not in self.warned:
                self.warned.add((op, span))
                self.diagnostics.append(diagnostic(
                    f"'{op}' with an s-op gives bools, as in the original RASP: each side counts as true or "
                    f"false (Python truthiness) and the result is {'both' if op == 'and' else 'either'}, "
                    f"not one of the operands as in Python", span, "warning", "semantics"))
            sop, other = (a, b) if isinstance(a, SOp) else (b, a)
            if op in ("==", "!=") and isinstance(sop, SOp) and isinstance(other, (list, tuple, dict)):
                # no token equals a list or dict: all False (all True for !=), as Python (and the original) says
                never = self.elementwise("in", [sop, []], span, consts_ok=(1,))
                return never if op == "==" else self.elementwise("not", [never], span)
            return self.elementwise(op, [a, b], span)
        return atom_binop(op, a, b, span, self.limits)

    def unop(self, op: str, a, span: Span):
        if isinstance(a, Selector):
            if op == "not":
                return self.add(SelectNot(a, span=span), span)
            raise RaspError(f"unary '{op}' cannot apply to a selector", span, "type")
        name = {"not": "not", "-": "neg", "+": "pos"}[op]
        if isinstance(a, SOp):
            return self.elementwise(name, [a], span)
        if op == "not":
            return not a
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            if isinstance(a, bool):
                return -int(a) if op == "-" else int(a)
            raise RaspError(f"unary '{op}' needs a number, not {a_type(a)}", span, "type")
        return -a if op == "-" else +a

    def index(self, target, idx, e: ast.Index):
        span = e.span
        if isinstance(target, Selector) or isinstance(idx, Selector):
            raise RaspError("selectors cannot be indexed or used as an index", span, "type")
        if isinstance(target, SOp):
            # sop[i]: the value at position i, for every position (an aggregate)
            if not isinstance(idx, (int, SOp)):
                raise RaspError(f"an s-op is indexed by an int or an s-op of positions, not {a_type(idx)}",
                                e.index.span, "type")
            if isinstance(idx, bool):
                idx = int(idx)  # True is position 1, as in Python and the original
            indices = self.graph.add(IndicesInput(label="indices"))
            if isinstance(idx, int) and idx < 0:
                # sop[-1]: counted from the end, as in the original (position length - 1)
                where = self.elementwise("+", [self.library.vars["length"], idx], e.index.span)
            else:
                where = self.as_sop(idx, e.index.span, "the index")
            sel = self.add(Select(indices, where, "==", span=span), span)
            return self.add(Aggregate(sel, target, 0, span=span), span)
        if isinstance(idx, SOp):
            if not isinstance(target, (list, dict, str)):
                raise RaspError(f"{a_type(target)} cannot be indexed", e.target.span, "type")
            return self.elementwise("getitem", [target, idx], span, consts_ok=(0,))
        return atom_index(target, idx, e)

    def contains(self, item, container, e: ast.Contains):
        span = e.span
        if isinstance(item, Selector) or isinstance(container, Selector):
            raise RaspError("'in' cannot take a selector", span, "type")
        if isinstance(container, SOp):
            # x in sop: is x among the s-op's values? One head: select where they are equal.
            query = self.as_sop(item, e.item.span, "the left side of 'in'")
            sel = self.add(Select(container, query, "==", span=span), span)
            one = self.add(Full(1, span=span), span)
            found = self.add(Aggregate(sel, one, 0, span=span), span)
            return self.elementwise(">", [found, 0], span)
        if not isinstance(container, (list, dict, str, tuple)):
            raise RaspError(f"'in' needs a list, dict, string or s-op on its right, not {a_type(container)}",
                            e.container.span, "type")
        if isinstance(item, SOp):
            return self.elementwise("in", [item, list(container) if isinstance(container, tuple) else container],
                                    span, consts_ok=(1,))
        try:
            return item in container
        except TypeError:
            raise RaspError(f"cannot test whether {a_type(item)} is in {a_type(container)}",
                            span, "type") from None

    # ---------------------------------------------------------------- calls

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


# ------------------------------------------------------------------ atom operations (Python semantics)

_ATOM_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "%": operator.mod,
             "^": operator.pow, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
             "<=": operator.le, ">=": operator.ge}
_SEQUENCES = (str, list, tuple)


def atom_binop(op: str, a, b, span: Span, limits: Limits):
    """`a op b` on Python-level values, with Python's semantics and located, bounded errors."""
    if op == "and":
        return a and b
    if op == "or":
        return a or b
    if isinstance(a, (Function, Builtin)) or isinstance(b, (Function, Builtin)):
        raise RaspError(f"a function cannot be an operand of {_op_word(op)}", span, "type")
    if op == "^" and isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a) > 1 and b > 0:
        if b * math.log2(abs(a)) > 4096:
            raise RaspError(f"{a} ^ {b} is too large", span, "limit")
    if op == "*" and (isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES)):
        n, seq = (b, a) if isinstance(a, _SEQUENCES) else (a, b)
        if isinstance(n, int) and isinstance(seq, _SEQUENCES) and n * len(seq) > limits.max_collection:
            raise RaspError("a repeated list or string over the size limit", span, "limit")
    if op in ("+", "-", "*") and isinstance(a, int) and isinstance(b, int) and max(abs(a), abs(b)).bit_length() > 4096:
        raise RaspError("the number is too large", span, "limit")
    try:
        result = _ATOM_OPS[op](a, b)
    except ZeroDivisionError:
        raise RaspError("division by zero", span, "value") from None
    except TypeError:
        raise RaspError(f"cannot {_op_word(op)} {type_name(a)} and {type_name(b)}", span, "type") from None
    except OverflowError:
        raise RaspError("the number is too large", span, "value") from None
    if isinstance(result, complex):
        raise RaspError("a negative number to a fractional power is not a real number", span, "value")
    if isinstance(result, (list, str)) and len(result) > limits.max_collection:
        raise RaspError("a list or string over the size limit", span, "limit")
    return result


def atom_index(target, idx, e: ast.Index):
    if isinstance(target, dict):
        if not isinstance(idx, ATOM_TYPES):
            raise RaspError(f"a dict key must be a number, string or bool, not {a_type(idx)}", e.index.span, "type")
        if idx not in target:
            raise RaspError(f"no key {idx!r} in the dict", e.index.span, "value")
        return target[idx]
    if isinstance(target, (list, tuple, str)):
        if not isinstance(idx, int):  # bools index as 0 and 1, as in Python
            raise RaspError(f"{a_type(target)} is indexed by an int, not {a_type(idx)}", e.index.span, "type")
        if not -len(target) <= idx < len(target):
            raise RaspError(f"index {idx} is out of range for {a_type(target)} of length {len(target)}",
                            e.index.span, "value")
        return target[idx]
    raise RaspError(f"{a_type(target)} cannot be indexed", e.target.span, "type")


_BOOL_OPS = {"==", "!=", "<", ">", "<=", ">=", "and", "or", "not", "in", "to_bool"}
_INT_OPS = {"round", "indicator", "to_int"}


def _static_type(value, depth: int = 0) -> str | None:
    """The RASP type of a value or s-op when it is known before any input (None when it is not)."""
    if depth > 40:
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, ATOM_TYPES):
        return type(value).__name__
    if isinstance(value, Full):
        return _static_type(value.value)
    if isinstance(value, (IndicesInput, SelectorWidth)):
        return "int"
    if isinstance(value, (Map, SequenceMap)):
        if value.op == "if":
            then, _, orelse = value.operands(list(value.inputs))
            kind = _static_type(then, depth + 1)
            return kind if kind == _static_type(orelse, depth + 1) else None
        return "bool" if value.op in _BOOL_OPS else "int" if value.op in _INT_OPS else None
    if isinstance(value, Aggregate):
        return _static_type(value.sop, depth + 1)
    return None


def _source_text(e: ast.Expr, sources: dict) -> str:
    text = " ".join(e.span.text(sources.get(e.span.source, "")).split())
    return text if len(text) <= 60 else text[:57] + "…"


def _show_value(value) -> str:
    text = repr(value) if not isinstance(value, tuple) else ", ".join(map(repr, value))
    return text if len(text) <= 200 else text[:197] + "…"


def _check_atom_like(value, span: Span, what: str):
    if not isinstance(value, ATOM_TYPES):
        raise RaspError(f"{what} must be numbers, strings or bools, not {a_type(value)}", span, "type")


_OP_WORDS = {"+": "'+'", "-": "'-'", "*": "'*'", "/": "'/'", "%": "'%'", "^": "'^'", "and": "'and'",
             "or": "'or'", "if": "if/else", "in": "'in'", "getitem": "indexing", "neg": "unary '-'",
             "pos": "unary '+'", "not": "'not'", "round": "round", "indicator": "indicator"}


def _op_word(op: str) -> str:
    return _OP_WORDS.get(op, f"'{op}'")


def _defined_names(stmt: ast.Stmt) -> list[str]:
    if isinstance(stmt, ast.Assign):
        return stmt.names
    if isinstance(stmt, ast.FuncDef):
        return [stmt.name]
    if isinstance(stmt, ast.ForLoop):
        names = list(stmt.names)
        for s in stmt.body:
            names += _defined_names(s)
        return names
    return []


class DefinitionList(list):
    """The program's definitions in order, with the set of their names (a name defined again is found
    without scanning a long program's list)."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()


def _replace_definition(definitions: list[Definition], d: Definition):
    if d.name in getattr(definitions, "names", (d.name,)):
        for i, old in enumerate(definitions):
            if old.name == d.name:
                del definitions[i]
                break
    definitions.append(d)
    if isinstance(definitions, DefinitionList):
        definitions.names.add(d.name)


def _closest(name: str, candidates) -> str | None:
    import difflib
    found = difflib.get_close_matches(name, sorted(candidates), n=1, cutoff=0.75)
    return found[0] if found else None


# ------------------------------------------------------------------ builtins

def _arity(name: str, args: list, low: int, high: int, span: Span):
    if not low <= len(args) <= high:
        want = str(low) if low == high else f"{low} to {high}"
        raise RaspError(f"{name} takes {want} arguments, given {len(args)}", span, "type")


def _b_aggregate(interp: Interpreter, args, spans, span):
    _arity("aggregate", args, 2, 3, span)
    sel, values = args[0], args[1]
    default = args[2] if len(args) == 3 else 0
    if not isinstance(sel, Selector):
        raise RaspError(f"the first argument of aggregate must be a selector, not {a_type(sel)}",
                        spans[0], "type")
    sop = interp.as_sop(values, spans[1], "the second argument of aggregate")
    if isinstance(default, (SOp, Selector, Function, Builtin)):
        raise RaspError(f"the default of aggregate must be a value, not {a_type(default)}", spans[2], "type")
    if isinstance(default, ATOM_TYPES):
        elementwise.as_array(default)
    else:  # a list or dict: the original accepts it; an input where some query selects nothing fails
        default = _frozen(default)
    return interp.add(Aggregate(sel, sop, default, span=span), span)


def _frozen(value):
    """A list or dict default, as a hashable value (graph nodes are interned by their fields)."""
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _b_selector_width(interp: Interpreter, args, spans, span):
    _arity("selector_width", args, 1, 1, span)
    if not isinstance(args[0], Selector):
        raise RaspError(f"selector_width needs a selector, not {a_type(args[0])}", spans[0], "type")
    return interp.add(SelectorWidth(args[0], span=span), span)


def _unary_builtin(name: str):
    def fn(interp: Interpreter, args, spans, span):
        _arity(name, args, 1, 1, span)
        x = args[0]
        if isinstance(x, SOp):
            return interp.elementwise(name, [x], span)
        if isinstance(x, bool):
            x = int(x)
        if name == "indicator":
            if not isinstance(x, ATOM_TYPES):
                raise RaspError(f"indicator needs an s-op or a value, not {a_type(x)}", spans[0], "type")
            return 1 if x else 0
        if not isinstance(x, (int, float)):
            raise RaspError(f"round needs a number or an s-op, not {a_type(x)}", spans[0], "type")
        try:
            return round(x)
        except (OverflowError, ValueError):
            raise RaspError(f"cannot round {x}", spans[0], "value") from None
    return fn


def _b_range(interp: Interpreter, args, spans, span):
    _arity("range", args, 1, 3, span)
    for a, s in zip(args, spans):
        if isinstance(a, bool) or not isinstance(a, int):
            raise RaspError(f"range takes ints, not {a_type(a)}", s, "type")
    try:
        r = range(*args)
    except ValueError:
        raise RaspError("range's step cannot be 0", span, "value") from None
    if len(r) > interp.limits.max_collection:
        raise RaspError(f"range of {len(r)} elements is over the limit of {interp.limits.max_collection}",
                        span, "limit")
    return list(r)


def _b_zip(interp: Interpreter, args, spans, span):
    for a, s in zip(args, spans):
        if not isinstance(a, (list, tuple, str)):
            raise RaspError(f"zip takes lists, not {a_type(a)}", s, "type")
    return [list(t) for t in zip(*args)]


def _b_len(interp: Interpreter, args, spans, span):
    _arity("len", args, 1, 1, span)
    x = args[0]
    if isinstance(x, SOp):
        raise RaspError("len takes a list; the length of the input is the s-op 'length'", spans[0], "type")
    if not isinstance(x, (list, tuple, dict, str)):
        raise RaspError(f"len takes a list, dict or string, not {a_type(x)}", spans[0], "type")
    return len(x)


BUILTINS: dict[str, Callable] = {
    "aggregate": _b_aggregate,
    "selector_width": _b_selector_width,
    "round": _unary_builtin("round"),
    "indicator": _unary_builtin("indicator"),
    "range": _b_range,
    "zip": _b_zip,
    "len": _b_len,
}


@functools.lru_cache(maxsize=16)
def parse_program(source: str) -> ast.Program:
    """The parsed program (interpretation never changes an AST, so parses can be shared)."""
    return parse(source)


def warm() -> None:
    """Build the parser and parse the library now, once per process, outside any time limit."""
    _library_program()


@functools.lru_cache(maxsize=1)
def _library_program() -> ast.Program:
    program = parse(resources.files(LIBRARY_RESOURCE[0]).joinpath(LIBRARY_RESOURCE[1]).read_text(encoding="utf-8"),
                    "<library>")
    if program.syntax_errors:
        raise RuntimeError(f"library.rasp: {program.syntax_errors[0]}")
    return program


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
