"""RASP-L (Zhou et al., "What Algorithms Can Transformers Learn? A Study in Length Generalization", ICLR 2024),
the restricted RASP of their RASP-Generalization Conjecture, as its reference implementation (apple/ml-np-rasp)
and the paper define it, read structurally over the operation graph:

1. causal: every selector reads only keys at or before the query (np_rasp masks every select to
   key index <= query index); here a selector is causal when one of its conjuncts is a position comparison
   that implies it (`select(indices, indices, <=)` or `<`, or a previous-position head
   `select(indices + c, indices, ==)` with c >= 0);
2. no arithmetic on positions: a position (indices, a position plus or minus a constant, a position copied
   by an aggregate that selects one key) may only be compared with another position (in a select or a
   sequencemap), shifted by a constant (successor, predecessor) or chosen between by `if`; `indices % 2`,
   `indices == 0`, `length - indices` and a position compared with a count or a token are outside;
3. integer values: np_rasp casts every map and every mean to an integer, so an aggregate that averages
   numbers over several keys (a fraction) and a division are outside (RASP-L counts with selector_width);
   the mean of a constant (the "has any key" idiom) and copies are inside;
4. bounded values: RASP-L's values are int8 while a count (selector_width) grows with the length; rasplay
   reads this rule as: a count may only be added, subtracted, scaled by a constant, chosen by `if` and
   compared (binary_mode's `ones > zeros`), so `ones % 2` (PARITY's natural program) is outside.

Not checked (it needs the vocabulary): the int8 range of the tokens and of maps over them. RASP-L's min/max
aggregations have no RASP counterpart, so no rasplay program uses them.
"""
from __future__ import annotations

from .fragment import Fragment
from .sorts import _conjuncts, _describe, _is_int, _is_numeric_fin

RASP_L = Fragment(
    "rasp-l", "RASP-L",
    "Zhou et al. (ICLR 2024) conjecture, without proof, that a decoder-only transformer trained from scratch "
    "tends to length-generalise on a task that a short RASP-L program solves at every length, given diverse "
    "enough training data (the RASP-Generalization Conjecture); their experiments (count, mode, copy with "
    "unique tokens, sort) support it. It is an empirical prediction, not a theorem.",
)

_COMPARE = ("==", "!=", "<", ">", "<=", ">=")


class NotRaspL(Exception):
    def __init__(self, node, message: str):
        super().__init__(message)
        self.node = node
        self.message = message


def check_rasp_l(interp, nodes: list, shapes: dict | None = None):
    """(None, None) when the program made of `nodes` is RASP-L as written; else (node, reason) of the first
    construct outside it, in the graph's order. `shapes` (the shared walk's selector shapes) tells which
    selectors pick one key (previous-position, count-lookup and rightmost heads)."""
    walk = _Walk(interp, shapes or {})
    try:
        for n in nodes:
            if n.kind not in ("select", "select_and", "select_or", "select_not"):
                walk.tags[n.id] = walk.sop(n)
    except NotRaspL as e:
        return e.node, e.message
    return None, None


