"""The two programs of a check (engine/learned/check.py): loading each (its output s-op and its heads),
the learned program's header (`# bos:`, `# eos:`), the token batches each reads, one batch run through
the graph runner, and the comparison of their outputs.

A learned program reads the task's input with a beginning token prepended when its header has a
`# bos:` field (and an end token appended with `# eos:`), as TransformerPrograms' programs do; only
the task's own positions are compared. Without those fields it reads the input as it is.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..analysis import analyze_nodes
from ..graph_runner import run_graph
from ..header import default_output, parse_header
from ..interpret import interpret
from ..lang.errors import RaspError
from ..limits import Limits
from ..program import SOp


class CheckError(ValueError):
    """A clear, user-facing refusal of a check (a bad program, option or limit); never a programming error."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None, kind: str = "input"):
        super().__init__(message)
        self.message, self.line, self.col, self.kind = message, line, col, kind

    def to_json(self) -> dict:
        doc = {"kind": self.kind, "message": self.message}
        if self.line is not None:
            doc.update(line=self.line, col=self.col)
        return doc


@dataclass
class Program:
    """One side of a check: the interpreted program, its output s-op and the heads it needs."""
    role: str                   # "learned" | "task" (for messages)
    output: str
    node: SOp
    nodes: list                 # the output's ancestors, topologically ordered
    heads: list[dict]           # {"selector": id, "name", "label", "line"}
    bos: str | None = None
    eos: str | None = None

    @property
    def offset(self) -> int:
        return 0 if self.bos is None else 1

    @property
    def extra(self) -> int:
        return self.offset + (0 if self.eos is None else 1)


def load_program(source: str, role: str, output: str | None, limits: Limits, load_dirs=None) -> Program:
    """Interpret `source` and pick its output s-op (`output`, else its header's `# output:`, else its
    last s-op); CheckError naming the role, the line and the column for a program that does not run."""
    try:
        interp = interpret(source, limits, load_dirs)
    except RaspError as e:
        raise _located(e, role) from None
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        d = errors[0]
        where = f" (line {d['line']}, col {d['col']})" if "line" in d else ""
        raise CheckError(f"the {role} program has an error{where}: {d['message']}", d.get("line"), d.get("col"))
    name = output or default_output(interp)
    found = [d.value for d in interp.definitions if d.name == name] if name else []
    if not found:
        sops = ", ".join(d.name for d in interp.definitions if isinstance(d.value, SOp)) or "none"
        what = f"no s-op named '{name}'" if name else "no s-op"
        raise CheckError(f"the {role} program defines {what} (its s-ops: {sops})")
    node = found[-1]
    if not isinstance(node, SOp):
        raise CheckError(f"'{name}' in the {role} program is a selector; a check compares s-ops")
    analysis = analyze_nodes(interp, [node])
    computes = {d.value.id: d.name for d in interp.definitions}
    heads = [{"selector": h["selector"], "name": _head_name(h, computes), "label": h["label"],
              "line": _line_of(interp, h["selector"])} for layer in analysis["heads"] for h in layer]
    header = parse_header(source)
    return Program(role, name, node, interp.graph.ancestors([node]), heads,
                   header.get("bos") or None, header.get("eos") or None)


def _head_name(head: dict, computes: dict) -> str:
    """A head's name: its selector's name, or for an unnamed selector (TransformerPrograms' heads are
    written inline) "head of X", X the s-op it computes; else its expression."""
    if head["name"] != head["label"]:
        return head["name"]
    sops = [computes[op] for op in head.get("ops", []) if op in computes]
    return f"head of {sops[0]}" if sops else head["label"]


def _located(e: RaspError, role: str) -> CheckError:
    span = e.span
    where = f" (line {span.line}, col {span.col})" if span is not None else ""
    return CheckError(f"the {role} program has an error{where}: {e.message}",
                      span.line if span else None, span.col if span else None)


def _line_of(interp, node_id: int) -> int | None:
    span = getattr(interp.graph.nodes[node_id], "origin", None)
    return span.line if span is not None and span.source == "<program>" else None   # not the library's lines


