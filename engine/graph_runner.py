"""The graph runner: an operation graph x a batch of inputs -> numpy values, per node.

Below both the interpreter (which runs it when a program applies an s-op to an input, `sop("hi")`)
and the evaluator (which builds the evaluation document from its values), so neither imports the other.

Inputs of equal length and token type run together as one batch: an s-op's values are a
(batch, n) array and a selector's a (batch, n, n) boolean array (rows = queries, columns = keys).
Aggregates gather the one selected value per query (a masked gather) and average only the rows
that select several (a matrix product). Nothing loops over positions in Python.

A failure is kept per input: each node's values carry one error slot per batch row, so an error
on one input, or in one name, leaves the others intact.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import closest, elementwise, mixed
from .distinct import distinct
from .elementwise import TYPE_NAMES, as_array, type_of
from .lang.errors import RaspError, positions_phrase
from .limits import Limits
from .program import Aggregate, Node, Selector


@dataclass
class Values:
    """One node's values on one batch: data is None when every row failed."""
    data: np.ndarray | None
    errors: list  # RaspError | None per batch row
    int_like: np.ndarray | None = None  # float data: where the original RASP holds an int (see _aggregate)
    found: tuple | None = None          # distinct(data.ravel()), kept once computed (see distinct_of)

    def distinct_of(self) -> tuple:
        """The distinct values of data and each position's index among them (engine/distinct.py), computed
        once per node: several tables and dicts often read the same s-op."""
        if self.found is None:
            self.found = distinct(self.data.reshape(-1))
        return self.found


# ------------------------------------------------------------------ node evaluation

def _row_errors(bad: np.ndarray | None, message: str | None, node: Node, B: int) -> list:
    errors: list = [None] * B
    if bad is None:
        return errors
    bad = np.broadcast_to(bad, (B,) + bad.shape[1:]) if bad.ndim else np.broadcast_to(bad, (B,))
    flat = bad.reshape(B, -1)
    for b in np.nonzero(flat.any(axis=1))[0]:
        where = positions_phrase(np.nonzero(flat[b])[0])
        errors[b] = RaspError(f"{message} at {where}", node.origin, "value")
    return errors


def _merge(first: list, second: list) -> list:
    """Per row the first error of the two lists. Error lists are never changed once made, so either
    list itself is the answer where the other holds none."""
    if first is second or not any(second):    # the usual case, checked at C speed: no error on any row
        return first
    if not any(first):
        return second
    return [a if a is not None else b for a, b in zip(first, second)]


def _select(node, vals, tokens):
    keys, queries = vals[node.keys.id].data, vals[node.queries.id].data
    if mixed.is_mixed(keys) or mixed.is_mixed(queries):
        values, bad, message = mixed.apply(node.predicate, [keys[:, None, :], queries[:, :, None]])
        return values.astype(np.bool_), bad, message
    if keys.dtype.kind == "U" and queries.dtype.kind == "U":
        # compare strings through their rank among all values: same order, integer speed
        keys, queries = _string_ranks(vals[node.keys.id], vals[node.queries.id])
    return elementwise.compare(node.predicate, keys[:, None, :], queries[:, :, None]), None, None


def _string_ranks(keys: Values, queries: Values) -> tuple[np.ndarray, np.ndarray]:
    """Two string s-ops as each position's rank among the values of both (the same order as the
    strings'): from each s-op's distinct values, which its Values keep for other readers too."""
    key_values, key_index = keys.distinct_of()
    query_values, query_index = queries.distinct_of()
    both = np.unique(np.concatenate([key_values, query_values]))       # a handful of values
    return (np.searchsorted(both, key_values)[key_index].reshape(keys.data.shape),
            np.searchsorted(both, query_values)[query_index].reshape(queries.data.shape))


