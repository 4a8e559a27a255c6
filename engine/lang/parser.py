"""RASP source text -> AST (engine.lang.ast), with spans on every node and located syntax errors.

The grammar lives in grammar.lark. Parsing never raises for program text. It recovers from the
commonest slip, a missing ';' at the end of a line, in place. Any other syntax error sets the
broken statement aside and parses the rest, as the original REPL (which reads a statement at a
time) does: the program is cut into statements (a ';' outside braces, or a `def`/`for` block
with its closing brace), each is parsed alone, and a statement that fails is reported and
replaced by an `ast.Invalid` that marks the names it would have defined.
"""
from __future__ import annotations

import functools
import re
from bisect import bisect_right
from importlib import resources

from lark import Lark, Token, Transformer_NonRecursive, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from . import ast
from .errors import RaspError, Span, describe_terminal, describe_token, expected_phrase
from .python_hint import python_hint

GRAMMAR_RESOURCE = ("rasplay.engine.lang", "grammar.lark")
MAX_RECOVERIES = 20          # missing ';' repaired per statement group
MAX_SYNTAX_ERRORS = 200      # reported per program (the statements after still parse)
MAX_INT_DIGITS = 4300        # Python's own limit for int(str)


@functools.lru_cache(maxsize=1)
def _lark() -> Lark:
    return Lark(resources.files(GRAMMAR_RESOURCE[0]).joinpath(GRAMMAR_RESOURCE[1]).read_text(encoding="utf-8"),
                parser="lalr", propagate_positions=True, maybe_placeholders=True)


def keywords() -> list[str]:
    """The grammar's words: its literal terminals that look like names (`def`, `for`, `select`, ...),
    sorted. Read from grammar.lark itself, so that editors highlight exactly what the parser reserves."""
    from lark.lexer import PatternStr

    return sorted({t.pattern.value for t in _lark().terminals
                   if isinstance(t.pattern, PatternStr) and re.fullmatch(r"[A-Za-z_]\w*", t.pattern.value)})


def warm() -> None:
    """Build the parser now (it takes a fraction of a second, once per process)."""
    _lark()


class _Offset:
    """Where a piece of the source starts: its first line and the column of its first character."""

    def __init__(self, line: int = 1, col: int = 1, source_name: str = "<program>"):
        self.line, self.col, self.source_name = line, col, source_name

    def pos(self, line: int, col: int) -> tuple[int, int]:
        return line + self.line - 1, col + (self.col - 1 if line == 1 else 0)

    def span(self, line: int, col: int, end_line: int, end_col: int) -> Span:
        return Span(*self.pos(line, col), *self.pos(end_line, end_col), self.source_name)


def parse(source: str, source_name: str = "<program>") -> ast.Program:
    """Parse RASP source. Syntax errors and warnings are collected on the returned Program (never raised)."""
    errors: list[RaspError] = []
    chained: list[ast.IfElse] = []
    try:
        statements = _parse_piece(source, _Offset(1, 1, source_name), errors, chained)
    except (UnexpectedInput, RaspError):
        statements, errors, chained = _parse_statementwise(source, source_name)
    errors = _dedupe(errors)
    hint = python_hint(source, source_name) if errors else None
    return ast.Program(statements, source, source_name, ([hint] if hint else []) + errors,
                       _grouping_warnings(chained, source))


def _parse_piece(text: str, offset: _Offset, errors: list, chained: list) -> list:
    """Statements of `text` (at `offset` in the source). Raises UnexpectedInput or RaspError."""
    own: list[RaspError] = []
    tree = _lark().parse(text, on_error=lambda e: _insert_semicolon(e, text, offset, own))
    try:
        statements = _ToAst(offset, chained).transform(tree).children
    except VisitError as e:  # a literal out of range, and the like
        if isinstance(e.orig_exc, RaspError):
            raise e.orig_exc from None
        raise
    errors.extend(own)
    return statements


def _parse_statementwise(source: str, source_name: str):
    statements: list = []
    errors: list[RaspError] = []
    chained: list = []
    lines = _LineIndex(source)
    pos = 0
    while (piece := _next_statement(source, pos)) is not None:
        start, end, shape = piece
        text = source[start:end]
        offset = _Offset(*lines.line_col(start), source_name)
        piece_chained: list = []
        try:
            statements += _parse_piece(text, offset, errors, piece_chained)
            chained += piece_chained
            pos = end
            continue
        except UnexpectedInput as e:
            err, at = _syntax_error(e, text, offset), _error_offset(e, text)
        except RaspError as err_:
            err = err_
            at = lines.offset(err.span.line, err.span.col) - start if err.span else 0
        if len(errors) < MAX_SYNTAX_ERRORS:
            errors.append(err)
        statements.append(ast.Invalid(offset.span(1, 1, *_end_of(text)), _names_defined(text), err))
        pos = _resume_after(source, start, end, start + at, shape)
    return statements, errors, chained


