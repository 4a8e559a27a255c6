// The layer x head diagram: the paper's head/layer analysis made interactive. Layers are rows; each
// head is a box named after its selector with a thumbnail of its pattern on the traced input; each
// layer has an MLP strip listing its elementwise ops; edges show what feeds what.

import { graphIndex, SELECTOR_KINDS, traced } from "./docmodel.js";

const NS = "http://www.w3.org/2000/svg";
const ROW_H = 92, HEAD_W = 132, HEAD_H = 72, GAP = 14, LABEL_W = 70, MLP_W = 190, THUMB = 40;

function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.append(node);
  return node;
}

function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

function unitOfNodes(doc) {
  const { nodes, users } = graphIndex(doc);
  const unit = new Map();
  const ids = [...nodes.keys()].sort((a, b) => b - a);   // users before their inputs
  for (const id of [...ids].reverse()) {
    const n = nodes.get(id);
    if (n.kind === "tokens" || n.kind === "indices") unit.set(id, `in:${n.kind}`);
    else if (n.kind === "map" || n.kind === "sequencemap") unit.set(id, `mlp:${n.layer}`);
    else if ((n.kind === "aggregate" || n.kind === "selector_width") && n.head !== null) unit.set(id, `h:${n.layer}:${n.head}`);
    else if (SELECTOR_KINDS.has(n.kind) && n.head !== null) unit.set(id, `h:${n.layer}:${n.head}`);
  }
  for (const id of ids) {  // selectors that are parts of combined selectors belong to their combination's head
    const n = nodes.get(id);
    if (SELECTOR_KINDS.has(n.kind) && !unit.has(id)) {
      const owner = (users.get(id) || []).find((u) => unit.has(u) && SELECTOR_KINDS.has(nodes.get(u).kind));
      if (owner !== undefined) unit.set(id, unit.get(owner));
    }
  }
  return unit;
}

function thumbnail(group, matrix, x, y) {
  const n = matrix.length;
  const k = Math.min(n, 20);                       // at most 20 x 20 cells, max-pooled
  const step = n / k, cell = THUMB / k;
  svg("rect", { x, y, width: THUMB, height: THUMB, fill: "#fff", stroke: "#c5ced8" }, group);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      let on = false;
      for (let a = Math.floor(i * step); a < Math.max(Math.floor((i + 1) * step), Math.floor(i * step) + 1) && !on; a++) {
        for (let b = Math.floor(j * step); b < Math.max(Math.floor((j + 1) * step), Math.floor(j * step) + 1); b++) {
          if (matrix[a][b]) { on = true; break; }
        }
      }
      if (on) svg("rect", { x: x + j * cell, y: y + i * cell, width: cell, height: cell, fill: "#0072B2" }, group);
    }
  }
}

