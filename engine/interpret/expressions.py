"""Expressions: evaluating each expression kind, to a Python-level value or to a new s-op or selector
node (operators, if/else, select, indexing, `in`, list and dict literals), and building those nodes in the
graph (`NodesMixin`: located at the user's call site when built inside the library; atoms as constant s-ops;
elementwise operations)."""
from __future__ import annotations

from .. import elementwise
from ..lang import ast
from ..lang.errors import RaspError, Span, diagnostic
from ..program import (Aggregate, Full, IndicesInput, Map, Select, SelectAnd, SelectClosest, SelectNot, SelectOr,
                       Selector, SequenceMap, SOp)
from .atoms import ATOM_TYPES, a_type, atom_binop, atom_index, check_atom_like, op_word, static_type
from .scope import Env


class ExpressionsMixin:
    """The Interpreter's expressions (see interpreter.py)."""

    def select_closest(self, e: ast.SelectClosest, env: Env):
        """`select_closest(sel)` or `select_closest(keys, queries, op)` (a rasplay extension, docs/language.md)."""
        if e.queries is None:
            inner = self.eval(e.first, env)
            if not isinstance(inner, Selector):
                raise RaspError(f"select_closest takes a selector, or keys, queries and a comparison; "
                                f"given {a_type(inner)}", e.first.span, "type")
        else:
            keys = self.as_sop(self.eval(e.first, env), e.first.span, "the keys of select_closest")
            queries = self.as_sop(self.eval(e.queries, env), e.queries.span, "the queries of select_closest")
            inner = self.add(Select(keys, queries, e.op, span=e.span), e.span)
        return self.add(SelectClosest(inner, span=e.span), e.span)

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
                    check_atom_like(cond, e.cond.span, "the condition of if/else")
                return self.eval(e.then if cond else e.orelse, env)  # Python truthiness, as the original
            then, orelse = self.eval(e.then, env), self.eval(e.orelse, env)
            return self.elementwise("if", [then, cond, orelse], e.span)
        if isinstance(e, ast.Select):
            keys = self.as_sop(self.eval(e.keys, env), e.keys.span, "the keys of select")
            queries = self.as_sop(self.eval(e.queries, env), e.queries.span, "the queries of select")
            return self.add(Select(keys, queries, e.op, span=e.span), e.span)
        if isinstance(e, ast.SelectClosest):
            return self.select_closest(e, env)
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

    def collection(self, value, span: Span):
        if len(value) > self.limits.max_collection:
            raise RaspError(f"a list or dict of {len(value)} elements is over the limit of "
                            f"{self.limits.max_collection}", span, "limit")
        return value

    def binop(self, op: str, a, b, span: Span):
        if op in ("and", "or") and (isinstance(a, Selector) or isinstance(b, Selector)):
            if not (isinstance(a, Selector) and isinstance(b, Selector)):
                other = b if isinstance(a, Selector) else a
                raise RaspError(f"'{op}' combines two selectors, or two s-ops/values; "
                                f"here a selector meets {a_type(other)}", span, "type")
            cls = SelectAnd if op == "and" else SelectOr
            return self.add(cls(a, b, span=span), span)
        if isinstance(a, SOp) or isinstance(b, SOp) or isinstance(a, Selector) or isinstance(b, Selector):
            if op in ("and", "or") and not (static_type(a) == static_type(b) == "bool") \
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


class NodesMixin:
    """The Interpreter's graph building (see interpreter.py)."""

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
                raise RaspError(f"a selector cannot be an operand of {op_word(op)}; "
                                "use it in aggregate or selector_width", span, "type")
            elif isinstance(v, ATOM_TYPES) or (i in consts_ok and isinstance(v, (list, dict, str))):
                if i in consts_ok and isinstance(v, (list, dict)):
                    for x in (v.keys() if isinstance(v, dict) else v):
                        check_atom_like(x, span, "elements of the container")
                    if isinstance(v, dict):
                        for x in v.values():
                            check_atom_like(x, span, "values of the dict")
                else:
                    elementwise.as_array(v)
                template.append(("const", v))
            else:
                raise RaspError(f"{op_word(op)} cannot take {a_type(v)} together with an s-op", span, "type")
        cls = Map if len(inputs) == 1 else SequenceMap
        return self.add(cls(op, tuple(template), tuple(inputs), span=span), span)
