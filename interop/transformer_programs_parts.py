"""The pieces of TransformerPrograms' decompiled Python that interop/transformer_programs.py reads, parsed
with the `ast` module (their code is never run): predicates, lookup tables (MLPs), the helper functions'
causal form, score lines, and the weights CSV. Every error names the line and column."""
from __future__ import annotations

import ast
import csv
import io

from ..engine.learned.ir import LearnedProgramError


class TransformerProgramError(LearnedProgramError):
    """A part of the program outside the format the translator reads (with its line and column)."""

    def __init__(self, message: str, node: ast.AST | None = None):
        where = f"line {node.lineno}, column {node.col_offset + 1}: " if node is not None and hasattr(
            node, "lineno") else ""
        super().__init__(where + message)


def literal(node: ast.AST):
    """A literal (number, string, set, tuple) read with ast.literal_eval (no code runs)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        raise TransformerProgramError("expected a literal value here", node) from None


def name_of(node: ast.AST, what: str) -> str:
    if not isinstance(node, ast.Name):
        raise TransformerProgramError(f"expected {what} (a name) here", node)
    return node.id


def _params(fn: ast.FunctionDef, count: tuple) -> list[str]:
    names = [a.arg for a in fn.args.args]
    if len(names) not in count or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs or fn.args.defaults:
        raise TransformerProgramError(f"{fn.name} should take {' or '.join(map(str, count))} plain arguments", fn)
    return names


def _if_chain(stmt: ast.AST):
    """The `if ...: return ...` / `elif ...` cases of a chain, as (test, return value node) pairs."""
    cases = []
    while True:
        if not isinstance(stmt, ast.If) or len(stmt.body) != 1 or not isinstance(stmt.body[0], ast.Return):
            raise TransformerProgramError("expected `if ... in {...}: return ...`", stmt)
        cases.append((stmt.test, stmt.body[0].value))
        if not stmt.orelse:
            return cases
        if len(stmt.orelse) != 1:
            raise TransformerProgramError("expected `elif ...: return ...`", stmt.orelse[0])
        stmt = stmt.orelse[0]


def _membership(test: ast.AST, subject: str) -> list:
    """The values of `subject in {v1, v2, ...}`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In)
            and isinstance(test.left, ast.Name) and test.left.id == subject
            and isinstance(test.comparators[0], (ast.Set, ast.List, ast.Tuple))):
        raise TransformerProgramError(f"expected `{subject} in {{...}}`", test)
    return [literal(e) for e in test.comparators[0].elts]


def predicate(fn: ast.FunctionDef) -> dict:
    """`def predicate(q, k): if q in {..}: return k == v elif ...` -> {query value: key value}."""
    q, k = _params(fn, (2,))
    if len(fn.body) != 1:
        raise TransformerProgramError(f"{fn.name} should be one if/elif chain", fn)
    table: dict = {}
    for test, ret in _if_chain(fn.body[0]):
        if not (isinstance(ret, ast.Compare) and len(ret.ops) == 1 and isinstance(ret.ops[0], ast.Eq)
                and isinstance(ret.left, ast.Name) and ret.left.id == k):
            raise TransformerProgramError(f"expected `return {k} == <value>`", ret)
        target = literal(ret.comparators[0])
        for value in _membership(test, q):
            if value in table:
                raise TransformerProgramError(f"the query value {value!r} is listed twice", test)
            table[value] = target
    return table


def table(fn: ast.FunctionDef) -> tuple[list[str], dict, object]:
    """`def mlp(a[, b]): key = a | (a, b); if key in {..}: return v ... return default` ->
    (parameters in key order, {key tuple: output}, default)."""
    params = _params(fn, (1, 2))
    body = fn.body
    if len(body) < 2 or not (isinstance(body[0], ast.Assign) and len(body[0].targets) == 1
                             and isinstance(body[0].targets[0], ast.Name) and body[0].targets[0].id == "key"):
        raise TransformerProgramError(f"{fn.name} should start with `key = ...`", fn)
    key = body[0].value
    order = [name_of(e, "a parameter") for e in key.elts] if isinstance(key, ast.Tuple) else [name_of(key, "a parameter")]
    if sorted(order) != sorted(params):
        raise TransformerProgramError("the key should hold each parameter once", key)
    if not isinstance(body[-1], ast.Return):
        raise TransformerProgramError(f"{fn.name} should end with `return <default>`", body[-1])
    default = literal(body[-1].value)
    rows: dict = {}
    if len(body) == 3:
        for test, ret in _if_chain(body[1]):
            out = literal(ret)
            for value in _membership(test, "key"):
                row = tuple(value) if len(order) == 2 else (value,)
                if len(row) != len(order):
                    raise TransformerProgramError("a key does not have one value per parameter", test)
                rows.setdefault(row, out)
    elif len(body) != 2:
        raise TransformerProgramError(f"{fn.name} should be `key = ...`, one if/elif chain, `return ...`", body[1])
    return order, rows, default