def _aggregate(node, vals, tokens):
    sel, v = vals[node.selector.id].data, vals[node.sop.id].data
    B, n = v.shape
    counts = sel.sum(axis=-1)
    if not isinstance(node.default, (bool, int, float, str)):  # a list or dict default (the original takes it)
        empty = (counts == 0).any(axis=1)
        failed = RaspError("aggregate: a query selects nothing and gets the default, a list or dict, which an "
                           "s-op cannot hold", node.origin, "type")
        out, bad, errors, *rest = _aggregate(Aggregate(node.selector, node.sop, 0, span=node.span, label=node.label),
                                             vals, tokens)
        return (out, bad, [failed if e else err for e, err in zip(empty.tolist(), errors or [None] * B)], *rest)
    default_kind = as_array(node.default).dtype.kind
    if mixed.is_mixed(v) or ((counts == 0).any() and default_kind != v.dtype.kind
                             and not (default_kind in "if" and v.dtype.kind in "if")):
        return _aggregate_objects(node, sel, mixed.to_objects(v, vals[node.sop.id].int_like), counts)
    chosen = sel.argmax(axis=-1)
    out = np.take_along_axis(v, chosen, axis=1)
    errors = [None] * B
    multi = counts > 1
    # The original keeps each position's value as Python made it: a single selected int stays an
    # int (also a float position that holds an int, see int_like) and an int default stays an int,
    # even where other positions average to floats.
    default_is_int = isinstance(node.default, int) and not isinstance(node.default, bool)
    source_int_like = vals[node.sop.id].int_like
    if v.dtype.kind == "i":
        single_int = counts == 1
    elif source_int_like is not None:
        single_int = (counts == 1) & np.take_along_axis(np.broadcast_to(source_int_like, v.shape), chosen, axis=1)
    else:
        single_int = np.zeros(counts.shape, bool)
    int_like = single_int | ((counts == 0) & default_is_int)
    if multi.any():
        if v.dtype.kind in "if":
            out = out.astype(np.float64)
            vf = v.astype(np.float64)
            for b in np.nonzero(multi.any(axis=1))[0]:
                qs = np.nonzero(multi[b])[0]
                out[b, qs] = (sel[b, qs].astype(np.float64) @ vf[b]) / counts[b, qs]
        else:
            what = f"{node.label or node.describe()}"
            for b in np.nonzero(multi.any(axis=1))[0]:
                errors[b] = RaspError(
                    f"{what}: {_queries(np.nonzero(multi[b])[0], 'select')} several {type_of(v)} "
                    f"values, whose mean is undefined; only numbers can be averaged", node.origin, "type")
    empty = counts == 0
    if empty.any():
        default = as_array(node.default)
        try:
            kind = elementwise.join_types(out, default, "")
            out = np.where(empty, elementwise.cast(default, kind), elementwise.cast(out, kind))
        except RaspError:
            what = f"{node.label or node.describe()}"
            for b in np.nonzero(empty.any(axis=1))[0]:
                errors[b] = errors[b] or RaspError(
                    f"{what}: {_queries(np.nonzero(empty[b])[0], 'select')} nothing and "
                    f"{'get' if empty[b].sum() > 1 else 'gets'} the default {node.default!r} ({type_of(default)}), "
                    f"but the values are {type_of(out)}s; "
                    f"give aggregate a default of that type, e.g. aggregate(sel, sop, "
                    f"{_example_default(out)})", node.origin, "type")
    return out, None, errors, (int_like if out.dtype.kind == "f" else None)


def _aggregate_objects(node, sel, v, counts):
    """An aggregate whose values, or whose default beside them, mix types: per position as the
    original computes it (one selected value as it is, several their mean, none the default)."""
    B, n = v.shape
    out = np.take_along_axis(v, sel.argmax(axis=-1), axis=1).copy()
    errors = [None] * B
    multi = counts > 1
    for b in np.nonzero(multi.any(axis=1))[0]:
        row = v[b].tolist()
        kinds = mixed.row_kinds(row)
        if not kinds <= {"b", "i", "f"} or kinds == {"b"}:
            errors[b] = RaspError(
                f"{node.label or node.describe()}: {_queries(np.nonzero(multi[b])[0], 'select')} several "
                f"{'bool' if kinds == {'b'} else 'str'} values, whose mean is undefined; only numbers can be "
                "averaged", node.origin, "type")
            continue
        for q in np.nonzero(multi[b])[0]:
            out[b, q] = mixed.mean([row[k] for k in np.nonzero(sel[b, q])[0]])
    empty = counts == 0
    out[empty] = node.default
    default_type = type(node.default).__name__
    for b in np.nonzero(empty.any(axis=1))[0]:
        others = mixed.row_kinds([x for x, e in zip(out[b].tolist(), empty[b].tolist()) if not e])
        if errors[b] is None and mixed.mixes_strings(others | mixed.row_kinds([node.default])):
            shown = " and ".join(sorted(TYPE_NAMES[k] for k in others))
            errors[b] = RaspError(
                f"{node.label or node.describe()}: {_queries(np.nonzero(empty[b])[0], 'select')} nothing and "
                f"{'get' if empty[b].sum() > 1 else 'gets'} the default {node.default!r} ({default_type}), "
                f"but the values are {shown}s; the original RASP refuses an s-op holding strings beside other "
                f"types on one input: give aggregate a default of that type, e.g. aggregate(sel, sop, "
                f"{_example_default(np.asarray(out[b][~empty[b]].tolist()))})", node.origin, "type")
    return mixed.settle(out), None, errors


