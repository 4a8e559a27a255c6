// Lays out the layer x head diagram with elkjs (the Eclipse Layout Kernel, vendored in web/vendor): the
// layered algorithm top-down, orthogonal edge routing, one partition per transformer layer (so layers
// stay rows, in order), one input port per incoming edge (edges arrive at distinct points) and one output
// port per box (edges from one source may share their first segment; edges from different sources never
// share one). The kernel is loaded on first use (it is large) and runs in the page: no worker, no eval.

let kernel = null;

function elk() {
  kernel = kernel || import("./elk.js").then((m) => new m.default());
  return kernel;
}

const OPTIONS = {
  "elk.algorithm": "layered",
  "elk.direction": "DOWN",
  "elk.edgeRouting": "ORTHOGONAL",
  "elk.partitioning.activate": "true",
  "elk.separateConnectedComponents": "false",
  "elk.layered.mergeEdges": "false",
  "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
  "elk.layered.crossingMinimization.forceNodeModelOrder": "false",
  "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
  "elk.spacing.nodeNode": "28",
  "elk.layered.spacing.nodeNodeBetweenLayers": "34",
  "elk.layered.spacing.edgeNodeBetweenLayers": "14",
  "elk.spacing.edgeEdge": "9",
  "elk.spacing.edgeNode": "14",
  "elk.layered.spacing.edgeEdgeBetweenLayers": "9",
  "elk.padding": "[top=12,left=12,bottom=12,right=12]",
};

// units: [{id, w, h, row}], edges: [{from, to}] (unit ids; `row` is the transformer layer, 0 the input).
// Returns {width, height, boxes: Map id -> {x, y, w, h}, edges: [{from, to, points: [[x, y], ...]}]}.
export async function layoutDiagram(units, edges) {
  const incoming = new Map(units.map((u) => [u.id, []]));
  edges.forEach((e, i) => incoming.get(e.to).push(i));
  const hasOut = new Set(edges.map((e) => e.from));
  const graph = {
    id: "root",
    layoutOptions: OPTIONS,
    children: units.map((u) => ({
      id: u.id, width: u.w, height: u.h,
      layoutOptions: { "elk.partitioning.partition": String(u.row), "elk.portConstraints": "FIXED_SIDE" },
      ports: [
        ...(hasOut.has(u.id) ? [{ id: `${u.id}>`, width: 2, height: 2, layoutOptions: { "elk.port.side": "SOUTH" } }] : []),
        ...incoming.get(u.id).map((i) => ({ id: `${u.id}<${i}`, width: 2, height: 2, layoutOptions: { "elk.port.side": "NORTH" } })),
      ],
    })),
    edges: edges.map((e, i) => ({ id: `e${i}`, sources: [`${e.from}>`], targets: [`${e.to}<${i}`] })),
  };
  const out = await (await elk()).layout(graph);
  const boxes = new Map(out.children.map((c) => [c.id, { x: c.x, y: c.y, w: c.width, h: c.height }]));
  const routed = out.edges.map((e, i) => {
    const points = [];
    for (const s of e.sections || []) {
      for (const p of [s.startPoint, ...(s.bendPoints || []), s.endPoint]) {
        const last = points[points.length - 1];
        if (!last || last[0] !== p.x || last[1] !== p.y) points.push([p.x, p.y]);
      }
    }
    return { from: edges[i].from, to: edges[i].to, points };
  });
  return { width: out.width, height: out.height, boxes, edges: routed };
}
