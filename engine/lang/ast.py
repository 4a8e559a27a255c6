"""The RASP abstract syntax tree. Every node carries the source span it was parsed from."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import Span


@dataclass
class Node:
    span: Span = field(repr=False, compare=False)


# ------------------------------------------------------------------ expressions

@dataclass
class Expr(Node):
    pass


@dataclass
class Name(Expr):
    id: str


@dataclass
class Literal(Expr):
    value: Any  # int, float or str


@dataclass
class ListLit(Expr):
    items: list[Expr]


@dataclass
class DictLit(Expr):
    pairs: list[tuple[Expr, Expr]]


@dataclass
class ListComp(Expr):
    element: Expr
    names: list[str]
    iterable: Expr


@dataclass
class DictComp(Expr):
    key: Expr
    value: Expr
    names: list[str]
    iterable: Expr


@dataclass
class Select(Expr):
    keys: Expr
    queries: Expr
    op: str


@dataclass
class SelectClosest(Expr):
    """`select_closest(sel)` (queries and op None) or `select_closest(keys, queries, op)`."""
    first: Expr
    queries: Expr | None
    op: str | None


@dataclass
class Call(Expr):
    func: Expr
    args: list[Expr]


@dataclass
class Index(Expr):
    target: Expr
    index: Expr


@dataclass
class BinOp(Expr):
    op: str  # + - * / % ^ == != < > <= >= and or
    left: Expr
    right: Expr


@dataclass
class UnOp(Expr):
    op: str  # not - +
    operand: Expr


@dataclass
class IfElse(Expr):
    then: Expr
    cond: Expr
    orelse: Expr


@dataclass
class Contains(Expr):
    item: Expr
    container: Expr


# ------------------------------------------------------------------ statements

@dataclass
class Stmt(Node):
    pass


@dataclass
class Assign(Stmt):
    names: list[str]
    values: list[Expr]


@dataclass
class ExprStmt(Stmt):
    expr: Expr


@dataclass
class Load(Stmt):
    path: str


@dataclass
class Draw(Stmt):
    target: Expr
    example: Expr | None


@dataclass
class FuncDef(Stmt):
    name: str
    params: list[str]
    body: list[Stmt]
    returns: list[Expr]


@dataclass
class ForLoop(Stmt):
    names: list[str]
    iterable: Expr
    body: list[Stmt]


@dataclass
class SetExample(Stmt):
    example: Expr


@dataclass
class ReplNoop(Stmt):
    text: str


@dataclass
class Invalid(Stmt):
    """A statement that failed to parse: it runs as nothing, and the names it meant to define
    report its syntax error when used."""
    names: list[str]
    error: Any


@dataclass
class Program:
    statements: list[Stmt]
    source: str
    source_name: str = "<program>"
    syntax_errors: list = field(default_factory=list)  # RaspErrors the parser recovered from
    warnings: list = field(default_factory=list)       # RaspErrors worth a warning (surprising grouping)
