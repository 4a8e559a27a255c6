"""TransformerPrograms in: the decompiled Python of Friedman, Wettig and Chen's "Learning Transformer
Programs" (princeton-nlp/TransformerPrograms, programs/rasp*/TASK/TASK.py) and its weights CSV, as a
rasplay learned program (engine/learned: the IR, then RASP text). docs/learned_programs.md,
"Learned programs in", describes the format read and what the RASP text computes.

Their Python is parsed with the `ast` module and never run. What is read: the helpers `select_closest`,
`select`, `aggregate`, `aggregate_sum` (their causal form, which looks only at `keys[: i + 1]`, makes
every head causal), and in `run(tokens)`: `positions`, `ones`, the predicates (`if q in {..}: return k
== v` chains), the patterns and aggregates, the `mlp_*` / `num_mlp_*` tables over one or two variables,
the score lines (which features the classifier reads, categorical or numerical) and `pd.concat` (the
order in which the scores are added). Anything else in `run` is an error naming its line and column.
"""
from __future__ import annotations

import ast

from ..engine.learned.ir import (CATEGORICAL, NUMERICAL, Classifier, Head, LearnedProgram, Table,
                                 Variable)
from ..engine.learned.write_rasp import write_rasp
from .transformer_programs_parts import (TransformerProgramError, check_helper, is_causal, name_of, predicate,
                                         read_weights, score_line, table)

HELPERS = {"select_closest": ["keys", "queries", "predicate"], "select": ["keys", "queries", "predicate"],
           "aggregate": ["attention", "values"], "aggregate_sum": ["attention", "values"]}
_IGNORED = {"classifier_weights", "positions", "ones", "logits", "classes", "predictions"}


