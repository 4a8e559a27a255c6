"""Where did a value come from? The cells one value read, through every layer, on one input.

The value of s-op X at position i was computed from other cells of the same input:
- an elementwise op (map, sequencemap) read its inputs at the same position i;
- an aggregate at query i read its value s-op at the keys its selector's row i selects (none: the
  default, nothing read), and the selector compared its query s-op at i with its key s-op at those keys;
- a selector_width at query i counted the keys its selector's row i selects (it reads no value s-op);
- `and`, `or`, `not` pass the (query, key) cells the attention used on to their parts; `select_closest`
  passes on the whole rows of the queries asked (which key is the closest depends on every key's cell);
- an aggregate_sum reads like an aggregate (its value s-op at the keys selected).
Walking the graph from the value back to the input collects, for every node, the positions (s-ops) or
(query, key) cells (selectors) on the path. The selectors' matrices are those of this input, so the
answer is exact for it. Vectorised over positions: one boolean mask per node.
"""
from __future__ import annotations

import time

import numpy as np

from .lang.errors import RaspError
from .limits import DEFAULT_LIMITS, Limits
from .program import ATTENTION_KINDS, Node, Selector

SELECTOR_PARTS = {"select_and": ("left", "right"), "select_or": ("left", "right"), "select_not": ("inner",)}


def trace_provenance(nodes: list[Node], matrices: dict[int, np.ndarray], layer_of: dict[int, int], target: int,
                     position: int, n: int) -> tuple[dict[int, dict[int, np.ndarray]], dict[int, dict[int, np.ndarray]]]:
    """`nodes` topologically ordered and closed under dependencies; `matrices[id]` the (query, key) 0/1
    matrix of every selector on this input (length `n`); `layer_of[id]` every node's layer. Returns
    (positions, cells): per s-op node on the path, per layer of the head or MLP that read it, the boolean
    mask of positions read (the value itself: read at its own layer); per selector node, per layer of the
    head that used it, the boolean (query, key) mask of cells used (for an attention node: its rows are the
    queries asked, its columns the keys read)."""
    positions: dict[int, dict[int, np.ndarray]] = {}
    cells: dict[int, dict[int, np.ndarray]] = {}

    def mark(table, node_id: int, layer: int, mask: np.ndarray) -> None:
        if mask.any():
            row = table.setdefault(node_id, {})
            row[layer] = row[layer] | mask if layer in row else mask.copy()

    start = np.zeros(n, bool)
    start[position] = True
    mark(positions, target, layer_of[target], start)
    for node in reversed(nodes):            # users before what they read
        if isinstance(node, Selector):
            for layer, used in cells.get(node.id, {}).items():
                if node.kind == "select":
                    mark(positions, node.queries.id, layer, used.any(axis=1))
                    mark(positions, node.keys.id, layer, used.any(axis=0))
                    continue
                if node.kind == "select_closest":
                    rows = np.broadcast_to(used.any(axis=1)[:, None], used.shape)
                    mark(cells, node.inner.id, layer, rows.copy())
                    continue
                for part in SELECTOR_PARTS[node.kind]:
                    # `and`: both parts selected every used cell; `or`: a part counts where it selected;
                    # `not`: its part decided every cell (there by not selecting it)
                    child = getattr(node, part)
                    own = matrices[child.id].astype(bool)
                    mark(cells, child.id, layer, used & own if node.kind == "select_or" else used)
            continue
        if node.id not in positions:
            continue
        asked = np.logical_or.reduce(list(positions[node.id].values()))
        layer = layer_of[node.id]
        if node.kind in ATTENTION_KINDS:
            read = matrices[node.selector.id].astype(bool) & asked[:, None]
            mark(cells, node.selector.id, layer, read)
            if node.kind in ("aggregate", "aggregate_sum"):
                mark(positions, node.sop.id, layer, read.any(axis=0))
        elif node.kind in ("map", "sequencemap"):
            for _, child in node.children():
                mark(positions, child.id, layer, asked)
    return positions, cells


