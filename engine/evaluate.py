"""Operation graph x batch of inputs -> numpy values, and the evaluation document (DESIGN section 4).

Inputs of equal length and token type evaluate together as one batch: an s-op's values are a
(batch, n) array and a selector's a (batch, n, n) boolean array (rows = queries, columns = keys).
Aggregates gather the one selected value per query (a masked gather) and average only the rows
that select several (a matrix product). Nothing loops over positions in Python.

A failure is kept per input: each node's values carry one error slot per batch row, so an error
on one input, or in one name, leaves the others intact.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import elementwise
from .analysis import analyze_nodes
from .elementwise import TYPE_NAMES, as_array, type_of
from .inputs import Input, parse_inputs
from .interpret import Interpretation, interpret, parse_program, warm
from .lang.errors import RaspError, diagnostic, positions_phrase
from .limits import DEFAULT_LIMITS, Limits
from .program import Node, Selector, SOp


@dataclass
class Values:
    """One node's values on one batch: data is None when every row failed."""
    data: np.ndarray | None
    errors: list  # RaspError | None per batch row
    int_like: np.ndarray | None = None  # float data: where the original RASP holds an int (see _aggregate)


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
    return [a if a is not None else b for a, b in zip(first, second)]


def _select(node, vals, tokens):
    keys, queries = vals[node.keys.id].data, vals[node.queries.id].data
    if keys.dtype.kind == "U" and queries.dtype.kind == "U":
        # compare strings through their rank among all values: same order, integer speed
        _, codes = np.unique(np.concatenate([keys.ravel(), queries.ravel()]), return_inverse=True)
        keys, queries = codes[:keys.size].reshape(keys.shape), codes[keys.size:].reshape(queries.shape)
    return elementwise.compare(node.predicate, keys[:, None, :], queries[:, :, None]), None, None


def _aggregate(node, vals, tokens):
    sel, v = vals[node.selector.id].data, vals[node.sop.id].data
    B, n = v.shape
    counts = sel.sum(axis=-1)
    out = np.take_along_axis(v, sel.argmax(axis=-1), axis=1)
    errors = [None] * B
    multi = counts > 1
    # The original keeps each position's value as Python made it: a single selected int stays an
    # int and an int default stays an int, even where other positions average to floats.
    default_is_int = isinstance(node.default, int) and not isinstance(node.default, bool)
    int_like = ((counts == 1) if v.dtype.kind == "i" else np.zeros(counts.shape, bool)) | (
        (counts == 0) & default_is_int)
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


def _queries(positions, verb: str) -> str:
    """'query position 4 selects' / 'query positions 1, 2 select'."""
    return f"query {positions_phrase(positions)} {verb}{'s' if len(positions) == 1 else ''}"


def _example_default(values: np.ndarray) -> str:
    return {"U": '"-"', "b": "False", "f": "0.0"}.get(values.dtype.kind, "0")


def _elementwise(node, vals, tokens):
    operands = node.operands([vals[c.id].data for c in node.inputs])
    result = elementwise.apply(node.op, operands)
    values = result.values
    if values.shape != tokens.shape:
        values = np.broadcast_to(values, tokens.shape).copy()
    int_like = None
    if values.dtype.kind == "f" and node.op in _INT_PRESERVING:
        int_like = _int_like_result(node, vals, tokens.shape)
    return values, result.bad, result.message, int_like


_INT_PRESERVING = {"+", "-", "*", "%", "^", "neg", "pos", "if"}


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
    for node in nodes:
        if time.monotonic() > deadline:
            raise RaspError(f"evaluation took longer than {limits.eval_seconds:g} s (the time limit)",
                            None, "timeout")
        children = [vals[c.id] for _, c in node.children()]
        inherited = [None] * B
        for ch in children:
            inherited = _merge(inherited, ch.errors)
        if any(ch.data is None for ch in children):
            vals[node.id] = Values(None, inherited)
        else:
            try:
                data, bad, message, *int_like = _NODE_FNS[node.kind](node, vals, tokens)
                own = message if isinstance(message, list) else _row_errors(bad, message, node, B)
                vals[node.id] = Values(data, _merge(inherited, own), int_like[0] if int_like else None)
            except RaspError as e:
                e.located(node.origin)
                vals[node.id] = Values(None, _merge(inherited, [e] * B))
        for _, c in node.children():
            if last_use.get(c.id) == node.id and c.id not in keep:
                vals.pop(c.id, None)
    return {k: v for k, v in vals.items() if k in keep}