class _Walk:
    def __init__(self, interp, shapes: dict):
        self.interp = interp
        self.shapes = shapes
        self.tags: dict = {}        # s-op id -> "pos" (a position), "cnt" (a count) or "val" (anything else)

    def tag(self, n) -> str:
        if n.kind == "indices":
            return "pos"
        return self.tags.get(n.id, "val")

    def is_pos(self, n) -> bool:
        return self.tag(n) == "pos"

    def sop(self, n) -> str:
        k = n.kind
        if k in ("tokens", "constant"):
            return "val"
        if k == "indices":
            return "pos"
        if k in ("map", "sequencemap"):
            return self.elementwise(n)
        if k == "selector_width":
            self.selector(n.selector, n)
            return "cnt"
        if k == "aggregate":
            return self.aggregate(n)
        raise NotRaspL(n, f"'{k}' is not a RASP-L operation")

    def elementwise(self, n) -> str:
        args = n.template
        kinds = [self.tag(n.inputs[x]) if t == "arg" else "const" for t, x in args]
        if n.op == "/" or n.op == "to_float" or any(t == "const" and isinstance(x, float) for t, x in args):
            raise NotRaspL(n, f"'{_describe(n)}' may give a fraction; RASP-L's values are integers (np_rasp "
                              f"casts every map to an integer)")
        if "pos" in kinds:
            return self.position_op(n, kinds)
        if "cnt" in kinds:
            return self.count_op(n, kinds)
        return "val"

    def position_op(self, n, kinds: list) -> str:
        args = n.template
        if n.op in ("+", "-") and len(args) == 2 and kinds[0] == "pos" and kinds[1] == "const" \
                and _is_int(args[1][1]):
            return "pos"
        if n.op == "+" and len(args) == 2 and kinds[1] == "pos" and kinds[0] == "const" and _is_int(args[0][1]):
            return "pos"
        if n.op in _COMPARE and kinds == ["pos", "pos"]:
            return "val"
        if n.op == "if" and kinds[1] != "pos" and kinds[0] in ("pos", "const") and kinds[2] in ("pos", "const"):
            return "pos"
        raise NotRaspL(n, f"'{_describe(n)}' computes with a position; RASP-L only compares a position with "
                          f"another position or adds a constant to it (successor, predecessor), never "
                          f"arithmetic like i % 2, i == c or length - i")

    def count_op(self, n, kinds: list) -> str:
        """Counts grow with the length while RASP-L's values are int8; rasplay reads that rule as: a count
        may be added, subtracted, scaled by a constant, chosen by `if` and compared, the operations that are
        one function at every length."""
        args = n.template
        ints = all(k == "cnt" or (k == "const" and _is_int(x)) for k, (_, x) in zip(kinds, args))
        if n.op in ("+", "-", "neg", "pos") and ints:
            return "cnt"
        if n.op == "*" and ints and kinds.count("cnt") == 1:
            return "cnt"
        if n.op in _COMPARE and all(k in ("cnt", "const") for k in kinds):
            return "val"
        if n.op == "if" and kinds[1] == "val" and kinds[0] in ("cnt", "const") and kinds[2] in ("cnt", "const"):
            return "cnt"
        raise NotRaspL(n, f"'{_describe(n)}' applies '{n.op}' to a count, a value that grows with the length; "
                          f"RASP-L's values are int8, which rasplay reads as: a count may only be added, "
                          f"subtracted, scaled by a constant and compared (one function at every length; a table "
                          f"of '{n.op}' over the counts seen in training is not)")

    def aggregate(self, n) -> str:
        self.selector(n.selector, n)
        what = self.tag(n.sop)
        one = self.single_key(n.selector)
        if what == "pos" and not one:
            raise NotRaspL(n, f"'{self.name(n)}' averages positions over a selector that may select several "
                              f"keys; RASP-L only copies a position from one selected key")
        if _numeric(n.sop) and n.sop.kind != "constant" and not one:
            raise NotRaspL(n, f"'{self.name(n)}' averages numbers over a selector that may select several keys, "
                              f"a fraction; RASP-L's values are integers (count with selector_width instead)")
        return what if what in ("pos", "cnt") else "val"

    def name(self, n) -> str:
        return self.interp.display_name(n)

    # ------------------------------------------------------------ selectors

    def selector(self, sel, user):
        for atom in _atoms(sel):
            ks, qs = self.is_pos(atom.keys), self.is_pos(atom.queries)
            if ks != qs and atom.keys.kind != "constant" and atom.queries.kind != "constant":
                raise NotRaspL(user, f"the selector of '{self.name(user)}' compares a position with a value that "
                                     f"is not a position ({_describe(atom)}); RASP-L compares positions only "
                                     f"with positions")
            if ks != qs:
                raise NotRaspL(user, f"the selector of '{self.name(user)}' compares a position with a constant "
                                     f"({_describe(atom)}); RASP-L compares positions only with positions")
        if not _causal(sel):
            raise NotRaspL(user, f"the selector of '{self.name(user)}' may select keys after the query; every "
                                 f"RASP-L selector is causal (key <= query, as np_rasp masks every select): "
                                 f"conjoin it with select(indices, indices, <=) to read the prefix")

    def single_key(self, sel) -> bool:
        """Whether `sel` selects at most one key: a head the shared walk read as one-key (previous position,
        count lookup, rightmost), or a conjunct `select(indices + c, P, ==)` with P a position."""
        shape = self.shapes.get(sel.id)
        if shape is not None and shape.kind in ("shift", "lookup", "tiebreak"):
            return True
        return any(c.kind == "select" and c.predicate == "==" and _offset(c.keys) is not None
                   and self.is_pos(c.queries) for c in _conjuncts(sel))


def _numeric(n) -> bool:
    """Whether an s-op's values are numbers or bools (a mean of them may be a fraction); tokens count as
    symbols (the vocabulary decides)."""
    if n.kind == "selector_width":
        return True
    if n.kind in ("map", "sequencemap") and n.op in ("+", "-", "*", "%", "^", "neg", "pos", "if"):
        return any(t == "arg" and _numeric(n.inputs[x]) for t, x in n.template) or _is_numeric_fin(n)
    if n.kind == "aggregate":
        return _numeric(n.sop)
    return _is_numeric_fin(n)


def _atoms(sel) -> list:
    if sel.kind == "select":
        return [sel]
    return [a for _, c in sel.children() for a in _atoms(c)]


def _offset(n):
    """c when `n` is indices + c (c an int), else None."""
    if n.kind == "indices":
        return 0
    if n.kind == "map" and n.op in ("+", "-") and len(n.template) == 2:
        (t0, x0), (t1, x1) = n.template
        if t0 == "arg" and t1 == "const" and _is_int(x1):
            inner = _offset(n.inputs[x0])
            return None if inner is None else inner + (x1 if n.op == "+" else -x1)
        if n.op == "+" and t1 == "arg" and t0 == "const" and _is_int(x0):
            inner = _offset(n.inputs[x1])
            return None if inner is None else inner + x0
    return None


def _causal(sel) -> bool:
    """Whether every key `sel` selects is at or before the query, by its structure."""
    if sel.kind == "select_and":
        return _causal(sel.left) or _causal(sel.right)
    if sel.kind == "select_or":
        return _causal(sel.left) and _causal(sel.right)
    if sel.kind != "select":
        return False
    ko, qo = _offset(sel.keys), _offset(sel.queries)
    if ko is None or qo is None:
        return False
    # key + ko  PRED  query + qo, i.e. key PRED query + (qo - ko)
    d = qo - ko
    return (sel.predicate in ("<=", "==") and d <= 0) or (sel.predicate == "<" and d <= 1)