# ------------------------------------------------------------------ cutting the source into statements

_LEX = re.compile(r"""("[^"\n]*"|'[^'\n]*'|\#[^\n]*|[A-Za-z_][A-Za-z_0-9]*|[{};]|\s+|[^"'\#A-Za-z_{};\s]+|.)""")
_BLOCK_WORDS = ("def", "for")


def _next_statement(text: str, pos: int) -> tuple[int, int, str] | None:
    """(start, end, shape) of the next statement from `pos`, or None at the end. shape is "block"
    for a def/for with its closing brace, "open" for one whose brace never closes, else "simple".

    A statement ends at a ';' outside `def`/`for` braces, or at the brace that closes its
    `def`/`for` block. A '}' closing nothing is a statement of its own (a broken one).
    """
    start = None
    stack: list[str] = []          # "block" or "dict" per open brace
    pending_block = False          # a def/for header is open: its '{' starts a block
    at_statement_start = True
    starts_block = False
    for m in _LEX.finditer(text, pos):
        tok = m.group()
        if tok[0].isspace() or tok[0] == "#":
            continue
        if start is None:
            start, starts_block = m.start(), tok in _BLOCK_WORDS
        if tok == "{":
            stack.append("block" if pending_block else "dict")
            at_statement_start, pending_block = stack[-1] == "block", False
        elif tok == "}":
            if not stack:
                return start, m.end(), "simple"
            kind = stack.pop()
            if kind == "block" and "block" not in stack and starts_block:
                return start, m.end(), "block"
            at_statement_start = kind == "block"
        elif tok == ";":
            if "block" not in stack:
                return start, m.end(), "simple"
            at_statement_start = True
        else:
            if at_statement_start and tok in _BLOCK_WORDS:
                pending_block = True
            at_statement_start = False
    if start is None:
        return None
    return start, len(text), "open" if starts_block else "simple"


def _resume_after(source: str, start: int, end: int, error_at: int, shape: str) -> int:
    """Where parsing goes on after a broken statement. A closed def/for block is dropped whole; one
    whose brace never closes up to its error (the statements after it are not its body). Otherwise
    the statement is dropped up to the end of the line of the error, so that a stray token on a
    line of its own does not take the next statements with it (as in the original REPL, which
    reads a line at a time)."""
    if shape == "block":
        return end
    if shape == "open" and error_at > start:
        return error_at
    newline = source.find("\n", max(error_at, start))
    if newline == -1 or newline + 1 >= end:
        return end
    return newline + 1


_NAMES_ASSIGNED = re.compile(r"\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*=(?!=)")
_DEF_NAME = re.compile(r"\s*def\s+([A-Za-z_]\w*)")
_KEYWORDS = {"def", "for", "in", "if", "else", "and", "or", "not", "return", "load", "select", "select_closest",
             "draw"}


def _names_defined(text: str) -> list[str]:
    """The names a broken statement was meant to define (so that their later uses say why they are missing)."""
    m = _DEF_NAME.match(text)
    if m:
        return [m.group(1)]
    m = _NAMES_ASSIGNED.match(text)
    if not m:
        return []
    names = [n.strip() for n in m.group(1).split(",")]
    return [] if any(n in _KEYWORDS for n in names) else names


class _LineIndex:
    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def offset(self, line: int, col: int) -> int:
        return self.starts[min(line, len(self.starts)) - 1] + col - 1


def _end_of(text: str) -> tuple[int, int]:
    stripped = text.rstrip()
    return stripped.count("\n") + 1, len(stripped) - (stripped.rfind("\n") + 1) + 1


# ------------------------------------------------------------------ syntax errors

def _insert_semicolon(e: UnexpectedInput, text: str, offset: _Offset, errors: list) -> bool:
    """On a token that starts a new line where ';' was possible, report the ';' and go on."""
    if not isinstance(e, UnexpectedToken) or e.token.type == "$END" or e.interactive_parser is None:
        return False
    if len(errors) >= MAX_RECOVERIES:
        return False
    start = e.token.start_pos
    before = text[:start].rstrip()
    if not before or "\n" not in text[len(before):start]:
        return False
    parser = e.interactive_parser
    semicolon = Token.new_borrow_pos("SEMICOLON", ";", e.token)
    try:
        if "SEMICOLON" not in parser.accepts():
            return False
        trial = parser.copy()
        trial.feed_token(semicolon)
        if e.token.type not in trial.accepts():
            return False
        line = before.count("\n") + 1
        col = len(before) - (before.rfind("\n") + 1) + 1
        line, col = offset.pos(line, col)
        parser.feed_token(semicolon)
        parser.feed_token(e.token)
    except UnexpectedInput:
        return False
    span = Span(line, col, line, col + 1, offset.source_name)
    errors.append(RaspError(f"missing ';' at the end of line {line}", span, "syntax"))
    return True


