"""Pass 2, extract the graph: the nodes the output needs, their depths (= layers), their consumers."""
from __future__ import annotations

from dataclasses import dataclass

from ..analysis import analyze_nodes, depths
from ..program import ATTENTION_KINDS, Node
from .validate import Program


@dataclass
class ProgramGraph:
    nodes: list[Node]                 # the output's ancestors, in topological (id) order
    depth: dict[int, int]             # node id -> layer (docs/language.md, "Layers and heads")
    layers: int                       # the analysis' layer count
    heads_per_layer: list[int]        # the analysis' heads per layer
    consumers: dict[int, list[Node]]  # node id -> nodes that use it
    by_id: dict[int, Node]

    def attention_nodes(self, layer: int) -> list[Node]:
        return [n for n in self.nodes if n.kind in ATTENTION_KINDS and self.depth[n.id] == layer]


def extract_graph(program: Program) -> ProgramGraph:
    nodes = program.interp.graph.ancestors([program.output])
    depth = depths(nodes)
    analysis = analyze_nodes(program.interp, [program.output])
    consumers: dict[int, list[Node]] = {n.id: [] for n in nodes}
    for n in nodes:
        for _, c in n.children():
            consumers[c.id].append(n)
    return ProgramGraph(nodes, depth, analysis["layers"], analysis["heads_per_layer"], consumers,
                        {n.id: n for n in nodes})