def provenance_document(interp, nodes: list[Node], place: dict[int, tuple[int, int | None]],
                        matrices: dict[int, np.ndarray], target: int, position: int, n: int) -> dict:
    """The JSON form: the heads on the path (with the query rows and the keys each read), every s-op on
    the path with the positions read, per layer of the head or MLP that read them (`reads`), the selectors'
    cells used, and the layers whose MLP computed an op on the path. A page stepping back one layer at a
    time shows, at layer L, the heads and MLPs of layers >= L and the cells they read."""
    layer_of = {node.id: place[node.id][0] for node in nodes}
    positions, cells = trace_provenance(nodes, matrices, layer_of, target, position, n)
    union = {i: np.logical_or.reduce(list(by_layer.values())) for i, by_layer in positions.items()}
    by_id = {node.id: node for node in nodes}
    heads, sops = [], []
    for node in nodes:
        if node.kind in ATTENTION_KINDS and node.id in union:
            read = matrices[node.selector.id].astype(bool) & union[node.id][:, None]
            layer, head = place[node.id]
            heads.append({
                "node": node.id, "name": interp.display_name(node), "layer": layer, "head": head,
                "selector": node.selector.id,
                "reads": [{"query": int(q), "keys": np.flatnonzero(read[q]).tolist()}
                          for q in np.flatnonzero(union[node.id])],
            })
        if not isinstance(node, Selector) and node.kind != "constant" and node.id in union:
            sops.append({"node": node.id, "name": interp.display_name(node), "kind": node.kind,
                         "layer": layer_of[node.id], "positions": np.flatnonzero(union[node.id]).tolist(),
                         "reads": [{"layer": layer, "positions": np.flatnonzero(mask).tolist()}
                                   for layer, mask in sorted(positions[node.id].items(), reverse=True)]})
    selectors = [{"node": i, "layer": layer_of[i],
                  "cells": np.argwhere(np.logical_or.reduce(list(by_layer.values()))).tolist()}
                 for i, by_layer in cells.items() if i in by_id]
    return {"node": target, "name": interp.display_name(by_id[target]), "position": position,
            "layer": layer_of[target], "heads": heads, "sops": sops, "selectors": selectors,
            "mlps": sorted({s["layer"] for s in sops if s["kind"] in ("map", "sequencemap")})}


def provenance(source: str, inp, position: int, node: int | None = None, name: str | None = None,
               input_format: str | None = None, limits: Limits | None = None) -> dict:
    """The provenance of the value of s-op `name` (or graph node `node`) at `position` on input `inp`:
    {"provenance": {...}} or {"error": {"kind", "message"}} when it cannot be given (unknown name, a
    program or input error, a position outside the input)."""
    from .evaluate import _interpret_cached, warm
    from .graph_runner import run_graph
    from .inputs import parse_inputs

    limits = limits or DEFAULT_LIMITS
    warm()
    deadline = time.monotonic() + limits.eval_seconds
    interp = _interpret_cached(source, limits, None, deadline)
    parsed, err = parse_inputs([inp], input_format, limits)
    if err is not None or parsed[0].error is not None:
        return {"error": {"kind": "input", "message": (err or parsed[0].error).message}}
    tokens = parsed[0].array
    roots = [d.value for d in interp.definitions]
    if name is not None:
        found = [d.value for d in interp.definitions if d.name == name]
        if not found:
            return {"error": {"kind": "name", "message": f"the program defines no s-op named '{name}'"}}
        node = found[0].id
    nodes = interp.graph.ancestors(roots)
    by_id = {x.id: x for x in nodes}
    if node not in by_id or isinstance(by_id[node], Selector):
        return {"error": {"kind": "name", "message": f"the program has no s-op node #{node}"}}
    if not 0 <= position < len(tokens):
        return {"error": {"kind": "position",
                          "message": f"position {position} is outside the input (length {len(tokens)})"}}
    nodes = interp.graph.ancestors([by_id[node]])
    from .analysis import analyze_nodes
    analysis = analyze_nodes(interp, roots)
    place = {g["id"]: (g["layer"], g["head"]) for g in analysis["graph"]["nodes"]}
    try:
        vals = run_graph(nodes, tokens[None, :], {x.id for x in nodes}, deadline, limits)
    except RaspError as e:
        return {"error": {"kind": e.kind or "timeout", "message": e.message}}
    if vals[node].errors[0] is not None:
        return {"error": {"kind": "value", "message": f"this value could not be computed: {vals[node].errors[0].message}"}}
    matrices = {x.id: vals[x.id].data[0] for x in nodes if isinstance(x, Selector)}
    return {"provenance": provenance_document(interp, nodes, place, matrices, node, position, len(tokens))}
