"""RASP source text -> AST (engine.lang.ast), with spans on every node and located syntax errors.

The grammar lives in grammar.lark. Parsing recovers from the commonest slip, a missing ';' at
the end of a line, and from other errors by setting the broken statement aside, so that one typo
does not hide the rest of the program: every syntax error is reported, the rest is evaluated.
"""
from __future__ import annotations

import functools
import re
from importlib import resources

from lark import Lark, Token, Transformer_NonRecursive, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from . import ast
from .errors import RaspError, Span, describe_terminal, describe_token, expected_phrase

GRAMMAR_RESOURCE = ("rasplay.engine.lang", "grammar.lark")
MAX_RECOVERIES = 20


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(resources.files(GRAMMAR_RESOURCE[0]).joinpath(GRAMMAR_RESOURCE[1]).read_text(encoding="utf-8"), parser="lalr", propagate_positions=True, maybe_placeholders=True)


def parse(source: str, source_name: str = "<program>") -> ast.Program:
    """Parse RASP source. Syntax errors are collected on the returned Program (never raised)."""
    errors: list[RaspError] = []
    text = source
    for _ in range(MAX_RECOVERIES):
        try:
            tree = _lark().parse(text, on_error=lambda e: _insert_semicolon(e, text, source_name, errors))
            break
        except UnexpectedInput as e:
            err = _syntax_error(e, text, source_name)
            errors.append(err)
            at_end = isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken) and e.token.type == "$END")
            blanked = None if at_end else _blank_statement(text, _offset(text, err.span))
            if blanked is None:
                return ast.Program([], source, source_name, _dedupe(errors))
            text = blanked
    else:
        return ast.Program([], source, source_name, _dedupe(errors))
    try:
        statements = _ToAst(source_name).transform(tree).children
    except VisitError as e:  # a literal out of range, and the like
        orig = e.orig_exc
        if isinstance(orig, RaspError):
            errors.append(orig)
            return ast.Program([], source, source_name, _dedupe(errors))
        raise
    return ast.Program(statements, source, source_name, _dedupe(errors))


# ------------------------------------------------------------------ syntax errors

def _insert_semicolon(e: UnexpectedInput, text: str, source_name: str, errors: list) -> bool:
    """On a token that starts a new line where ';' was possible, report the ';' and go on."""
    if not isinstance(e, UnexpectedToken) or e.token.type == "$END":
        return False
    if len(errors) >= MAX_RECOVERIES or "SEMICOLON" not in e.interactive_parser.accepts():
        return False
    start = e.token.start_pos
    before = text[:start].rstrip()
    if not before or "\n" not in text[len(before):start]:
        return False
    line = before.count("\n") + 1
    col = len(before) - (before.rfind("\n") + 1) + 1
    span = Span(line, col, line, col + 1, source_name)
    errors.append(RaspError(f"missing ';' at the end of line {line}", span, "syntax"))
    e.interactive_parser.feed_token(Token.new_borrow_pos("SEMICOLON", ";", e.token))
    e.interactive_parser.feed_token(e.token)
    return True


def _syntax_error(e: UnexpectedInput, text: str, source_name: str) -> RaspError:
    line, col = e.line, e.column
    if isinstance(e, UnexpectedCharacters):
        char = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        if char in "\"'":
            msg = "unterminated string: a string must close on the line where it opens"
        else:
            msg = f"unexpected character {char!r}"
        return RaspError(msg, Span(line, col, line, col + 1, source_name), "syntax")
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        tok = e.token
        expected = [describe_terminal(t, _pattern(t)) for t in e.interactive_parser.accepts() if t != "$END"]
        msg = f"unexpected {describe_token(str(tok), tok.type)}"
        if expected:
            msg += f"; {expected_phrase(_summarise(expected))}"
        end_col = (tok.end_column or col + 1) if tok.end_line == tok.line else col + 1
        return RaspError(msg, Span(tok.line, tok.column, tok.line, end_col, source_name), "syntax")
    # end of input
    stripped = text.rstrip()
    line = stripped.count("\n") + 1
    col = len(stripped) - (stripped.rfind("\n") + 1) + 1
    expected = []
    if isinstance(e, (UnexpectedToken, UnexpectedEOF)):
        accepts = e.interactive_parser.accepts() if getattr(e, "interactive_parser", None) else e.expected
        expected = [describe_terminal(t, _pattern(t)) for t in accepts if t != "$END"]
    msg = "the program ends too early"
    if expected:
        msg += f": {expected_phrase(_summarise(expected))}"
    return RaspError(msg, Span(line, max(col - 1, 1), line, max(col, 2), source_name), "syntax")


_EXPRESSION_STARTS = {"a name", "a number", "a string", "'('", "'['", "'{'", "'not'", "'-'", "'+'", "'select'"}


def _summarise(expected: list[str]) -> list[str]:
    """Fold the many tokens that can start an expression into 'an expression'."""
    items = set(expected)
    if len(items & _EXPRESSION_STARTS) >= 5:
        items = (items - _EXPRESSION_STARTS) | {"an expression"}
    return sorted(items)


