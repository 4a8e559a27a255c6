"""Graph building: adding s-op and selector nodes (located at the user's call site when built inside the
library), atoms as constant s-ops, and elementwise operations."""
from __future__ import annotations

from .. import elementwise
from ..lang.errors import RaspError, Span
from ..program import Full, Map, Selector, SequenceMap, SOp
from .atoms import ATOM_TYPES, a_type, check_atom_like, op_word


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
