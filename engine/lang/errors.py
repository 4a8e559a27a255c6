"""Source spans, located errors and diagnostics: every user-facing message is built here."""
from __future__ import annotations

import functools
from dataclasses import dataclass


@functools.lru_cache(maxsize=8)
def _lines(source_text: str) -> tuple[str, ...]:
    """A source's lines, split once (labels take the text of thousands of spans of one program)."""
    return tuple(source_text.split("\n"))


@dataclass(frozen=True)
class Span:
    """A region of one source text. Lines and columns are 1-based; end_col is exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int
    source: str = "<program>"  # "<program>", "<library>" or a loaded file's name

    def to_json(self) -> dict:
        return {"line": self.line, "col": self.col, "end_line": self.end_line, "end_col": self.end_col}

    def text(self, source_text: str) -> str:
        """The exact characters this span covers in `source_text`."""
        lines = _lines(source_text)
        if self.line == self.end_line:
            return lines[self.line - 1][self.col - 1:self.end_col - 1]
        parts = [lines[self.line - 1][self.col - 1:]]
        parts += lines[self.line:self.end_line - 1]
        parts.append(lines[self.end_line - 1][:self.end_col - 1])
        return "\n".join(parts)

    def where(self) -> str:
        prefix = "" if self.source == "<program>" else f"{self.source}:"
        return f"{prefix}{self.line}:{self.col}"


class RaspError(Exception):
    """An error in a RASP program or its input, with the place it refers to.

    kind is one of: syntax, name, type, value, limit, load, input, timeout.
    """

    def __init__(self, message: str, span: Span | None = None, kind: str = "value"):
        super().__init__(message)
        self.message = message
        self.span = span
        self.kind = kind

    def located(self, span: Span | None) -> "RaspError":
        """This error, given `span` if it has none yet."""
        if self.span is None and span is not None:
            self.span = span
        return self

    def to_diagnostic(self, severity: str = "error") -> dict:
        return diagnostic(self.message, self.span, severity, self.kind)

    def __str__(self) -> str:
        return self.message


def diagnostic(message: str, span: Span | None, severity: str = "error", kind: str | None = None) -> dict:
    """A diagnostic as the evaluation document carries it (docs/api.md, "Evaluate a program")."""
    out: dict = {"severity": severity, "message": message}
    if kind:
        out["kind"] = kind
    if span is not None:
        out.update(span.to_json())
        if span.source != "<program>":
            out["source"] = span.source
    return out


# ---------------------------------------------------------------- message builders

_TERMINAL_NAMES = {
    "SEMICOLON": "';'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "LBRACE": "'{'", "RBRACE": "'}'", "EQUAL": "'='", "COLON": "':'", "NAME": "a name",
    "INT": "a number", "FLOAT": "a number", "STRING": "a string", "PLUS": "'+'", "MINUS": "'-'",
    "STAR": "'*'", "SLASH": "'/'", "PERCENT": "'%'", "CIRCUMFLEX": "'^'", "NOT": "'not'",
    "AND": "'and'", "OR": "'or'", "IF": "'if'", "ELSE": "'else'", "IN": "'in'", "FOR": "'for'",
    "DEF": "'def'", "RETURN": "'return'", "SELECT": "'select'", "LOAD": "'load'", "DRAW": "'draw'",
    "$END": "the end of the program", "LESSTHAN": "'<'", "MORETHAN": "'>'",
}
_COMPARISONS = {"==", "!=", "<=", ">=", "<", ">"}


def describe_terminal(name: str, pattern: str | None = None) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    if pattern and pattern in _COMPARISONS:
        return f"'{pattern}'"
    if pattern and name.startswith("__ANON"):
        return f"'{pattern}'"
    return name.lower().replace("_", " ")


def describe_token(value: str, type_name: str) -> str:
    if type_name == "$END":
        return "the end of the program"
    if type_name == "NAME":
        return f"name '{value}'"
    if type_name in ("INT", "FLOAT"):
        return f"number {value}"
    if type_name == "STRING":
        return f"string {value}"
    return f"'{value}'"


def expected_phrase(expected: list[str]) -> str:
    """'expected X' with the most useful few alternatives first."""
    order = ["';'", "')'", "']'", "'}'", "','", "'='", "an expression", "a name"]
    items = sorted(set(expected), key=lambda s: (order.index(s) if s in order else len(order), s))
    if len(items) > 6:
        items = items[:5] + ["…"]
    if len(items) == 1:
        return f"expected {items[0]}"
    return "expected one of " + ", ".join(items)


def positions_phrase(positions) -> str:
    pos = [int(p) for p in positions]
    shown = ", ".join(str(p) for p in pos[:8])
    if len(pos) > 8:
        shown += f", … ({len(pos)} in all)"
    return ("position " if len(pos) == 1 else "positions ") + shown
