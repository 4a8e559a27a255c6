// The layer x head diagram: the paper's head/layer analysis made interactive. Layers are rows; each
// head is a box named after its selector with a thumbnail of its pattern on the traced input; each
// layer has an MLP strip listing its elementwise ops; edges show what feeds what.

import { graphIndex, SELECTOR_KINDS, traced } from "./docmodel.js";

const NS = "http://www.w3.org/2000/svg";
const ROW_H = 104, HEAD_W = 160, HEAD_H = 80, GAP = 18, LABEL_W = 56, MLP_W = 184, THUMB = 34;
const IN_H = 40;           // the input row's boxes
const NAME_CHARS = 22;     // characters per name line in a head box

function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.append(node);
  return node;
}

function truncate(text, max) {
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

// A name on at most two lines of `width` characters; a longer one keeps its start and its end
// (where names differ: "select(target_pos, indices, ==)" vs "select(target_pos, key, ==)").
export function nameLines(name, width = NAME_CHARS) {
  if (name.length <= width) return [name];
  if (name.length <= 2 * width) {
    const cut = name.lastIndexOf(" ", width);
    const at = cut > width / 2 ? cut + 1 : width;
    if (name.length - at <= width) return [name.slice(0, at).trimEnd(), name.slice(at)];
  }
  return [name.slice(0, width), `…${name.slice(name.length - (width - 1))}`];
}

const column = (k) => LABEL_W + k * (HEAD_W + GAP);
const rowY = (layer) => 6 + layer * ROW_H;
const channelBelow = (row) => rowY(row + 1) - GAP / 2 + 2;   // the free strip between two rows

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

// Short, distinct texts for the head boxes: the selector's name (two lines) and what reads it.
function headTexts(doc, heads) {
  const { nodes } = graphIndex(doc);
  const texts = heads.flat().map((head) => {
    const outputs = (head.ops || []).map((id) => nodes.get(id)).filter(Boolean).map((n) => n.name);
    return { head, lines: nameLines(head.name), outputs: outputs.length ? `→ ${outputs.join(", ")}` : "" };
  });
  const seen = new Map();
  for (const t of texts) {
    const key = `${t.lines.join("\n")}|${truncate(t.outputs, 18)}`;
    seen.set(key, (seen.get(key) || 0) + 1);
    if (seen.get(key) > 1) t.outputs = `${truncate(t.outputs, 14)} (#${t.head.selector})`;
  }
  return new Map(texts.map((t) => [t.head, t]));
}

// An orthogonal path from box s (in row rs) to box t (in row rt) through the free strips between
// rows and the free lanes between columns, so that no edge crosses a box. `k` spreads edges apart.
function route(s, rs, t, rt, k) {
  const spread = ((k % 5) - 2) * 3;
  const sx = s.x + s.w / 2 + spread, tx = t.x + t.w / 2 + spread;
  const down = channelBelow(rs) + spread;
  if (rt === rs) {   // head -> the MLP of its own layer: under the row, up into the MLP
    return `M${sx},${s.y + s.h} V${down} H${tx} V${t.y + t.h}`;
  }
  if (rt === rs + 1) return `M${sx},${s.y + s.h} V${down} H${tx} V${t.y}`;
  const lane = t.x - GAP / 2 + spread / 2;   // the free lane left of the target's column
  const above = channelBelow(rt - 1) + spread;
  return `M${sx},${s.y + s.h} V${down} H${lane} V${above} H${tx} V${t.y}`;
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
  const inputCols = mlpNames[0] && mlpNames[0].length ? 3 : 2;
  const width = Math.max(column(maxHeads) + MLP_W, column(inputCols) - GAP) + 12;
  const height = (a.layers + 1) * ROW_H + 6;
  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": `Layer by head diagram: ${totals.textContent}`, xmlns: NS });
  svg("style", {}, root).textContent = "text{font-family:system-ui,DejaVu Sans,sans-serif}";
  const edgeLayer = svg("g", { class: "edges" });
  const boxes = new Map();   // unit -> {x, y, w, h, row}
  const texts = headTexts(doc, heads);

  // row 0: the input and what the MLP computes from it alone (functions of tokens / positions)
  const row0 = svg("g", { class: "layer-row", "data-layer": "0" }, root);
  svg("rect", { class: "band", x: 0, y: rowY(0) - 4, width, height: ROW_H - 6, fill: "#fafbfc" }, row0);
  svg("text", { class: "layer-label", x: 8, y: rowY(0) + 20 }, row0).textContent = "input";
  [["tokens", "tokens"], ["indices", "indices"]].forEach(([kind, label], i) => {
    const g = svg("g", { class: "embed" }, row0);
    const x = column(i);
    svg("rect", { class: "frame", x, y: rowY(0) + 8, width: HEAD_W, height: IN_H, rx: 6 }, g);
    svg("text", { x: x + 10, y: rowY(0) + 33 }, g).textContent = label;
    boxes.set(`in:${kind}`, { x, y: rowY(0) + 8, w: HEAD_W, h: IN_H, row: 0 });
  });
  if (inputCols === 3) {
    const g = svg("g", { class: "mlp" }, row0);
    const x = column(2);
    svg("rect", { class: "frame", x, y: rowY(0) + 8, width: HEAD_W, height: IN_H, rx: 6 }, g);
    svg("text", { class: "small", x: x + 8, y: rowY(0) + 22 }, g).textContent = "MLP on the input alone";
    svg("text", { x: x + 8, y: rowY(0) + 39 }, g).textContent = truncate(mlpNames[0].join(", "), 24);
    svg("title", {}, g).textContent = `computed from the input alone: ${mlpNames[0].join(", ")}`;
    boxes.set("mlp:0", { x, y: rowY(0) + 8, w: HEAD_W, h: IN_H, row: 0 });
  }

  for (let L = 1; L <= a.layers; L++) {
    const row = svg("g", { class: "layer-row", "data-layer": String(L) }, root);
    if (presentLayer) row.classList.add(L === presentLayer ? "hot" : "dim");
    svg("rect", { class: "band", x: 0, y: rowY(L) - 4, width, height: ROW_H - 6, fill: L % 2 ? "#ffffff" : "#fafbfc" }, row);
    svg("text", { class: "layer-label", x: 8, y: rowY(L) + 22 }, row).textContent = `L${L}`;
    svg("text", { class: "small", x: 8, y: rowY(L) + 40 }, row).textContent =
      `${heads[L - 1].length} head${heads[L - 1].length === 1 ? "" : "s"}`;
    heads[L - 1].forEach((head, i) => {
      const x = column(i);
      const g = svg("g", { class: "head-box", tabindex: "0", role: "button", "data-layer": String(L),
        "data-head": String(head.slot), "data-selector": String(head.selector),
        "aria-label": `layer ${L} head ${head.slot}: ${head.name}` }, row);
      if (head.selector === selectedSelector) g.classList.add("selected");
      const y = rowY(L) + 4;
      const t = texts.get(head);
      svg("rect", { class: "frame", x, y, width: HEAD_W, height: HEAD_H, rx: 8 }, g);
      svg("title", {}, g).textContent = `${head.name}: ${head.label}${t.outputs ? ` ${t.outputs}` : ""}`;
      t.lines.forEach((line, j) => {
        svg("text", { class: "head-name", x: x + 8, y: y + 16 + j * 14 }, g).textContent = line;
      });
      svg("text", { class: "small", x: x + 8, y: y + HEAD_H - 24 }, g).textContent = `head ${head.slot}`;
      svg("text", { class: "small", x: x + 8, y: y + HEAD_H - 9 }, g).textContent = truncate(t.outputs, 18);
      const matrix = traced(doc, head.selector);
      if (matrix && matrix.length) thumbnail(g, matrix, x + HEAD_W - THUMB - 6, y + HEAD_H - THUMB - 6);
      const activate = () => onSelectHead(head.selector);
      g.addEventListener("click", activate);
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(); } });
      boxes.set(`h:${L}:${head.slot}`, { x, y, w: HEAD_W, h: HEAD_H, row: L });
    });
    const ops = mlpNames[L] || [];
    const g = svg("g", { class: "mlp", "data-layer": String(L) }, row);
    const mx = column(maxHeads);
    svg("rect", { class: "frame", x: mx, y: rowY(L) + 4, width: MLP_W, height: HEAD_H, rx: 8 }, g);
    svg("text", { class: "small", x: mx + 8, y: rowY(L) + 18 }, g).textContent = "MLP";
    const lines = ops.length ? [] : ["—"];
    let current = "";
    for (const name of ops) {
      const next = current ? `${current}, ${name}` : name;
      if (next.length > 24 && current) { lines.push(current); current = name; } else current = next;
    }
    if (current) lines.push(current);
    lines.slice(0, 3).forEach((line, i) => {
      svg("text", { x: mx + 8, y: rowY(L) + 36 + i * 15 }, g).textContent = i === 2 && lines.length > 3 ? truncate(line, 20) + " …" : truncate(line, 26);
    });
    svg("title", {}, g).textContent = ops.length ? `MLP of layer ${L}: ${ops.join(", ")}` : `layer ${L} has no elementwise ops`;
    boxes.set(`mlp:${L}`, { x: mx, y: rowY(L) + 4, w: MLP_W, h: HEAD_H, row: L });
  }

  // dependency edges between units, routed around the boxes
  const unit = unitOfNodes(doc);
  const seen = new Set();
  let k = 0;
  for (const e of a.graph.edges) {
    const u = unit.get(e.source), v = unit.get(e.target);
    if (!u || !v || u === v || seen.has(`${u}>${v}`) || !boxes.has(u) || !boxes.has(v)) continue;
    seen.add(`${u}>${v}`);
    const s = boxes.get(u), t = boxes.get(v);
    if (t.row < s.row) continue;
    svg("path", { class: "edge", d: route(s, s.row, t, t.row, k++), "data-from": u, "data-to": v, "marker-end": "url(#arrow)",
      fill: "none", stroke: "#6b7785", "stroke-width": "1.4", "stroke-linejoin": "round" }, edgeLayer);
  }
  root.append(edgeLayer);  // on top of the layer bands
  const defs = svg("defs", {}, root);
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
  svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "#8894a3" }, marker);
  container.append(root);
  if (presentLayer && presentLayer <= a.layers) {
    // presenter mode: the stepped layer's row alone, scaled to the panel
    const top = rowY(presentLayer) - 8;
    root.setAttribute("viewBox", `0 ${top} ${width} ${ROW_H}`);
    root.setAttribute("height", String(ROW_H));
    root.dataset.presentLayer = String(presentLayer);
  }
}