export function renderDiagram(container, totals, doc, { onSelectHead, selectedSelector, presentLayer }) {
  container.replaceChildren();
  if (!doc) return;
  const a = doc.analysis;
  const { nodes } = graphIndex(doc);
  const heads = a.heads;
  const headCount = a.heads_per_layer.reduce((s, h) => s + h, 0);
  totals.textContent = `${a.layers} layer${a.layers === 1 ? "" : "s"} · heads per layer: ${a.heads_per_layer.join(", ") || "none"}` +
    ` · ${headCount} head${headCount === 1 ? "" : "s"}`;

  const mlpNames = a.mlps.map((ids) => ids.map((id) => nodes.get(id)).filter(Boolean).map((n) => n.name));
  const maxHeads = Math.max(1, ...a.heads_per_layer);
  const inputRowWidth = LABEL_W + 2 * (90 + GAP) + (mlpNames[0] && mlpNames[0].length ? Math.max(MLP_W, 160) : 0) + 20;
  const width = Math.max(LABEL_W + maxHeads * (HEAD_W + GAP) + MLP_W + 20, inputRowWidth);
  const height = (a.layers + 1) * ROW_H + 10;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `Layer by head diagram: ${totals.textContent}`, xmlns: NS });
  svg("style", {}, root).textContent = "text{font-family:system-ui,DejaVu Sans,sans-serif}";
  const edgeLayer = svg("g", { class: "edges" });
  const boxes = new Map();   // unit -> {x, y, w, h}

  const rowY = (layer) => 6 + layer * ROW_H;
  // row 0: the input and what the MLP computes from it alone (functions of tokens / positions)
  const row0 = svg("g", { class: "layer-row", "data-layer": "0" }, root);
  svg("rect", { class: "band", x: 0, y: rowY(0) - 4, width, height: ROW_H - 6, fill: "#fafbfc" }, row0);
  svg("text", { class: "layer-label", x: 8, y: rowY(0) + 20 }, row0).textContent = "input";
  let x = LABEL_W;
  for (const [kind, label] of [["tokens", "tokens"], ["indices", "indices"]]) {
    const g = svg("g", { class: "embed" }, row0);
    svg("rect", { class: "frame", x, y: rowY(0) + 8, width: 90, height: 36, rx: 6 }, g);
    svg("text", { x: x + 10, y: rowY(0) + 31 }, g).textContent = label;
    boxes.set(`in:${kind}`, { x, y: rowY(0) + 8, w: 90, h: 36 });
    x += 90 + GAP;
  }
  if (mlpNames[0] && mlpNames[0].length) {
    const g = svg("g", { class: "mlp" }, row0);
    const w = Math.max(MLP_W, 160);
    svg("rect", { class: "frame", x, y: rowY(0) + 8, width: w, height: 36, rx: 6 }, g);
    svg("text", { class: "small", x: x + 8, y: rowY(0) + 22 }, g).textContent = "from the input alone";
    svg("text", { x: x + 8, y: rowY(0) + 38 }, g).textContent = truncate(mlpNames[0].join(", "), 30);
    boxes.set("mlp:0", { x, y: rowY(0) + 8, w, h: 36 });
  }

  for (let L = 1; L <= a.layers; L++) {
    const row = svg("g", { class: "layer-row", "data-layer": String(L) }, root);
    if (presentLayer) row.classList.add(L === presentLayer ? "hot" : "dim");
    svg("rect", { class: "band", x: 0, y: rowY(L) - 4, width, height: ROW_H - 6, fill: L % 2 ? "#ffffff" : "#fafbfc" }, row);
    svg("text", { class: "layer-label", x: 8, y: rowY(L) + 22 }, row).textContent = `L${L}`;
    svg("text", { class: "small", x: 8, y: rowY(L) + 40 }, row).textContent =
      `${heads[L - 1].length} head${heads[L - 1].length === 1 ? "" : "s"}`;
    x = LABEL_W;
    for (const head of heads[L - 1]) {
      const g = svg("g", { class: "head-box", tabindex: "0", role: "button", "data-layer": String(L),
        "data-head": String(head.slot), "data-selector": String(head.selector),
        "aria-label": `layer ${L} head ${head.slot}: ${head.name}` }, row);
      if (head.selector === selectedSelector) g.classList.add("selected");
      const y = rowY(L) + 4;
      svg("rect", { class: "frame", x, y, width: HEAD_W, height: HEAD_H, rx: 8 }, g);
      svg("title", {}, g).textContent = `${head.name}: ${head.label}`;
      svg("text", { x: x + 8, y: y + 16 }, g).textContent = truncate(head.name, 17);
      svg("text", { class: "small", x: x + 8, y: y + 30 }, g).textContent = `head ${head.slot}`;
      const matrix = traced(doc, head.selector);
      if (matrix && matrix.length) thumbnail(g, matrix, x + HEAD_W - THUMB - 8, y + HEAD_H - THUMB - 8);
      const activate = () => onSelectHead(head.selector);
      g.addEventListener("click", activate);
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(); } });
      boxes.set(`h:${L}:${head.slot}`, { x, y, w: HEAD_W, h: HEAD_H });
      x += HEAD_W + GAP;
    }
    const ops = mlpNames[L] || [];
    const g = svg("g", { class: "mlp", "data-layer": String(L) }, row);
    const mx = LABEL_W + maxHeads * (HEAD_W + GAP);
    svg("rect", { class: "frame", x: mx, y: rowY(L) + 4, width: MLP_W, height: HEAD_H, rx: 8 }, g);
    svg("text", { class: "small", x: mx + 8, y: rowY(L) + 18 }, g).textContent = "MLP";
    const lines = ops.length ? [] : ["—"];
    let current = "";
    for (const name of ops) {
      const next = current ? `${current}, ${name}` : name;
      if (next.length > 26 && current) { lines.push(current); current = name; } else current = next;
    }
    if (current) lines.push(current);
    lines.slice(0, 3).forEach((line, i) => {
      svg("text", { x: mx + 8, y: rowY(L) + 36 + i * 15 }, g).textContent = i === 2 && lines.length > 3 ? truncate(line, 22) + " …" : truncate(line, 28);
    });
    svg("title", {}, g).textContent = ops.length ? `MLP of layer ${L}: ${ops.join(", ")}` : `layer ${L} has no elementwise ops`;
    boxes.set(`mlp:${L}`, { x: mx, y: rowY(L) + 4, w: MLP_W, h: HEAD_H });
  }

  // dependency edges between units
  const unit = unitOfNodes(doc);
  const seen = new Set();
  for (const e of a.graph.edges) {
    const u = unit.get(e.source), v = unit.get(e.target);
    if (!u || !v || u === v || seen.has(`${u}>${v}`) || !boxes.has(u) || !boxes.has(v)) continue;
    seen.add(`${u}>${v}`);
    const s = boxes.get(u), t = boxes.get(v);
    const x1 = s.x + s.w / 2, y1 = s.y + s.h, x2 = t.x + t.w / 2, y2 = t.y;
    const sameRow = Math.abs(y1 - s.h - y2) < 1;
    const d = sameRow
      ? `M${s.x + s.w},${s.y + s.h / 2} L${t.x},${t.y + t.h / 2}`
      : `M${x1},${y1} C${x1},${(y1 + y2) / 2} ${x2},${(y1 + y2) / 2} ${x2},${y2}`;
    svg("path", { class: "edge", d, "data-from": u, "data-to": v, "marker-end": "url(#arrow)",
      fill: "none", stroke: "#6b7785", "stroke-width": "1.4" }, edgeLayer);
  }
  root.append(edgeLayer);  // on top of the layer bands
  const defs = svg("defs", {}, root);
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
  svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "#8894a3" }, marker);
  container.append(root);
}