def _queries(positions, verb: str) -> str:
    """'query position 4 selects' / 'query positions 1, 2 select'."""
    return f"query {positions_phrase(positions)} {verb}{'s' if len(positions) == 1 else ''}"


def _example_default(values: np.ndarray) -> str:
    return {"U": '"-"', "b": "False", "f": "0.0"}.get(values.dtype.kind, "0")


def _elementwise(node, vals, tokens):
    children = [vals[c.id] for c in node.inputs]
    data = [c.data for c in children]
    if any(c.int_like is not None for c in children) and (
            node.op in _PYTHON_VALUED or any(mixed.is_mixed(d) for d in data)):
        # where values mix types, Python's ints stay ints: hand them over as Python values
        data = [mixed.to_objects(c.data, c.int_like) if c.int_like is not None else c.data for c in children]
    operands = node.operands(data)
    found = None
    if node.op in elementwise.PER_VALUE_OPS and len(children) == 1 and data[0] is children[0].data \
            and data[0].dtype.kind != "O":
        found = children[0].distinct_of()
    result = elementwise.apply(node.op, operands, mixed=True, found=found)
    values = result.values
    if values.shape != tokens.shape:
        values = np.broadcast_to(values, tokens.shape).copy()
    int_like = None
    if values.dtype.kind == "f" and node.op in _INT_PRESERVING and not any(mixed.is_mixed(d) for d in data):
        int_like = _int_like_result(node, vals, tokens.shape)
    return values, result.bad, result.message, int_like


_INT_PRESERVING = {"+", "-", "*", "%", "^", "neg", "pos", "if"}
# ops whose result depends on whether a number is an int or a float (0 indexes a list, 0.0 does not)
_PYTHON_VALUED = {"if", "getitem", "in", "to_str", "to_int", "to_float", "to_bool"}


def _int_like(operand, values: Values | None, shape) -> np.ndarray:
    """Where an operand holds what the original RASP holds as an int (Python ints stay ints)."""
    if values is None:  # a constant
        return np.full(shape, isinstance(operand, int) and not isinstance(operand, bool))
    if values.data.dtype.kind in "ib":
        return np.ones(shape, bool)
    if values.int_like is not None:
        return np.broadcast_to(values.int_like, shape)
    return np.zeros(shape, bool)


def _int_like_result(node, vals, shape) -> np.ndarray | None:
    """Float results of an elementwise op: the positions where Python would have computed an int
    (int op int for + - * %, int ^ non-negative int, -int, the chosen branch of if/else)."""
    children = node.operands([vals[c.id] for c in node.inputs])
    masks = [_int_like(op, v if isinstance(v, Values) else None, shape)
             for op, v in zip(node.operands([vals[c.id].data for c in node.inputs]), children)]
    if node.op == "if":
        cond = elementwise.truthy(children[1].data if isinstance(children[1], Values)
                                  else elementwise.as_array(children[1]))
        out = np.where(cond, masks[0], masks[2])
    elif node.op in ("neg", "pos"):
        out = masks[0]
    else:
        out = masks[0] & masks[1]
        if node.op == "^":
            exponent = children[1].data if isinstance(children[1], Values) else elementwise.as_array(children[1])
            out = out & (exponent >= 0)
    return out if out.any() else None


def _full(node, vals, tokens):
    return np.broadcast_to(as_array(node.value), tokens.shape), None, None


_NODE_FNS = {
    "tokens": lambda node, vals, tokens: (tokens, None, None),
    "indices": lambda node, vals, tokens: (np.broadcast_to(np.arange(tokens.shape[1]), tokens.shape), None, None),
    "constant": _full,
    "map": _elementwise,
    "sequencemap": _elementwise,
    "select": _select,
    "select_and": lambda node, vals, tokens: (vals[node.left.id].data & vals[node.right.id].data, None, None),
    "select_or": lambda node, vals, tokens: (vals[node.left.id].data | vals[node.right.id].data, None, None),
    "select_not": lambda node, vals, tokens: (~vals[node.inner.id].data, None, None),
    "aggregate": _aggregate,
    "select_closest": lambda node, vals, tokens: (closest.closest(vals[node.inner.id].data), None, None),
    "aggregate_sum": lambda node, vals, tokens: (
        closest.selected_sum(vals[node.selector.id].data, vals[node.sop.id].data,
                             node.label or node.describe(), node.origin), None, None),
    "selector_width": lambda node, vals, tokens: (vals[node.selector.id].data.sum(axis=-1).astype(np.int64),
                                                  None, None),
}