class _Reader:
    """Walks `run(tokens)` in order, building the steps."""

    def __init__(self, causal: dict, weights: dict, helpers: set):
        self.causal = causal
        self.helpers = helpers
        self.weights = weights
        self.variables: dict = {}
        self.steps: list = []
        self.predicates: dict = {}
        self.tables: dict = {}
        self.table_params: dict = {}
        self.patterns: dict = {}
        self.scores: dict = {}
        self.features: list | None = None

    def declare(self, name: str, kind: str, values=()) -> None:
        self.variables[name] = Variable(name, kind, tuple(values))

    def var(self, node: ast.AST, what: str) -> Variable:
        name = name_of(node, what)
        if name not in self.variables:
            raise TransformerProgramError(f"{name} is used before it is defined", node)
        return self.variables[name]

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef):
            first = stmt.body[0] if stmt.body else None
            if isinstance(first, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "key" for t in first.targets):
                self.tables[stmt.name] = table(stmt)
                self.table_params[stmt.name] = [a.arg for a in stmt.args.args]
            else:
                self.predicates[stmt.name] = (predicate(stmt), stmt)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            self.assign(stmt.targets[0].id, stmt.value, stmt)
        elif isinstance(stmt, ast.If) and "tokens" in ast.unparse(stmt.test):
            return    # `if tokens[0] == "<s>": predictions[0] = "<s>"`: their output at the beginning/end token
        elif isinstance(stmt, ast.Return) or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)):
            return
        else:
            raise TransformerProgramError("a statement the translator does not read", stmt)

    def assign(self, target: str, value: ast.AST, stmt: ast.stmt) -> None:
        call = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None
        if call in HELPERS and call not in self.helpers:
            raise TransformerProgramError(f"{call} is used but the program does not define it", value)
        if target.endswith("_scores"):
            self.scores[target] = score_line(value) + (stmt,)
        elif call in ("select_closest", "select"):
            self.pattern(target, call, value)
        elif call in ("aggregate", "aggregate_sum"):
            self.head(target, call, value)
        elif isinstance(value, ast.ListComp) and isinstance(value.elt, ast.Call):
            self.table_step(target, value)
        elif target == "feature_logits":
            self.feature_order(value)
        elif target not in _IGNORED:
            raise TransformerProgramError(f"an assignment to {target} that the translator does not read", stmt)

    def pattern(self, target: str, call: str, value: ast.Call) -> None:
        if len(value.args) != 3:
            raise TransformerProgramError(f"{call} takes keys, queries and a predicate", value)
        keys, queries = self.var(value.args[0], "keys"), self.var(value.args[1], "queries")
        pred = name_of(value.args[2], "a predicate")
        if pred not in self.predicates:
            raise TransformerProgramError(f"no predicate named {pred} is defined before", value.args[2])
        for v in (keys, queries):
            if v.kind != CATEGORICAL:
                raise TransformerProgramError(f"{v.name} is numerical; a predicate compares categorical values", value)
        self.patterns[target] = (call, keys.name, queries.name, self.predicates[pred][0])

    def head(self, target: str, call: str, value: ast.Call) -> None:
        if len(value.args) != 2:
            raise TransformerProgramError(f"{call} takes a pattern and values", value)
        pat = name_of(value.args[0], "a pattern")
        if pat not in self.patterns:
            raise TransformerProgramError(f"no pattern named {pat} is defined before", value.args[0])
        kind, keys, queries, pred = self.patterns[pat]
        values = self.var(value.args[1], "values")
        closest = kind == "select_closest"
        if call == "aggregate" and not closest:
            raise TransformerProgramError("aggregate of a select (not select_closest): their aggregate takes the "
                                          "first selected value, which no rasplay construct computes", value)
        if call == "aggregate_sum" and values.kind != NUMERICAL and values.name != "ones":
            raise TransformerProgramError(f"aggregate_sum of {values.name}, which is categorical", value)
        self.steps.append(Head(target, queries, keys, values.name, dict(pred), closest,
                               "sum" if call == "aggregate_sum" else "mean", self.causal[kind]))
        if call == "aggregate_sum":
            self.declare(target, NUMERICAL)
        else:
            self.declare(target, values.kind, values.values)

    def table_step(self, target: str, comp: ast.ListComp) -> None:
        fn = name_of(comp.elt.func, "a table function")
        if fn not in self.tables or len(comp.generators) != 1:
            raise TransformerProgramError(f"no table function named {fn} is defined before", comp)
        order, rows, default = self.tables[fn]
        gen = comp.generators[0]
        loop_vars = ([name_of(e, "a loop variable") for e in gen.target.elts] if isinstance(gen.target, ast.Tuple)
                     else [name_of(gen.target, "a loop variable")])
        if isinstance(gen.iter, ast.Call) and isinstance(gen.iter.func, ast.Name) and gen.iter.func.id == "zip":
            sources = [self.var(a, "a variable").name for a in gen.iter.args]
        else:
            sources = [self.var(gen.iter, "a variable").name]
        args = [name_of(a, "a loop variable") for a in comp.elt.args]
        if len(sources) != len(loop_vars) or sorted(args) != sorted(loop_vars) or len(args) != len(order):
            raise TransformerProgramError(f"{target}: the call of {fn} does not match its loop", comp)
        fn_params = self.table_params[fn]
        source_of_param = {fn_params[i]: sources[loop_vars.index(a)] for i, a in enumerate(args)}
        inputs = tuple(source_of_param[p] for p in order)
        self.steps.append(Table(target, inputs, rows, default))
        self.declare(target, CATEGORICAL, sorted({*rows.values(), default}, key=repr))

    def feature_order(self, value: ast.AST) -> None:
        lists = [n for n in ast.walk(value) if isinstance(n, ast.List)]
        if not lists:
            raise TransformerProgramError("expected pd.concat([df.reset_index() for df in [...]])", value)
        self.features = [name_of(e, "a score variable") for e in lists[0].elts]


def _typed(text: str, values: tuple):
    """A CSV value's text as the variable's value (an int where the variable holds ints), or None when the
    variable can never hold it."""
    if values and all(isinstance(v, int) for v in values):
        try:
            return int(text)
        except ValueError:
            return None
    return text