def is_causal(fn: ast.FunctionDef) -> bool:
    """Does a helper (select / select_closest) look only at keys[: i + 1] (the causal form)?"""
    for node in ast.walk(fn):
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "keys"
                and isinstance(node.slice, ast.Slice)):
            up = node.slice.upper
            if (node.slice.lower is None and isinstance(up, ast.BinOp) and isinstance(up.op, ast.Add)
                    and isinstance(up.left, ast.Name) and literal(up.right) == 1):
                return True
            raise TransformerProgramError("a slice of keys other than keys[: i + 1]", node)
    return False


def check_helper(fn: ast.FunctionDef, params: list[str]) -> None:
    if [a.arg for a in fn.args.args] != params:
        raise TransformerProgramError(f"{fn.name} should take ({', '.join(params)})", fn)


def score_line(value: ast.AST) -> tuple[str, str, bool]:
    """`classifier_weights.loc[[(FEATURE, str(v)) for v in VAR]]` (categorical) or the same with
    `("FEATURE", "_")` and `.mul(VAR, axis=0)` (numerical) -> (feature, variable, numerical)."""
    numerical = False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "mul":
        numerical = True
        mul_of = name_of(value.args[0], "the multiplied variable") if value.args else None
        value = value.func.value
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute)
            and value.value.attr == "loc" and isinstance(value.slice, ast.ListComp)):
        raise TransformerProgramError("expected `classifier_weights.loc[[... for v in ...]]`", value)
    comp = value.slice
    if not (isinstance(comp.elt, ast.Tuple) and len(comp.elt.elts) == 2 and len(comp.generators) == 1):
        raise TransformerProgramError("expected `[(feature, ...) for v in ...]`", comp)
    feature = literal(comp.elt.elts[0])
    var = name_of(comp.generators[0].iter, "a variable")
    if numerical and mul_of != var:
        raise TransformerProgramError(f"the scores of {var} are multiplied by {mul_of}", value)
    if numerical != (isinstance(comp.elt.elts[1], ast.Constant) and comp.elt.elts[1].value == "_"):
        raise TransformerProgramError("a numerical score reads the row (feature, \"_\") and multiplies it", comp)
    return feature, var, numerical


def read_weights(csv_text: str) -> tuple[list[str], dict, list[str]]:
    """The weights CSV (feature,value,class...) -> (classes, {(feature, value text): [weights]}, notes).
    A (feature, value) listed more than once is left out (their lookup of it would not give one row)."""
    rows = list(csv.reader(io.StringIO(csv_text)))
    if not rows or rows[0][:2] != ["feature", "value"] or len(rows[0]) < 3:
        raise TransformerProgramError("the weights CSV should start with the header feature,value,<classes>")
    classes = rows[0][2:]
    weights: dict = {}
    seen: dict = {}
    for i, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        if len(row) != len(classes) + 2:
            raise TransformerProgramError(f"the weights CSV's line {i} has {len(row)} fields, not {len(classes) + 2}")
        try:
            w = [float(x) for x in row[2:]]
        except ValueError:
            raise TransformerProgramError(f"the weights CSV's line {i} holds a weight that is not a number") from None
        key = (row[0], row[1])
        seen[key] = seen.get(key, 0) + 1
        weights[key] = w
    twice = sorted(k for k, n in seen.items() if n > 1)
    for k in twice:
        del weights[k]
    notes = [f"the weights list ({f!r}, {v!r}) {seen[(f, v)]} times: left out (looking it up is an error)"
             for f, v in twice]
    return classes, weights, notes