def _pattern(terminal: str) -> str | None:
    try:
        return _lark().get_terminal(terminal).pattern.value
    except (KeyError, AttributeError):
        return None


def _offset(text: str, span: Span | None) -> int:
    if span is None:
        return len(text)
    lines = text.split("\n")
    return sum(len(l) + 1 for l in lines[:span.line - 1]) + span.col - 1


_STATEMENT_END = re.compile(r";")


def _blank_statement(text: str, offset: int) -> str | None:
    """Replace the statement around `offset` with spaces (keeping newlines, so spans stay true).

    The statement runs from after the previous ';', '{' or '}' to the next ';'. Returns None when
    that region holds a brace or nothing can be blanked (recovery would only add noise).
    """
    start = max(text.rfind(";", 0, offset), text.rfind("{", 0, offset), text.rfind("}", 0, offset)) + 1
    m = _STATEMENT_END.search(text, offset)
    end = m.end() if m else len(text)
    region = text[start:end]
    if not region.strip() or "{" in region or "}" in region:
        return None
    return text[:start] + re.sub(r"[^\n]", " ", region) + text[end:]


def _dedupe(errors: list[RaspError]) -> list[RaspError]:
    seen, out = set(), []
    for e in errors:
        key = (e.message, e.span)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


# ------------------------------------------------------------------ tree -> AST

def _unquote(s: str) -> str:
    return s[1:-1]


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    def __init__(self, source_name: str):
        super().__init__()
        self.source_name = source_name

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", False):
            return Span(1, 1, 1, 1, self.source_name)
        return Span(meta.line, meta.column, meta.end_line, meta.end_column, self.source_name)

    # statements
    def start(self, meta, items):
        from lark import Tree
        return Tree("start", [s for s in items if s is not None])

    def assign(self, meta, items):
        names, values = items
        return ast.Assign(self._span(meta), names, values)

    def expr_stmt(self, meta, items):
        return ast.ExprStmt(self._span(meta), items[0])

    def load(self, meta, items):
        return ast.Load(self._span(meta), _unquote(str(items[0])))

    def draw(self, meta, items):
        return ast.Draw(self._span(meta), items[0], items[1] if len(items) > 1 else None)

    def funcdef(self, meta, items):
        name, params, *body, ret = items
        return ast.FuncDef(self._span(meta), str(name), params or [], [s for s in body if s is not None], ret)

    def return_stmt(self, meta, items):
        return items[0]

    def forloop(self, meta, items):
        names, iterable, *body = items
        return ast.ForLoop(self._span(meta), names, iterable, [s for s in body if s is not None])

    def set_example(self, meta, items):
        return ast.SetExample(self._span(meta), items[1])

    def repl_noop(self, meta, items):
        return ast.ReplNoop(self._span(meta), " ".join(str(items[0]).split()))

    def empty_stmt(self, meta, items):
        return None

    def name_list(self, meta, items):
        return [str(t) for t in items]

    def expr_list(self, meta, items):
        return list(items)

    # expressions
    def var(self, meta, items):
        return ast.Name(self._span(meta), str(items[0]))

    def int_lit(self, meta, items):
        return ast.Literal(self._span(meta), int(items[0]))

    def float_lit(self, meta, items):
        value = float(items[0])
        if value != value or value in (float("inf"), float("-inf")):
            raise RaspError(f"number {items[0]} is too large", self._span(meta), "syntax")
        return ast.Literal(self._span(meta), value)

    def string_lit(self, meta, items):
        return ast.Literal(self._span(meta), _unquote(str(items[0])))

    def list_lit(self, meta, items):
        return ast.ListLit(self._span(meta), items[0] or [])

    def dict_lit(self, meta, items):
        return ast.DictLit(self._span(meta), [p for p in items if p is not None])

    def pair(self, meta, items):
        return (items[0], items[1])

    def list_comp(self, meta, items):
        element, names, iterable = items
        return ast.ListComp(self._span(meta), element, names, iterable)

    def dict_comp(self, meta, items):
        key, value, names, iterable = items
        return ast.DictComp(self._span(meta), key, value, names, iterable)

    def select(self, meta, items):
        keys, queries, op = items
        return ast.Select(self._span(meta), keys, queries, op)

    def call(self, meta, items):
        return ast.Call(self._span(meta), items[0], items[1] or [])

    def index(self, meta, items):
        return ast.Index(self._span(meta), items[0], items[1])

    def binop(self, meta, items):
        left, op, right = items
        return ast.BinOp(self._span(meta), op, left, right)

    def logic(self, meta, items):
        left, op, right = items
        return ast.BinOp(self._span(meta), op, left, right)

    def unop(self, meta, items):
        op, operand = items
        return ast.UnOp(self._span(meta), op, operand)

    def ifelse(self, meta, items):
        then, cond, orelse = items
        return ast.IfElse(self._span(meta), then, cond, orelse)

    def contains(self, meta, items):
        return ast.Contains(self._span(meta), items[0], items[1])

    # operator rules (kept tokens) become plain strings
    def _op(self, meta, items):
        return str(items[0])

    cmp_op = add_op = mod_op = mul_op = pow_op = logic_op = unary_op = _op