def _accepted(e: UnexpectedInput) -> set:
    parser = getattr(e, "interactive_parser", None)
    if parser is not None:
        try:
            return set(parser.accepts())
        except UnexpectedInput:
            pass
    return set(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())


def _error_offset(e: UnexpectedInput, text: str) -> int:
    if isinstance(e, UnexpectedCharacters):
        return e.pos_in_stream
    if isinstance(e, UnexpectedToken) and e.token.type != "$END" and e.token.start_pos is not None:
        return e.token.start_pos
    return len(text.rstrip())


def _syntax_error(e: UnexpectedInput, text: str, offset: _Offset) -> RaspError:
    if isinstance(e, UnexpectedCharacters):
        char = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        if char in "\"'":
            msg = "unterminated string: a string must close on the line where it opens"
        else:
            msg = f"unexpected character {char!r}"
        return RaspError(msg, offset.span(e.line, e.column, e.line, e.column + 1), "syntax")
    expected = [describe_terminal(t, _pattern(t)) for t in _accepted(e) if t != "$END"]
    if isinstance(e, UnexpectedToken) and e.token.type != "$END":
        tok = e.token
        msg = f"unexpected {describe_token(str(tok), tok.type)}"
        if tok.type == "RETURN" or _RETURN_STATEMENT.match(text):
            msg += " (return ends a def body: def f(x) { ...; return x; })"
        elif expected:
            msg += f"; {expected_phrase(_summarise(expected))}"
        end_col = (tok.end_column or tok.column + 1) if tok.end_line == tok.line else tok.column + 1
        return RaspError(msg, offset.span(tok.line, tok.column, tok.line, end_col), "syntax")
    line, col = _end_of(text)
    msg = "the program ends too early"
    if expected:
        msg += f": {expected_phrase(_summarise(expected))}"
    return RaspError(msg, offset.span(line, max(col - 1, 1), line, max(col, 2)), "syntax")


_RETURN_STATEMENT = re.compile(r"\s*return\b(?!\s*=)")
_EXPRESSION_STARTS = {"a name", "a number", "a string", "'('", "'['", "'{'", "'not'", "'-'", "'+'", "'select'",
                      "'select_closest'", "select closest"}


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


def _dedupe(errors: list[RaspError]) -> list[RaspError]:
    seen, out = set(), []
    for e in errors:
        key = (e.message, e.span)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _grouping_warnings(chained: list, source: str) -> list[RaspError]:
    """`a if c1 else b if c2 else d` groups as `(a if c1 else b) if c2 else d` in the original RASP
    (and here): a Python reader expects the other grouping, so say so."""
    out = []
    for node in chained:
        inner = node.then
        inner_text = " ".join(inner.span.text(source).split())
        cond = " ".join(node.cond.span.text(source).split())
        orelse = " ".join(node.orelse.span.text(source).split())
        out.append(RaspError(
            f"as in the original RASP, this groups as ({inner_text}) if {cond} else {orelse}, "
            f"not as Python would read it; add parentheses to say which you mean", node.span, "grouping"))
    return out


# ------------------------------------------------------------------ tree -> AST

def _unquote(s: str) -> str:
    return s[1:-1]


@v_args(meta=True)
class _ToAst(Transformer_NonRecursive):
    def __init__(self, offset: _Offset, chained: list):
        super().__init__()
        self.offset = offset
        self.chained = chained   # if/else nodes whose first branch is an unparenthesised if/else

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", False):
            return self.offset.span(1, 1, 1, 1)
        return self.offset.span(meta.line, meta.column, meta.end_line, meta.end_column)

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
        digits = str(items[0])
        if len(digits) > MAX_INT_DIGITS:
            raise RaspError(f"the number {digits[:12]}… has {len(digits)} digits; the limit is {MAX_INT_DIGITS}",
                            self._span(meta), "syntax")
        return ast.Literal(self._span(meta), int(digits))

    def float_lit(self, meta, items):
        if len(str(items[0])) > MAX_INT_DIGITS:
            raise RaspError(f"the number {str(items[0])[:12]}… is too long", self._span(meta), "syntax")
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

    def select_closest(self, meta, items):
        first, queries, op = items
        return ast.SelectClosest(self._span(meta), first, queries, op)

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
        node = ast.IfElse(self._span(meta), then, cond, orelse)
        if isinstance(then, ast.IfElse) and (then.span.line, then.span.col) == (node.span.line, node.span.col):
            self.chained.append(node)
        return node

    def contains(self, meta, items):
        return ast.Contains(self._span(meta), items[0], items[1])

    # operator rules (kept tokens) become plain strings
    def _op(self, meta, items):
        return str(items[0])

    cmp_op = add_op = mod_op = mul_op = pow_op = logic_op = unary_op = _op
