"""Layer and head allocation (DESIGN section 3) and the dependency graph for diagrams.

Depth: inputs and constants 0; elementwise ops the max of their inputs; a selector the max of its
key and query depths + 1 (and/or/not: the max of their parts); an aggregate the max of its
selector's depth and its value's depth + 1; selector_width like an aggregate. The program needs as
many layers as the largest depth. Heads of layer L: the distinct selectors aggregated at depth L
(selectors are interned, so structurally identical ones are one head). Elementwise ops at depth L
are layer L's MLP; those at depth 0 are functions of the input alone (the embedding).
"""
from __future__ import annotations

from .interpret import Interpretation
from .program import ATTENTION_KINDS, Node, Selector


def depths(nodes: list[Node]) -> dict[int, int]:
    """The depth of every node in `nodes` (a topologically ordered, closed set)."""
    d: dict[int, int] = {}
    for n in nodes:
        kids = [c for _, c in n.children()]
        if n.kind == "select":
            d[n.id] = max(d[c.id] for c in kids) + 1
        elif n.kind == "aggregate":
            d[n.id] = max(d[n.selector.id], d[n.sop.id] + 1)
        elif n.kind == "selector_width":
            d[n.id] = max(d[n.selector.id], 1)
        else:
            d[n.id] = max((d[c.id] for c in kids), default=0)
    return d


def analyze_nodes(interp: Interpretation, roots: list[Node]) -> dict:
    """Layers, heads and MLPs of everything `roots` need, and the dependency graph."""
    nodes = interp.graph.ancestors(roots)
    depth = depths(nodes)
    layers = max((depth[r.id] for r in roots), default=0)
    layers = max([layers] + [depth[n.id] for n in nodes])

    heads: list[list[dict]] = [[] for _ in range(layers)]
    head_of: dict[tuple[int, int], int] = {}   # (layer, selector id) -> slot
    node_head: dict[int, int] = {}             # aggregate / selector_width id -> slot
    for n in nodes:
        if n.kind in ATTENTION_KINDS:
            layer = depth[n.id]
            key = (layer, n.selector.id)
            if key not in head_of:
                head_of[key] = len(heads[layer - 1])
                heads[layer - 1].append({
                    "layer": layer, "slot": head_of[key], "selector": n.selector.id,
                    "name": interp.display_name(n.selector), "label": n.selector.label or n.selector.describe(),
                    "ops": [],
                })
            node_head[n.id] = head_of[key]
            heads[layer - 1][head_of[key]]["ops"].append(n.id)

    # heads that would share a name (an unnamed selector used twice, e.g. inside `sort`) are told apart by
    # what they compute
    by_name: dict[str, int] = {}
    for head in (h for layer_heads in heads for h in layer_heads):
        by_name[head["name"]] = by_name.get(head["name"], 0) + 1
    by_id = {n.id: n for n in nodes}
    for head in (h for layer_heads in heads for h in layer_heads):
        if by_name[head["name"]] > 1 and head["ops"]:
            head["name"] = f"{head['name']} (for {', '.join(interp.display_name(by_id[i]) for i in head['ops'])})"

    selector_place: dict[int, tuple[int, int | None]] = {}
    for (layer, sel_id), slot in sorted(head_of.items()):
        selector_place.setdefault(sel_id, (layer, slot))

    mlps: list[list[int]] = [[] for _ in range(layers + 1)]
    for n in nodes:
        if n.kind in ("map", "sequencemap"):
            mlps[depth[n.id]].append(n.id)

    graph_nodes = []
    for n in nodes:
        if isinstance(n, Selector):
            layer, slot = selector_place.get(n.id, (depth[n.id], None))
        else:
            layer, slot = depth[n.id], node_head.get(n.id)
        graph_nodes.append({
            "id": n.id, "kind": n.kind, "name": interp.display_name(n), "names": interp.node_names.get(n.id, []),
            "label": n.label or n.describe(), "layer": layer, "head": slot,
            "span": n.span.to_json() if n.span else None,
            "source": n.span.source if n.span else None,
        })
    edges = [{"source": c.id, "target": n.id, "role": role} for n in nodes for role, c in n.children()]
    return {
        "layers": layers,
        "heads_per_layer": [len(h) for h in heads],
        "heads": heads,
        "mlps": mlps,
        "graph": {"nodes": graph_nodes, "edges": edges},
    }
