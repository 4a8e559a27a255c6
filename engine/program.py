"""The operation graph (IR) of a RASP program: s-op and selector nodes, like a small tracr `rasp`.

Nodes are immutable once added to a Graph. A Graph interns its nodes: building the same
operation twice (same kind, same parameters, same children) returns the first node, so
structurally identical selectors are one node (and one head), and shared subexpressions are
computed once. Children always have smaller ids than their parents, so id order is a
topological order.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterator

from .lang.errors import RaspError, Span

# Elementwise ops and their arities (see engine/elementwise.py for their semantics).
BINARY_OPS = ("+", "-", "*", "/", "%", "^", "==", "!=", "<", ">", "<=", ">=", "and", "or")
UNARY_OPS = ("neg", "pos", "not", "round", "indicator", "to_str", "to_int", "to_float", "to_bool")
TABLE_OPS = ("in", "getitem")  # x in CONST, CONST[x]
COMPARISONS = ("==", "!=", "<", ">", "<=", ">=")


def freeze(value: Any) -> Any:
    """A hashable key for a constant that tells 1, 1.0 and True apart."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, (list, tuple)):
        return ("list", tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((freeze(k), freeze(v)) for k, v in value.items()))
    raise TypeError(f"cannot freeze {type(value).__name__}")


def format_constant(value: Any) -> str:
    """A constant as RASP source would write it."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_constant(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_constant(k)}: {format_constant(v)}" for k, v in value.items()) + "}"
    return str(value)


class Node:
    """A node of the operation graph. `kind` names the operation; `children` its inputs."""

    kind = "node"
    __slots__ = ("id", "span", "label", "origin")

    def __init__(self, span: Span | None = None, label: str | None = None):
        self.id = -1
        self.span = span      # where the operation is written (may be in the library)
        self.label = label
        self.origin = span    # where the user's program asked for it (a call site, for library code)

    def children(self) -> list[tuple[str, "Node"]]:
        """(role, node) pairs, in a fixed order."""
        return []

    def params(self) -> tuple:
        """Hashable parameters that, with the children, define the operation."""
        return ()

    def structure_key(self) -> tuple:
        return (self.kind, self.params(), tuple(c.id for _, c in self.children()))

    def describe(self) -> str:
        """A short description of the operation, used when no source text labels it."""
        return self.kind

    def __repr__(self) -> str:
        return f"<{self.kind}#{self.id} {self.label or self.describe()}>"


class SOp(Node):
    """A sequence operator: one value per position."""
    __slots__ = ()


class Selector(Node):
    """A selection matrix: entry (q, k) says whether query position q attends to key k."""
    __slots__ = ()


# ------------------------------------------------------------------ s-ops

class TokensInput(SOp):
    """The input tokens as given (`tokens_asis`)."""
    kind = "tokens"
    __slots__ = ()

    def describe(self):
        return "tokens"


class IndicesInput(SOp):
    kind = "indices"
    __slots__ = ()

    def describe(self):
        return "indices"


class Full(SOp):
    """A constant broadcast to every position (an atom used where an s-op is needed)."""
    kind = "constant"
    __slots__ = ("value",)

    def __init__(self, value, span=None, label=None):
        super().__init__(span, label)
        self.value = value

    def params(self):
        return (freeze(self.value),)

    def describe(self):
        return format_constant(self.value)


class Elementwise(SOp):
    """An elementwise operation. `template` lists the operands in order: ("arg", i) is the i-th
    s-op of `inputs`, ("const", v) a constant. Map has one s-op input, SequenceMap several."""
    __slots__ = ("op", "template", "inputs")

    def __init__(self, op: str, template: tuple, inputs: tuple, span=None, label=None):
        super().__init__(span, label)
        self.op = op
        self.template = template
        self.inputs = tuple(inputs)

    def children(self):
        return [(f"arg{i}", n) for i, n in enumerate(self.inputs)]

    def params(self):
        return (self.op, tuple((t, i) if t == "arg" else (t, freeze(i)) for t, i in self.template))

    def operands(self, values: list) -> list:
        """The operand list for `values` of the s-op inputs (constants filled in)."""
        return [values[x] if t == "arg" else x for t, x in self.template]

    def describe(self):
        parts = [self.inputs[x].label or self.inputs[x].describe() if t == "arg" else format_constant(x)
                 for t, x in self.template]
        if self.op in BINARY_OPS:
            return f"{parts[0]} {self.op} {parts[1]}"
        if self.op == "if":
            return f"{parts[0]} if {parts[1]} else {parts[2]}"
        if self.op == "in":
            return f"{parts[0]} in {parts[1]}"
        if self.op == "getitem":
            return f"{parts[0]}[{parts[1]}]"
        if self.op == "neg":
            return f"-{parts[0]}"
        if self.op == "pos":
            return f"+{parts[0]}"
        if self.op == "not":
            return f"not {parts[0]}"
        return f"{self.op}({', '.join(parts)})"


class Map(Elementwise):
    kind = "map"
    __slots__ = ()


class SequenceMap(Elementwise):
    kind = "sequencemap"
    __slots__ = ()


class Aggregate(SOp):
    kind = "aggregate"
    __slots__ = ("selector", "sop", "default")

    def __init__(self, selector: Selector, sop: SOp, default=0, span=None, label=None):
        super().__init__(span, label)
        self.selector = selector
        self.sop = sop
        self.default = default

    def children(self):
        return [("selector", self.selector), ("sop", self.sop)]

    def params(self):
        return (freeze(self.default),)

    def describe(self):
        return f"aggregate({self.selector.label or 'selector'}, {self.sop.label or self.sop.describe()})"


class AggregateSum(SOp):
    """The sum of the selected values at each query, 0 where none is selected (a rasplay extension, for
    learned programs: TransformerPrograms' numerical heads)."""
    kind = "aggregate_sum"
    __slots__ = ("selector", "sop")

    def __init__(self, selector: Selector, sop: SOp, span=None, label=None):
        super().__init__(span, label)
        self.selector = selector
        self.sop = sop

    def children(self):
        return [("selector", self.selector), ("sop", self.sop)]

    def describe(self):
        return f"aggregate_sum({self.selector.label or 'selector'}, {self.sop.label or self.sop.describe()})"


class SelectorWidth(SOp):
    kind = "selector_width"
    __slots__ = ("selector",)

    def __init__(self, selector: Selector, span=None, label=None):
        super().__init__(span, label)
        self.selector = selector

    def children(self):
        return [("selector", self.selector)]

    def describe(self):
        return f"selector_width({self.selector.label or 'selector'})"


# ------------------------------------------------------------------ selectors

class Select(Selector):
    """Entry (q, k) is true iff `keys[k] predicate queries[q]`."""
    kind = "select"
    __slots__ = ("keys", "queries", "predicate")

    def __init__(self, keys: SOp, queries: SOp, predicate: str, span=None, label=None):
        super().__init__(span, label)
        self.keys = keys
        self.queries = queries
        self.predicate = predicate

    def children(self):
        return [("keys", self.keys), ("queries", self.queries)]

    def params(self):
        return (self.predicate,)

    def describe(self):
        k = self.keys.label or self.keys.describe()
        q = self.queries.label or self.queries.describe()
        return f"select({k}, {q}, {self.predicate})"


class SelectAnd(Selector):
    kind = "select_and"
    __slots__ = ("left", "right")

    def __init__(self, left: Selector, right: Selector, span=None, label=None):
        super().__init__(span, label)
        self.left, self.right = left, right

    def children(self):
        return [("left", self.left), ("right", self.right)]

    def describe(self):
        return f"{self.left.label or 'selector'} and {self.right.label or 'selector'}"


class SelectOr(SelectAnd):
    kind = "select_or"
    __slots__ = ()

    def describe(self):
        return f"{self.left.label or 'selector'} or {self.right.label or 'selector'}"


class SelectNot(Selector):
    kind = "select_not"
    __slots__ = ("inner",)

    def __init__(self, inner: Selector, span=None, label=None):
        super().__init__(span, label)
        self.inner = inner

    def children(self):
        return [("inner", self.inner)]

    def describe(self):
        return f"not {self.inner.label or 'selector'}"


class SelectClosest(Selector):
    """Of the keys `inner` selects for a query, only the closest one (a rasplay extension, for learned
    programs: TransformerPrograms' `select_closest`; docs/language.md gives the tie-break); position 0
    where `inner` selects nothing."""
    kind = "select_closest"
    __slots__ = ("inner",)

    def __init__(self, inner: Selector, span=None, label=None):
        super().__init__(span, label)
        self.inner = inner

    def children(self):
        return [("inner", self.inner)]

    def describe(self):
        return f"select_closest({self.inner.label or self.inner.describe()})"


ATTENTION_KINDS = ("aggregate", "selector_width", "aggregate_sum")
SELECTOR_KINDS = ("select", "select_and", "select_or", "select_not", "select_closest")
# the kinds that rasplay adds to the original RASP (for learned programs, docs/learned_programs.md)
EXTENSION_KINDS = ("select_closest", "aggregate_sum")
INPUT_KINDS = ("tokens", "indices", "constant")
ELEMENTWISE_KINDS = ("map", "sequencemap")
# what each kind of node is, for readers of the analysis graph (the page's views): one source
ROLES = {**{k: "selector" for k in SELECTOR_KINDS}, **{k: "attention" for k in ATTENTION_KINDS},
         **{k: "input" for k in INPUT_KINDS}, **{k: "elementwise" for k in ELEMENTWISE_KINDS}}


class Graph:
    """The interned nodes of one program, in creation (= topological) order."""

    def __init__(self, max_nodes: int = 20000):
        self.nodes: list[Node] = []
        self._interned: dict[tuple, Node] = {}
        self.max_nodes = max_nodes

    def add(self, node: Node) -> Node:
        key = node.structure_key()
        found = self._interned.get(key)
        if found is not None:
            return found
        if len(self.nodes) >= self.max_nodes:
            raise RaspError(f"the program builds more than {self.max_nodes} operations (the program size limit)",
                            node.span, "limit")
        node.id = len(self.nodes)
        self.nodes.append(node)
        self._interned[key] = node
        return node

    def ancestors(self, roots) -> list[Node]:
        """Every node `roots` depend on (roots included), in topological order."""
        seen: set[int] = set()
        stack = [r for r in roots]
        while stack:
            n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            stack.extend(c for _, c in n.children())
        return [self.nodes[i] for i in sorted(seen)]

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)
