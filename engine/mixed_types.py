"""Which s-ops of a program may hold values of several types per position (the evaluation document's
type "mixed"): the compiler and the trainer, which need one type per s-op, refuse them by name and line.

The evaluator computes such s-ops as the original RASP does (engine/mixed.py); this module only finds
them before any input, from the operation graph: an if/else whose branches have different types, an
aggregate whose default's type differs from its values', a lookup in a list or dict whose values mix
types. Ints beside floats are not a mix here (a compiled model holds them as numbers)."""
from __future__ import annotations

from .lang.errors import RaspError
from .program import Aggregate, Map, SequenceMap

_NUMBERS = {"int", "float"}


def _atom_type(value) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float, str)):
        return type(value).__name__
    return None


def _mix(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a != b and not {a, b} <= _NUMBERS


def mixed_reason(node) -> str | None:
    """Why this node may hold values of several types per position (None when it cannot)."""
    from .interpret import static_type

    if isinstance(node, (Map, SequenceMap)) and node.op == "if":
        then, _, orelse = node.operands(list(node.inputs))
        a, b = static_type(then), static_type(orelse)
        if _mix(a, b):
            return f"its if/else branches have types {a} and {b}"
    if isinstance(node, (Map, SequenceMap)) and node.op == "getitem":
        table = node.operands(list(node.inputs))[0]
        values = table.values() if isinstance(table, dict) else table if isinstance(table, (list, str)) else []
        types = {_atom_type(v) for v in values} - {None}
        if len(types) > 1 and not types <= _NUMBERS:
            return f"the values it looks up have types {' and '.join(sorted(types))}"
    if isinstance(node, Aggregate):
        a, b = static_type(node.sop), _atom_type(node.default)
        if _mix(a, b) and "str" not in (a, b):
            return f"its values are {a}s and its default {node.default!r} is {'an' if b == 'int' else 'a'} {b}"
    return None


def refuse_mixed(interp, nodes, what: str) -> None:
    """A RaspError naming the first node among `nodes` whose values may mix types, and its line."""
    for node in nodes:
        reason = mixed_reason(node)
        if reason is not None:
            name = interp.display_name(node)
            span = node.origin or node.span
            where = f" (line {span.line})" if span is not None and span.source == "<program>" else ""
            raise RaspError(f"'{name}'{where} may hold values of several types per position ({reason}): the "
                            f"evaluator computes it as the original RASP does (type mixed), but {what} needs one "
                            "type per s-op; make both of one type (e.g. a default of the values' type)",
                            span, "type")


def refuse_extensions(interp, nodes, what: str) -> None:
    """A RaspError naming the first node among `nodes` that is one of rasplay's extensions for learned
    programs (select_closest, aggregate_sum: docs/language.md), which `what` does not build."""
    from .program import EXTENSION_KINDS

    for node in nodes:
        if node.kind in EXTENSION_KINDS:
            span = node.origin or node.span
            where = f" (line {span.line})" if span is not None and span.source == "<program>" else ""
            raise RaspError(f"refused: '{interp.display_name(node)}'{where} uses {node.kind}, a rasplay extension "
                            f"for learned programs that the evaluator runs but {what} does not build (it has no "
                            "attention head for it yet)", span, "type")