def _classifier(reader: _Reader, classes: list[str], weights: dict, notes: list[str], node) -> Classifier:
    if reader.features is None:
        raise TransformerProgramError("run() has no `feature_logits = pd.concat(...)`: which scores add up", node)
    features, categorical, numerical = [], {}, {}
    for score in reader.features:
        if score not in reader.scores:
            raise TransformerProgramError(f"pd.concat lists {score}, which is not a score line", node)
        feature, var, is_numerical, stmt = reader.scores[score]
        if var not in reader.variables:
            raise TransformerProgramError(f"{score} reads {var}, which is not defined", stmt)
        if is_numerical:
            if (feature, "_") not in weights:
                raise TransformerProgramError(f"the weights CSV has no row ({feature!r}, '_') for {score}", stmt)
            numerical[var] = tuple(weights[(feature, "_")])
        else:
            values = reader.variables[var].values
            table = {}
            for (f, text), w in weights.items():
                v = _typed(text, values) if f == feature else None
                if v is not None:
                    table[v] = tuple(w)
            categorical[var] = table
        features.append(var)
    typed = [int(c) for c in classes] if all(c.lstrip("-").isdigit() for c in classes) else list(classes)
    return Classifier(tuple(typed), tuple(features), categorical, numerical, tuple(notes))


def _helpers(tree: ast.Module) -> tuple[ast.FunctionDef, dict, set]:
    defs = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            if stmt.name != "run" and stmt.name not in HELPERS:
                raise TransformerProgramError(f"a function {stmt.name} outside their format", stmt)
            defs[stmt.name] = stmt
        elif not isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Assign, ast.For, ast.Expr)):
            raise TransformerProgramError("a statement outside their format", stmt)
    if "run" not in defs:
        raise TransformerProgramError("the program defines no run(tokens)")
    for name, fn in defs.items():
        if name in HELPERS:
            check_helper(fn, HELPERS[name])
    run = defs["run"]
    if [a.arg for a in run.args.args] != ["tokens"]:
        raise TransformerProgramError("run should take (tokens)", run)
    return run, {name: name in defs and is_causal(defs[name]) for name in ("select_closest", "select")}, set(defs)


def transformer_program_ir(py_text: str, csv_text: str, *, title: str = "") -> LearnedProgram:
    """Their decompiled Python and weights CSV as a LearnedProgram (TransformerProgramError: what and where)."""
    try:
        tree = ast.parse(py_text)
    except SyntaxError as e:
        raise TransformerProgramError(f"line {e.lineno}, column {e.offset}: not Python: {e.msg}") from None
    run, causal, defined = _helpers(tree)
    classes, weights, notes = read_weights(csv_text)
    reader = _Reader(causal, weights, defined)
    tokens = sorted({v for (f, v) in weights if f == "tokens"})
    positions = sorted({int(v) for (f, v) in weights if f == "positions" and v.isdigit()})
    if not tokens or not positions:
        raise TransformerProgramError("the weights CSV has no rows for tokens or for positions")
    reader.declare("tokens", CATEGORICAL, tokens)
    reader.declare("positions", CATEGORICAL, positions)
    reader.declare("ones", NUMERICAL)
    for stmt in run.body:
        reader.statement(stmt)
    classifier = _classifier(reader, classes, weights, notes, run)
    used = {s.name for s in reader.steps} | {"tokens", "positions", "ones"}
    variables = {k: v for k, v in reader.variables.items() if k in used}
    return LearnedProgram(variables, reader.steps, classifier, bos="<s>",
                          eos="</s>" if "</s>" in tokens else None, origin="transformer-programs", title=title,
                          description="Translated from TransformerPrograms' decompiled Python and weights "
                                      "(Friedman, Wettig and Chen 2023) by rasplay.").validate()


def import_transformer_program(py_text: str, csv_text: str, *, title: str = "") -> str:
    """Their decompiled Python (text) and weights CSV (text) -> rasplay RASP source (see the module)."""
    return write_rasp(transformer_program_ir(py_text, csv_text, title=title))