def run_graph(nodes: list[Node], tokens: np.ndarray, keep: set[int], deadline: float,
              limits: Limits) -> dict[int, Values]:
    """Evaluate `nodes` (topologically ordered, closed under dependencies) on a (B, n) token batch.
    Returns the values of the nodes in `keep`; others are freed as soon as nothing needs them."""
    B = tokens.shape[0]
    last_use: dict[int, int] = {}
    for n in nodes:
        for _, c in n.children():
            last_use[c.id] = n.id
    vals: dict[int, Values] = {}
    clean = [None] * B      # the error list of nodes without errors, shared: _merge sees it at once
    for node in nodes:
        if time.monotonic() > deadline:
            raise RaspError(f"evaluation took longer than {limits.eval_seconds:g} s (the time limit)",
                            None, "timeout")
        children = [vals[c.id] for _, c in node.children()]
        inherited = clean
        for ch in children:
            inherited = _merge(inherited, ch.errors)
        if any(ch.data is None for ch in children):
            vals[node.id] = Values(None, inherited)
        else:
            try:
                data, bad, message, *int_like = _NODE_FNS[node.kind](node, vals, tokens)
                own = message if isinstance(message, list) else clean if bad is None else \
                    _row_errors(bad, message, node, B)
                if mixed.is_mixed(data) and not isinstance(node, Selector):
                    own = _merge(own, _string_mixes(data, node))
                    data = _settle_failed_rows(data, _merge(inherited, own))
                vals[node.id] = Values(data, _merge(inherited, own), int_like[0] if int_like else None)
            except RaspError as e:
                e.located(node.origin)
                vals[node.id] = Values(None, _merge(inherited, [e] * B))
        for _, c in node.children():
            if last_use.get(c.id) == node.id and c.id not in keep:
                vals.pop(c.id, None)
    return {k: v for k, v in vals.items() if k in keep}


def _settle_failed_rows(data: np.ndarray, errors: list) -> np.ndarray:
    """The rows of failed inputs are never shown: fill them with a value of the other rows' type, so
    that an s-op mixed only on failed inputs becomes typed again (and its uses stay vectorised)."""
    failed = [e is not None for e in errors]
    if not any(failed) or all(failed):
        return data
    good = data[~np.array(failed)]
    if len(mixed.row_kinds(good.ravel().tolist())) != 1:
        return data
    data = data.copy()
    data[np.array(failed)] = good.flat[0]
    return mixed.settle(data)


def _string_mixes(data: np.ndarray, node) -> list:
    """Per input: the original refuses a sequence that holds strings beside other types."""
    errors: list = [None] * data.shape[0]
    for b, row in enumerate(data.tolist()):
        kinds = mixed.row_kinds(row)
        if mixed.mixes_strings(kinds):
            names = " and ".join(sorted(TYPE_NAMES.get(k, "other") for k in kinds))
            errors[b] = RaspError(f"{node.label or node.describe()}: the values on this input mix {names} "
                                  "(the original RASP refuses an s-op holding strings beside other types on one "
                                  "input)", node.origin, "type")
    return errors


def row_values(data: np.ndarray, int_like: np.ndarray | None) -> tuple[list, str]:
    """One input's values as JSON-ready Python values, and their type name. Float positions that
    the original holds as ints (int_like) are ints, as the original shows them. Values of several
    types (an object array) are shown as they are: type "float" for ints beside floats, else "mixed"."""
    values = data.tolist()
    if data.dtype.kind == "O":
        kinds = mixed.row_kinds(values)
        kind = TYPE_NAMES[kinds.pop()] if len(kinds) == 1 else "float" if kinds == {"i", "f"} else "mixed"
        return values, kind
    kind = TYPE_NAMES[data.dtype.kind]
    if int_like is not None and int_like.any():
        values = [int(v) if i else v for v, i in zip(values, int_like.tolist())]
        if int_like.all():
            kind = "int"
    return values, kind
