"""The evaluation document (docs/api.md, "Evaluate a program"): a program x inputs -> every name's values, analysis, diagnostics.

The program is interpreted (engine/interpret) into an operation graph; the graph runner
(engine/graph_runner.py) computes its values on batches of inputs of equal length and token type;
this module assembles the document, keeps a failure per input, and caches interpretations.
"""
from __future__ import annotations

import sys
import time
from collections import OrderedDict

import numpy as np

from .analysis import analyze_nodes
from .graph_runner import row_values, run_graph
from .header import default_output, parse_header
from .inputs import Input, parse_inputs
from .interpret import Interpretation, interpret, parse_program, warm
from .lang.errors import RaspError, diagnostic
from .limits import DEFAULT_LIMITS, Limits
from .program import Node, Selector, SOp

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
    if types == {"int", "float"}:
        return "float"
    return "mixed"


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


def _check_result_cells(roots: list[Node], inputs: list[Input], limits: Limits) -> RaspError | None:
    """The document's selector matrices hold (named selectors) x (sum over inputs of n x n) cells: an
    error when that is over limits.max_result_cells (each cell costs a list slot and JSON bytes)."""
    selectors = sum(1 for r in roots if isinstance(r, Selector))
    cells = selectors * sum(len(inp.array) ** 2 for inp in inputs if inp.array is not None)
    if cells <= limits.max_result_cells:
        return None
    return RaspError(f"the selector matrices of this result would hold {cells:,} cells ({selectors} selectors over "
                     f"these inputs); the limit is {limits.max_result_cells:,}: ask for fewer names, fewer or "
                     "shorter inputs", None, "limit")


def _run_inputs(inputs: list[Input], roots: list, nodes, keep: set, too_large, deadline: float,
                limits: Limits) -> tuple[list, dict, RaspError | None]:
    """Every root's value or error on every input, run in batches: (per input: node id -> ((data, int_like),
    error)), the first input each distinct error came from, and the time-out if the run stopped at one."""
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
                if r.id not in keep:
                    per_input[i][r.id] = (None, too_large)
                    continue
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
    return per_input, origin_errors, timeout


def _results(definitions: list, inputs: list[Input], per_input: list, place: dict) -> dict[str, dict]:
    """The document's `results`: every definition's layer (and head), values and errors per input."""
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
    return results


def evaluate_interpretation(interp: Interpretation, inputs: list[Input], names: list[str] | None,
                            limits: Limits, deadline: float, extra_diagnostics: list | None = None,
                            trace: int | None = None) -> dict:
    diagnostics = list(interp.diagnostics) + list(extra_diagnostics or [])
    definitions = interp.definitions
    if names is not None:
        known = {d.name for d in definitions}
        # a program stopped by its time limit may define the name on a line it never reached: say only why it stopped
        stopped = any(d.get("kind") == "timeout" for d in diagnostics)
        for name in names:
            if name not in known and not stopped:
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
    too_large = _check_result_cells(roots, inputs, limits)
    if too_large is not None:   # estimated before anything is built: the selectors' matrices are left out
        diagnostics.append(too_large.to_diagnostic())
        keep -= {r.id for r in roots if isinstance(r, Selector)}

    per_input, origin_errors, timeout = _run_inputs(inputs, roots, nodes, keep, too_large, deadline, limits)

    if timeout is not None and not any(d.get("kind") == "timeout" for d in diagnostics):
        diagnostics.append(timeout.to_diagnostic())
    for err, i in origin_errors.values():
        suffix = f" (on input {i + 1})" if len(inputs) > 1 else ""
        diagnostics.append(diagnostic(err.message + suffix, err.span, "error", err.kind))

    results = _results(definitions, inputs, per_input, place)
    output = default_output(interp)
    if output is not None and interp.ok and not any(d.name == output and isinstance(d.value, SOp)
                                                    for d in interp.definitions):
        diagnostics.append(diagnostic(f"the '# output:' header names '{output}', which is not an s-op the program "
                                      "defines; compile and train need an output s-op", None, "warning", "name"))
    doc = {
        "inputs": [inp.tokens for inp in inputs],
        "output": output,
        "title": parse_header(interp.source).get("title") or None,
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


_CACHE: "OrderedDict[tuple, tuple[Interpretation, int]]" = OrderedDict()
CACHE_SIZE = 64                 # programs kept at most
CACHE_BYTES = 64 << 20          # and at most this many bytes (estimated) in all
NODE_BYTES = 3072               # estimated bytes of one graph node with its interning entry
_cached_bytes = 0


def clear_caches() -> None:
    """Forget every cached interpretation (a server worker calls this to give memory back)."""
    global _cached_bytes
    _CACHE.clear()
    _cached_bytes = 0


def approx_bytes(interp: Interpretation, budget: int) -> int:
    """An estimate of the memory an interpretation holds: its graph nodes and the values (lists,
    dicts, strings) its names are bound to. The walk stops once past `budget`."""
    total = len(interp.graph.nodes) * NODE_BYTES + 2 * len(interp.source)
    stack = list(interp.env.vars.values()) if interp.env is not None else []
    seen: set[int] = set()
    while stack and total <= budget:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        total += sys.getsizeof(value)
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
    return total


def _interpret_cached(source: str, limits: Limits, load_dirs, deadline: float) -> Interpretation:
    """Interpretations are pure functions of the program text and limits (the graph is never
    mutated by evaluation), so a server re-evaluating the same program on new inputs skips parsing.
    Programs that load files, whose interpretation ran out of time, or that hold more than a quarter
    of CACHE_BYTES are not cached."""
    global _cached_bytes
    key = (source, limits)
    if not load_dirs and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key][0]
    interp = interpret(source, limits, load_dirs, deadline)
    cacheable = set(interp.sources) <= {"<program>", "<library>"} and not any(
        d.get("kind") == "timeout" for d in interp.diagnostics)
    if not load_dirs and cacheable:
        size = approx_bytes(interp, CACHE_BYTES // 4)
        if size <= CACHE_BYTES // 4:
            _CACHE[key] = (interp, size)
            _cached_bytes += size
            while len(_CACHE) > CACHE_SIZE or _cached_bytes > CACHE_BYTES:
                _cached_bytes -= _CACHE.popitem(last=False)[1][1]
    return interp


def evaluate(source: str, inputs=None, names: list[str] | None = None, input_format: str | None = None,
             limits: Limits | None = None, load_dirs: list | None = None, trace: int | None = None) -> dict:
    """Evaluate a RASP program on inputs and return the evaluation document (docs/api.md).

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
