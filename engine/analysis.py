"""Layer and head allocation (docs/language.md, "Layers and heads") and the dependency graph for diagrams.

Depth: inputs and constants 0; elementwise ops the max of their inputs; a selector the max of its
key and query depths + 1 (and/or/not and select_closest: the max of their parts); an aggregate the max of
its selector's depth and its value's depth + 1; selector_width and aggregate_sum like an aggregate. The program needs as
many layers as the largest depth. Heads of layer L: the distinct selectors aggregated at depth L
(selectors are interned, so structurally identical ones are one head). Elementwise ops at depth L
are layer L's MLP; those at depth 0 are functions of the input alone (the embedding).
"""
from __future__ import annotations

from .interpret import Interpretation
from .program import ATTENTION_KINDS, ROLES, Node, Selector


def depths(nodes: list[Node]) -> dict[int, int]:
    """The depth of every node in `nodes` (a topologically ordered, closed set)."""
    d: dict[int, int] = {}
    for n in nodes:
        kids = [c for _, c in n.children()]
        if n.kind == "select":
            d[n.id] = max(d[c.id] for c in kids) + 1
        elif n.kind in ("aggregate", "aggregate_sum"):
            d[n.id] = max(d[n.selector.id], d[n.sop.id] + 1)
        elif n.kind == "selector_width":
            d[n.id] = max(d[n.selector.id], 1)
        else:
            d[n.id] = max((d[c.id] for c in kids), default=0)
    return d


SHORT = 18   # characters: a generated head name built from parts at most this long


def expression(interp: Interpretation, node: Node) -> str:
    """The node's full source text (its label may be shortened), else its description."""
    span = node.span
    if span is not None and span.source in interp.sources:
        return " ".join(span.text(interp.sources[span.source]).split())
    return node.label or node.describe()


def own_name(interp: Interpretation, node: Node) -> str | None:
    names = interp.node_names.get(node.id)
    name = names[0] if names else interp.local_names.get(node.id)
    return name.replace("…", "...") if name else None   # `f(…)`: what a call returned (its arguments elided)


def short_name(interp: Interpretation, node: Node) -> str | None:
    """A node's own name; for an unnamed selector one generated from its parts' names (`keys op queries`,
    `a and b`, `not a`) when that stays short; None otherwise (its label is the full expression)."""
    name = own_name(interp, node)
    if name is not None:
        return name
    if node.kind in ("tokens", "indices"):
        return node.kind
    if node.kind == "constant":
        text = node.describe()
        return text if len(text) <= SHORT else None
    parts = None
    if node.kind == "select":
        k, q = short_name(interp, node.keys), short_name(interp, node.queries)
        parts = k and q and f"{k} {node.predicate} {q}"
    elif node.kind in ("select_and", "select_or"):
        a, b = short_name(interp, node.left), short_name(interp, node.right)
        parts = a and b and f"({a}) {node.kind[7:]} ({b})"
    elif node.kind == "select_not":
        a = short_name(interp, node.inner)
        parts = a and f"not ({a})"
    elif node.kind == "select_closest":
        a = short_name(interp, node.inner)
        parts = a and f"closest({a})"
    return parts if parts and len(parts) <= 2 * SHORT else None


UNOWNED = ("tokens", "indices", "constant")   # the inputs and constants are nobody's part


def part_of(interp: Interpretation, nodes: list[Node]) -> dict[int, str]:
    """The name the program gives each node, or for an unnamed one (`aggregate(...)` inside an expression)
    the name of the nearest named node built on it (the first user in program order that has one): what
    the diagram says instead of "unnamed". Nodes with no named user are left out."""
    users: dict[int, list[Node]] = {}
    for n in nodes:
        for _, c in n.children():
            users.setdefault(c.id, []).append(n)
    out: dict[int, str] = {}
    for n in reversed(nodes):          # users before the nodes they use
        names = interp.node_names.get(n.id)
        if names:
            out[n.id] = names[0]
            continue
        owner = next((out[u.id] for u in users.get(n.id, []) if u.id in out), None)
        if owner is not None:
            out[n.id] = owner
    return out


def display_names(interp: Interpretation, heads: list[list[dict]], owners: dict[int, str] | None = None) -> None:
    """Give every head a `display` text that no other head shows: its selector's name (or a short
    generated one, else `selector of <name>` after what the head computes, else `L<layer> head <slot>`);
    where two heads would read the same, the layer is added (`s (L2)`), or the selector id where they share
    a layer too (`s #9`)."""
    flat = [h for row in heads for h in row]
    groups: dict[str, list[dict]] = {}
    owners = owners or {}
    for h in flat:
        computes = next((owners[op] for op in h["ops"] if op in owners), None)
        text = (short_name(interp, interp.graph.nodes[h["selector"]])
                or (f"selector of {computes}" if computes else f"L{h['layer']} head {h['slot']}"))
        groups.setdefault(text, []).append(h)
    for text, group in groups.items():
        layers = [h["layer"] for h in group]
        for h in group:
            if len(group) == 1:
                h["display"] = text
            elif layers.count(h["layer"]) == 1:
                h["display"] = f"{text} (L{h['layer']})"
            else:
                h["display"] = f"{text} #{h['selector']}"
    seen: dict[str, int] = {}
    for h in flat:   # a suffixed text that is another head's own name (`s (L2)` named so): the slot decides
        seen[h["display"]] = seen.get(h["display"], 0) + 1
    for h in flat:
        if seen[h["display"]] > 1:
            h["display"] += f" [L{h['layer']}.{h['slot']}]"


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
                    "expression": expression(interp, n.selector),
                    "ops": [],
                })
            node_head[n.id] = head_of[key]
            heads[layer - 1][head_of[key]]["ops"].append(n.id)

    owners = part_of(interp, nodes)
    display_names(interp, heads, owners)

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
            "id": n.id, "kind": n.kind, "role": ROLES[n.kind], "name": interp.display_name(n), "names": interp.node_names.get(n.id, []),
            "label": n.label or n.describe(), "layer": layer, "head": slot,
            "part_of": None if interp.node_names.get(n.id) or n.kind in UNOWNED else owners.get(n.id),
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