def row_values(data: np.ndarray, int_like: np.ndarray | None) -> tuple[list, str]:
    """One input's values as JSON-ready Python values, and their type name. Float positions that
    the original holds as ints (int_like) are ints, as the original shows them."""
    values = data.tolist()
    kind = TYPE_NAMES[data.dtype.kind]
    if int_like is not None and int_like.any():
        values = [int(v) if i else v for v, i in zip(values, int_like.tolist())]
        if int_like.all():
            kind = "int"
    return values, kind


# ------------------------------------------------------------------ batching

def _batches(inputs: list[Input], limits: Limits) -> list[tuple[list[int], np.ndarray]]:
    groups: dict[tuple, list[int]] = {}
    for i, inp in enumerate(inputs):
        if inp.array is not None:
            groups.setdefault((len(inp.array), inp.array.dtype.kind), []).append(i)
    out = []
    for (n, _), rows in groups.items():
        per_batch = max(1, limits.max_cells // max(n * n, 1))
        for start in range(0, len(rows), per_batch):
            chunk = rows[start:start + per_batch]
            out.append((chunk, np.stack([inputs[i].array for i in chunk])))
    return out


# ------------------------------------------------------------------ the evaluation document

def _format_error(e: RaspError) -> str:
    if e.span is None:
        return e.message
    where = f"line {e.span.line}, col {e.span.col}"
    if e.span.source != "<program>":
        where = f"{e.span.source} {where}"
    return f"{e.message} ({where})"


def _join_type(types: set[str]) -> str | None:
    if not types:
        return None
    if len(types) == 1:
        return next(iter(types))
    if types <= {"int", "float", "bool"}:
        return "float" if "float" in types else "int"
    return "|".join(sorted(types))


def _trace(interp: Interpretation, nodes: list[Node], inp: Input, limits: Limits, deadline: float) -> dict:
    """Every graph node's values on one input: what the browser needs for hovers, thumbnails and the
    heatmaps of unnamed selectors."""
    out: dict[str, dict] = {}
    if inp.array is None:
        return out
    vals = run_graph(nodes, inp.array[None, :], {n.id for n in nodes}, deadline, limits)
    for node in nodes:
        v = vals[node.id]
        err = v.errors[0]
        if err is not None:
            out[str(node.id)] = {"values": None, "error": _format_error(err)}
        elif isinstance(node, Selector):
            out[str(node.id)] = {"values": v.data[0].astype(np.int8).tolist(), "error": None}
        else:
            row, kind = row_values(v.data[0], None if v.int_like is None else v.int_like[0])
            out[str(node.id)] = {"values": row, "type": kind, "error": None}
    return out


def evaluate_interpretation(interp: Interpretation, inputs: list[Input], names: list[str] | None,
                            limits: Limits, deadline: float, extra_diagnostics: list | None = None,
                            trace: int | None = None) -> dict:
    diagnostics = list(interp.diagnostics) + list(extra_diagnostics or [])
    definitions = interp.definitions
    if names is not None:
        known = {d.name for d in definitions}
        for name in names:
            if name not in known:
                diagnostics.append(diagnostic(f"the program defines no s-op or selector named '{name}'", None,
                                              "error", "name"))
        definitions = [d for d in definitions if d.name in set(names)]
    roots = [d.value for d in definitions]
    key = ("analysis", tuple(names) if names is not None else None)
    if key not in interp.memo:  # an interpretation is immutable: its analysis (and node order) can be kept
        analysis = analyze_nodes(interp, roots)
        interp.memo[key] = (analysis, {n["id"]: (n["layer"], n["head"]) for n in analysis["graph"]["nodes"]},
                            interp.graph.ancestors(roots))
    analysis, place, nodes = interp.memo[key]
    keep = {r.id for r in roots}

    per_input: list[dict[int, tuple]] = [dict() for _ in inputs]  # input -> node id -> (row data, error)
    for i, inp in enumerate(inputs):
        if inp.error is not None:
            for r in roots:
                per_input[i][r.id] = (None, inp.error)
    origin_errors: dict[tuple, tuple[RaspError, int]] = {}
    timeout: RaspError | None = None
    for rows, tokens in _batches(inputs, limits):
        try:
            vals = run_graph(nodes, tokens, keep, deadline, limits) if timeout is None else None
        except RaspError as e:
            timeout = e
            vals = None
        for b, i in enumerate(rows):
            for r in roots:
                if vals is None:
                    per_input[i][r.id] = (None, timeout)
                    continue
                v = vals[r.id]
                err = v.errors[b]
                if err is not None:
                    per_input[i][r.id] = (None, err)
                    key = (err.span, err.kind, err.message.split(" at position")[0])
                    origin_errors.setdefault(key, (err, i))
                else:
                    per_input[i][r.id] = ((v.data[b], None if v.int_like is None else v.int_like[b]), None)

    if timeout is not None and not any(d.get("kind") == "timeout" for d in diagnostics):
        diagnostics.append(timeout.to_diagnostic())
    for err, i in origin_errors.values():
        suffix = f" (on input {i + 1})" if len(inputs) > 1 else ""
        diagnostics.append(diagnostic(err.message + suffix, err.span, "error", err.kind))

    results: dict[str, dict] = {}
    for d in definitions:
        node = d.value
        layer, head = place.get(node.id, (0, None))
        values, errors, types = [], [], set()
        for i in range(len(inputs)):
            data, err = per_input[i][node.id]
            if err is not None:
                values.append(None)
                errors.append(_format_error(err))
                continue
            data, int_like = data
            if isinstance(node, Selector):
                values.append(data.astype(np.int8).tolist())
            else:
                row, kind = row_values(data, int_like)
                values.append(row)
                types.add(kind)
            errors.append(None)
        if isinstance(node, SOp):
            results[d.name] = {"kind": "sop", "type": _join_type(types), "layer": layer,
                               "values": values, "errors": errors}
        else:
            results[d.name] = {"kind": "selector", "layer": layer, "head": head,
                               "values": values, "errors": errors}
    doc = {
        "inputs": [inp.tokens for inp in inputs],
        "results": results,
        "analysis": {"layers": analysis["layers"], "heads_per_layer": analysis["heads_per_layer"],
                     "heads": analysis["heads"], "mlps": analysis["mlps"], "graph": analysis["graph"]},
        "diagnostics": diagnostics,
    }
    if trace is not None and 0 <= trace < len(inputs) and timeout is None:
        try:
            doc["trace"] = {"input": trace, "nodes": _trace(interp, nodes, inputs[trace], limits, deadline)}
        except RaspError as e:
            diagnostics.append(e.to_diagnostic())
    return doc


_CACHE: "OrderedDict[tuple, Interpretation]" = OrderedDict()
CACHE_SIZE = 64


def _interpret_cached(source: str, limits: Limits, load_dirs, deadline: float) -> Interpretation:
    """Interpretations are pure functions of the program text and limits (the graph is never
    mutated by evaluation), so a server re-evaluating the same program on new inputs skips parsing.
    Programs that load files, or whose interpretation ran out of time, are not cached."""
    key = (source, limits)
    if not load_dirs and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    interp = interpret(source, limits, load_dirs, deadline)
    cacheable = set(interp.sources) <= {"<program>", "<library>"} and not any(
        d.get("kind") == "timeout" for d in interp.diagnostics)
    if not load_dirs and cacheable:
        _CACHE[key] = interp
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return interp


def evaluate(source: str, inputs=None, names: list[str] | None = None, input_format: str | None = None,
             limits: Limits | None = None, load_dirs: list | None = None, trace: int | None = None) -> dict:
    """Evaluate a RASP program on inputs and return the evaluation document (DESIGN section 4).

    inputs: strings (one token per character) or lists of tokens; with input_format "json",
    strings holding JSON lists. When no inputs are given, the program's `set example` is used.
    Never raises for a problem in the program or its inputs: those become diagnostics and errors.
    trace=k adds "trace": the values of every graph node (named or not) on input k.
    """
    limits = limits or DEFAULT_LIMITS
    warm()  # the parser and the library are rasplay's, built once, outside the program's time limit
    if len(source) <= limits.max_source_chars and not ((source, limits) in _CACHE and not load_dirs):
        parse_program(source)  # parsing is linear in the bounded program size: outside the time limit
    deadline = time.monotonic() + limits.eval_seconds
    interp = _interpret_cached(source, limits, load_dirs, deadline)
    items = list(inputs) if inputs is not None else []
    if not items and interp.example is not None:
        items = [interp.example]
    parsed, request_error = parse_inputs(items, input_format, limits)
    extra = [request_error.to_diagnostic()] if request_error else []
    extra += [diagnostic(inp.error.message, None, "error", inp.error.kind) for inp in parsed if inp.error]
    return evaluate_interpretation(interp, parsed, names, limits, deadline, extra, trace)