# ------------------------------------------------------------------ token batches

def token_batch(vocab: np.ndarray, indices: np.ndarray, program: Program) -> np.ndarray:
    """The tokens `program` reads for a (B, n) batch of vocabulary indices: the task's tokens, with the
    learned program's BOS/EOS around them (then the tokens are their text, as TransformerPrograms reads them)."""
    tokens = vocab[indices]
    if program.extra == 0:
        return tokens
    if tokens.dtype.kind != "U":
        tokens = tokens.astype(str) if tokens.dtype.kind != "b" else np.where(tokens, "True", "False")
    parts = ([np.full((len(tokens), 1), program.bos)] if program.bos is not None else []) + [tokens] + (
        [np.full((len(tokens), 1), program.eos)] if program.eos is not None else [])
    return np.concatenate(parts, axis=1)


@dataclass
class Run:
    """One program's values on one batch, cut to the task's positions."""
    output: np.ndarray | None   # (B, n), None when every row failed
    errors: list                # str | None per row
    selectors: dict[int, np.ndarray]   # selector id -> (B, n, n), BOS/EOS rows and columns dropped


def run_batch(program: Program, tokens: np.ndarray, n: int, deadline: float, limits: Limits,
              with_selectors: bool) -> Run:
    """Run `program` on a token batch (one length); its output and heads on the task's n positions."""
    keep = {program.node.id} | ({h["selector"] for h in program.heads} if with_selectors else set())
    if time.monotonic() > deadline:
        raise TimeoutError
    try:
        vals = run_graph(program.nodes, tokens, keep, deadline, limits)
    except RaspError as e:
        if e.kind == "timeout":
            raise TimeoutError from None
        raise CheckError(f"the {program.role} program failed: {e.message}") from None
    lo, hi = program.offset, program.offset + n
    out = vals[program.node.id]
    errors = [e.message if e is not None else None for e in out.errors]
    data = None if out.data is None else np.asarray(out.data)[:, lo:hi]
    selectors = {}
    for sid in keep - {program.node.id}:
        v = vals[sid]
        if v.data is not None:
            selectors[sid] = np.asarray(v.data)[:, lo:hi, lo:hi]
    return Run(data, errors, selectors)


# ------------------------------------------------------------------ comparing outputs

def comparable(expected: np.ndarray, got: np.ndarray) -> str:
    """How two outputs are compared: "value" (numbers with numbers, strings with strings, bools with
    bools) or "text" (a string output beside a number or bool one: TransformerPrograms' classes are
    strings, so a learned "3" is compared with the task's 3 by its text)."""
    kinds = {_kind(expected), _kind(got)}
    return "text" if "U" in kinds and len(kinds) > 1 else "value"


def _kind(a: np.ndarray) -> str:
    return "U" if a.dtype.kind in "UO" and a.size and isinstance(a.flat[0], str) else a.dtype.kind


def as_text(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "U":
        return a
    if a.dtype.kind == "b":
        return np.where(a, "True", "False")
    if a.dtype.kind == "i":
        return a.astype(str)
    return np.array([str(x) for x in a.ravel().tolist()], dtype=str).reshape(a.shape)


def equal_positions(expected: np.ndarray, got: np.ndarray, how: str) -> np.ndarray:
    """(B, n) booleans: where the learned program's output equals the task's."""
    if how == "text":
        return as_text(expected) == as_text(got)
    if expected.dtype.kind == "O" or got.dtype.kind == "O":
        flat = [_same(a, b) for a, b in zip(expected.ravel().tolist(), got.ravel().tolist())]
        return np.array(flat, dtype=bool).reshape(expected.shape)
    if (expected.dtype.kind == "U") != (got.dtype.kind == "U"):
        return np.zeros(expected.shape, dtype=bool)
    return np.asarray(expected == got, dtype=bool)


def _same(a, b) -> bool:
    if isinstance(a, str) != isinstance(b, str):
        return False
    return a == b
