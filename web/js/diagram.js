// The layer x head diagram: the paper's head/layer analysis made interactive. Transformer layers are
// rows (bands), in order; each head is a box showing its selector's name (the analysis' `display` text,
// unique per head) in full, a thumbnail of its pattern on the traced input and the s-ops it computes;
// each layer's MLP is a box in the same band, listing its elementwise ops in full. Boxes are sized from
// their measured text; elkjs (layout.js) places them and routes the edges. The drawing fits the panel's
// width (scaled down, never clipped); the zoom buttons enlarge it, and the panel then scrolls.

import { graphIndex, isAttention, isSelector, traced } from "./docmodel.js";
import { layoutDiagram } from "./layout.js";
import { renderPresentRow } from "./presentrow.js";

const NS = "http://www.w3.org/2000/svg";
const PAD = 8, LINE = 15, THUMB = 34, LABEL_W = 64, MIN_W = 96, WRAP = 34;

// Layouts by content (the boxes' ids and sizes, the edges): a re-render for a new selection, a new input or
// the same program run again reuses its layout at once; a new program is laid out anew.
const layouts = new Map();
const LAYOUTS_KEPT = 32;
let zoom = 1;
let renderSeq = 0;

function svg(tag, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.append(node);
  return node;
}

// Names joined by ", " in lines of at most WRAP characters (a name longer than that gets its own line).
function wrapNames(prefix, names) {
  if (!names.length) return [];
  const lines = [];
  let current = prefix;
  for (const name of names) {
    const next = current && current !== prefix ? `${current}, ${name}` : `${current}${name}`;
    if (next.length > WRAP && current && current !== prefix) { lines.push(`${current},`); current = name; } else current = next;
  }
  if (current) lines.push(current);
  return lines;
}

function unitOfNodes(doc) {
  const { nodes, users } = graphIndex(doc);
  const unit = new Map();
  const ids = [...nodes.keys()].sort((a, b) => b - a);   // users before their inputs
  for (const id of [...ids].reverse()) {
    const n = nodes.get(id);
    if (n.kind === "tokens" || n.kind === "indices") unit.set(id, `in:${n.kind}`);
    else if (n.role === "elementwise") unit.set(id, `mlp:${n.layer}`);
    else if (isAttention(n) && n.head !== null) unit.set(id, `h:${n.layer}:${n.head}`);
    else if (isSelector(n) && n.head !== null) unit.set(id, `h:${n.layer}:${n.head}`);
  }
  for (const id of ids) {  // selectors that are parts of combined selectors belong to their combination's head
    const n = nodes.get(id);
    if (isSelector(n) && !unit.has(id)) {
      const owner = (users.get(id) || []).find((u) => unit.has(u) && isSelector(nodes.get(u)));
      if (owner !== undefined) unit.set(id, unit.get(owner));
    }
  }
  return unit;
}

function thumbnail(group, matrix, x, y) {
  const n = matrix.length;
  const k = Math.min(n, 20);                       // at most 20 x 20 cells, max-pooled
  const step = n / k, cell = THUMB / k;
  const g = svg("g", { class: "thumb" }, group);
  svg("rect", { x, y, width: THUMB, height: THUMB, fill: "#fff", stroke: "#c5ced8" }, g);
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      let on = false;
      for (let a = Math.floor(i * step); a < Math.max(Math.floor((i + 1) * step), Math.floor(i * step) + 1) && !on; a++) {
        for (let b = Math.floor(j * step); b < Math.max(Math.floor((j + 1) * step), Math.floor(j * step) + 1); b++) {
          if (matrix[a][b]) { on = true; break; }
        }
      }
      if (on) svg("rect", { x: x + j * cell, y: y + i * cell, width: cell, height: cell, fill: "#0072B2" }, g);
    }
  }
}

// What a list of ops computes, in the student's words: the names they gave, then "part of X" for the
// unnamed ones (an aggregate inside an expression) after the named s-op built on them (the analysis'
// `part_of`), leaving out what is already named in the same box.
function computedNames(ops) {
  const named = [...new Set(ops.filter((n) => n.names && n.names.length).map((n) => n.names[0]))];
  const parts = [...new Set(ops.filter((n) => !(n.names && n.names.length) && n.part_of).map((n) => n.part_of))]
    .filter((name) => !named.includes(name));
  return { named, parts };
}

// The input embeddings feed many boxes: an edge from them to a box three or more rows down would run down
// the side of the whole drawing (Dyck-2's `tokens`), so such a box says "reads tokens" instead.
const FAR = 3;

// The units (boxes) of the diagram with their text lines, and the edges between units (also the presenter's
// row of the stepped layer, presentrow.js).
export function model(doc) {
  const a = doc.analysis;
  const { nodes } = graphIndex(doc);
  const opsOf = (ids) => ids.map((id) => nodes.get(id)).filter(Boolean);
  // an MLP box lists the names it computes in full, then what its unnamed ops are parts of
  const mlpLines = (ids) => {
    const { named, parts } = computedNames(opsOf(ids));
    return [...wrapNames("", named), ...wrapNames(named.length ? "parts of " : "part of ", parts)];
  };
  const units = [
    { id: "in:tokens", row: 0, kind: "embed", lines: [{ text: "tokens" }], title: "the input tokens" },
    { id: "in:indices", row: 0, kind: "embed", lines: [{ text: "indices" }], title: "the positions" },
  ];
  const mlp = (L, ids, heading, title) => {
    if (!ids || !ids.length) return;   // a layer without elementwise ops draws no MLP box
    const ops = opsOf(ids).map((n) => n.name);
    units.push({ id: `mlp:${L}`, row: L, kind: "mlp", layer: L,
      lines: [{ text: heading, cls: "small" }, ...mlpLines(ids).map((text) => ({ text }))], title: `${title}: ${ops.join("; ")}` });
  };
  mlp(0, a.mlps[0], "MLP on the input alone", "computed from the input alone");
  for (let L = 1; L <= a.layers; L++) {
    for (const head of a.heads[L - 1]) {
      const ops = opsOf(head.ops || []);
      const { named, parts } = computedNames(ops);
      const shown = head.display || head.name;   // "selector of x" says "→ part of x" already
      const outputs = [...named, ...parts.map((p) => `part of ${p}`)].filter((o) => shown !== `selector of ${o.replace(/^part of /, "")}`);
      units.push({ id: `h:${L}:${head.slot}`, row: L, kind: "head", head, thumb: traced(doc, head.selector),
        lines: [{ text: shown, cls: "head-name" },
          ...wrapNames("→ ", outputs).map((text) => ({ text, cls: "small" }))],
        title: `layer ${L} head ${head.slot}: ${head.expression || head.label} → ${ops.map((n) => n.name).join("; ")}` });
    }
    mlp(L, a.mlps[L], "MLP", `MLP of layer ${L}`);
  }
  const byId = new Map(units.map((u) => [u.id, u]));
  const unit = unitOfNodes(doc);
  const seen = new Set();
  const edges = [];
  for (const e of a.graph.edges) {
    const u = unit.get(e.source), v = unit.get(e.target);
    if (!u || !v || u === v || seen.has(`${u}>${v}`) || !byId.has(u) || !byId.has(v)) continue;
    if (byId.get(v).row < byId.get(u).row) continue;
    seen.add(`${u}>${v}`);
    const to = byId.get(v);
    if (u.startsWith("in:") && to.row >= FAR) {   // a far input: said in the box, not drawn
      to.reads = [...(to.reads || []), u.slice(3)];
      continue;
    }
    edges.push({ from: u, to: v });
  }
  for (const u of units) if (u.reads) u.lines.push({ text: `reads ${u.reads.join(", ")}`, cls: "small reads" });
  return { units, edges };
}

// The full expression of a head, shown under its box while it has the focus or the pointer (the SVG
// <title> alone shows only on hover, after a delay).
function showTip(g, text) {
  const container = g.closest(".diagram");
  if (!container) return;
  let tip = container.querySelector(".diagram-tip");
  if (!tip) {
    tip = document.createElement("div");
    tip.className = "diagram-tip";
    tip.setAttribute("role", "tooltip");
    container.append(tip);
  }
  tip.textContent = text;
  const box = g.querySelector("rect.frame").getBoundingClientRect(), outer = container.getBoundingClientRect();
  tip.style.left = `${Math.max(0, box.left - outer.left + container.scrollLeft)}px`;
  tip.style.top = `${box.bottom - outer.top + container.scrollTop + 4}px`;
  tip.hidden = false;
}

function hideTip() {
  document.querySelectorAll(".diagram-tip").forEach((tip) => { tip.hidden = true; });
}

// Draws each unit's box content in a group at (0, 0); measures it (the SVG must be in the document)
// and records the box size on the unit.
function drawUnits(root, units, doc, { onSelectHead, selectedSelector }) {
  const groups = new Map();
  for (const u of units) {
    const cls = u.kind === "head" ? "head-box" : u.kind;
    const g = svg("g", { class: cls, "data-unit": u.id, "data-layer": String(u.row) });
    svg("title", {}, g).textContent = u.title;
    const frame = svg("rect", { class: "frame", x: 0, y: 0, rx: u.kind === "embed" ? 6 : 8 }, g);
    const texts = u.lines.map((line, j) => {
      const t = svg("text", { x: PAD, y: PAD + 11 + j * LINE }, g);
      if (line.cls) t.setAttribute("class", line.cls);
      t.textContent = line.text;
      return t;
    });
    if (u.kind === "head") {
      const { head } = u;
      Object.assign(g.dataset, { head: String(head.slot), selector: String(head.selector) });
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", `layer ${u.row} head ${head.slot}: ${head.display || head.name}, ${head.expression || head.label}`);
      if (head.selector === selectedSelector) g.classList.add("selected");
      g.addEventListener("focus", () => showTip(g, u.title));
      g.addEventListener("mouseenter", () => showTip(g, u.title));
      g.addEventListener("blur", hideTip);
      g.addEventListener("mouseleave", () => { if (document.activeElement !== g) hideTip(); });
      const activate = () => onSelectHead(head.selector);
      g.addEventListener("click", activate);
      g.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(); } });
    }
    root.append(g);
    const textW = Math.max(0, ...texts.map((t) => t.getComputedTextLength()));
    const thumbW = u.kind === "head" && u.thumb && u.thumb.length ? THUMB + PAD : 0;
    u.w = Math.ceil(Math.max(MIN_W, textW + 2 * PAD + thumbW));
    u.h = Math.ceil(Math.max(u.kind === "embed" ? 30 : 50, PAD * 2 + u.lines.length * LINE + 2, thumbW ? THUMB + 2 * PAD : 0));
    frame.setAttribute("width", u.w);
    frame.setAttribute("height", u.h);
    if (thumbW) thumbnail(g, u.thumb, u.w - THUMB - PAD, u.h - THUMB - PAD);
    groups.set(u.id, g);
  }
  return groups;
}

// Rows in order, placed without edges: what shows until the layout engine answers.
function provisional(units) {
  const boxes = new Map();
  let y = 12;
  const rows = Math.max(...units.map((u) => u.row));
  let width = 0;
  for (let r = 0; r <= rows; r++) {
    let x = 12, h = 0;
    for (const u of units.filter((v) => v.row === r)) {
      boxes.set(u.id, { x, y, w: u.w, h: u.h });
      x += u.w + 28;
      h = Math.max(h, u.h);
    }
    width = Math.max(width, x);
    y += h + 40;
  }
  return { width, height: y, boxes, edges: [] };
}

// Puts a box's group at (x, y): every element in it keeps absolute coordinates (no transform), so the
// SVG's geometry reads directly (exports and tests); each element's offset within the box is kept.
function moveTo(g, x, y) {
  for (const node of g.querySelectorAll("[x], [y]")) {
    if (node.dataset.dx === undefined) Object.assign(node.dataset, { dx: node.getAttribute("x") || "0", dy: node.getAttribute("y") || "0" });
    node.setAttribute("x", String(x + Number(node.dataset.dx)));
    node.setAttribute("y", String(y + Number(node.dataset.dy)));
  }
  Object.assign(g.dataset, { x: String(x), y: String(y) });
}

function place(svgRoot, root, groups, units, layout, presentLayer, layers) {
  const rows = new Map();   // row -> {top, bottom}
  for (const u of units) {
    const b = layout.boxes.get(u.id);
    moveTo(groups.get(u.id), LABEL_W + b.x, b.y);
    const r = rows.get(u.row) || { top: Infinity, bottom: -Infinity };
    rows.set(u.row, { top: Math.min(r.top, b.y), bottom: Math.max(r.bottom, b.y + b.h) });
  }
  const width = LABEL_W + layout.width;
  const order = [...rows.keys()].sort((p, q) => p - q);
  // bands: from half-way after the previous row's boxes to half-way before the next row's
  const bands = order.map((r, i) => {
    const { top, bottom } = rows.get(r);
    const prev = i ? rows.get(order[i - 1]).bottom : 0;
    const next = i + 1 < order.length ? rows.get(order[i + 1]).top : layout.height;
    return { r, y0: i ? (prev + top) / 2 : 0, y1: i + 1 < order.length ? (bottom + next) / 2 : layout.height, top };
  });
  const bandLayer = svg("g", { class: "bands" });
  for (const band of bands) {
    const row = svg("g", { class: "layer-row", "data-layer": String(band.r) }, bandLayer);
    if (presentLayer && band.r > 0) row.classList.add(band.r === presentLayer ? "hot" : "dim");
    svg("rect", { class: "band", x: 0, y: band.y0, width, height: band.y1 - band.y0,
      fill: band.r % 2 ? "#ffffff" : "#f3f5f8" }, row);
    if (band.r) svg("line", { class: "band-rule", x1: 0, x2: width, y1: band.y0, y2: band.y0, stroke: "#d5dbe2" }, row);
    svg("text", { class: "layer-label", x: 8, y: band.top + 16 }, row).textContent = band.r ? `L${band.r}` : "input";
    if (band.r) {
      const n = (units.filter((u) => u.row === band.r && u.kind === "head")).length;
      svg("text", { class: "small", x: 8, y: band.top + 32 }, row).textContent = `${n} head${n === 1 ? "" : "s"}`;
    }
  }
  root.prepend(bandLayer);
  const edgeLayer = svg("g", { class: "edges" }, root);
  for (const e of layout.edges) {
    if (e.points.length < 2) continue;
    const d = e.points.map(([x, y], i) => `${i ? "L" : "M"}${LABEL_W + x},${y}`).join(" ");
    svg("path", { class: "edge", d, "data-from": e.from, "data-to": e.to, "marker-end": "url(#arrow)",
      fill: "none", stroke: "#6b7785", "stroke-width": "1.4", "stroke-linejoin": "round" }, edgeLayer);
  }
  const defs = svg("defs", {}, root);
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 6, markerHeight: 6,
    orient: "auto" }, defs);
  svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "#6b7785" }, marker);
  svgRoot.dataset.naturalWidth = String(width);
  svgRoot.dataset.naturalHeight = String(layout.height);
  svgRoot.setAttribute("viewBox", `0 0 ${width} ${layout.height}`);
  if (presentLayer && presentLayer <= layers) svgRoot.dataset.presentLayer = String(presentLayer);
}

// The drawing's size: the panel's width at most (scaled down, never clipped), times the zoom.
export function fitDiagram(container) {
  const root = container.querySelector("svg.diagram-svg");
  if (!root) return;
  const natW = Number(root.dataset.naturalWidth), natH = Number(root.dataset.naturalHeight);
  if (!natW || !natH) return;
  const avail = Math.max(120, container.clientWidth - 2);
  let w = Math.min(natW, avail) * zoom;   // the panel's width at most: scaled down, never up (zoom enlarges)
  if (container.dataset.fitHeight === "1" && container.clientHeight > 40) {   // presenter mode: the whole drawing
    w = Math.min(w, (container.clientHeight - 4) * natW / natH);
  }
  root.setAttribute("width", String(Math.round(w)));
  root.setAttribute("height", String(Math.round(w * natH / natW)));
  container.dataset.zoom = String(zoom);
}

function zoomBar(container) {
  const bar = document.createElement("div");
  bar.className = "diagram-zoom";
  for (const [label, text, factor] of [["zoom out", "−", 1 / 1.25], ["fit to the panel", "Fit", 0], ["zoom in", "+", 1.25]]) {
    const b = document.createElement("button");
    Object.assign(b, { type: "button", className: "small", textContent: text, title: label });
    b.setAttribute("aria-label", `diagram: ${label}`);
    b.dataset.zoom = factor ? (factor > 1 ? "in" : "out") : "fit";
    b.addEventListener("click", () => {
      zoom = factor ? Math.min(4, Math.max(1, zoom * factor)) : 1;
      fitDiagram(container);
    });
    bar.append(b);
  }
  return bar;
}

// In a pane shorter than the drawing (the normal view keeps room for the heatmap), the selected head's box
// scrolls into the pane's view (the pane alone scrolls, never the page).
function selectedIntoView(container) {
  const box = container.querySelector(".head-box.selected rect.frame");
  if (!box || container.scrollHeight <= container.clientHeight + 1) return;
  const r = box.getBoundingClientRect(), pane = container.getBoundingClientRect();
  if (r.top >= pane.top && r.bottom <= pane.bottom) return;
  // the nearest edge (as scrollIntoView's "nearest"): as much of the drawing above it stays in view
  container.scrollTop += r.top < pane.top || r.height > pane.height - 16 ? r.top - pane.top - 8 : r.bottom - pane.bottom + 8;
}

let resizeObserved = new WeakSet();

export function renderDiagram(container, totals, doc, options) {
  const { onSelectHead, selectedSelector, presentLayer } = options;
  const seq = ++renderSeq;
  container.replaceChildren();
  delete container.dataset.layout;
  if (!doc) { renderPresentRow(container, [], null, 0, {}, null); return Promise.resolve(); }
  const a = doc.analysis;
  const headCount = a.heads_per_layer.reduce((s, h) => s + h, 0);
  totals.textContent = `${a.layers} layer${a.layers === 1 ? "" : "s"} · heads per layer: ${a.heads_per_layer.join(", ") || "none"}` +
    ` · ${headCount} head${headCount === 1 ? "" : "s"}`;
  const { units, edges } = model(doc);
  renderPresentRow(container, units, presentLayer, a.layers, { onSelectHead, selectedSelector },
    options.rerender || (() => renderDiagram(container, totals, doc, options)));
  const root = svg("svg", { class: "diagram-svg", role: "img", "aria-label": `Layer by head diagram: ${totals.textContent}`,
    xmlns: NS });
  svg("style", {}, root).textContent = "text{font-family:system-ui,DejaVu Sans,sans-serif}";
  container.append(zoomBar(container), root);
  const content = svg("g", { class: "content" }, root);
  const groups = drawUnits(content, units, doc, { onSelectHead, selectedSelector });
  if (!resizeObserved.has(container) && window.ResizeObserver) {
    resizeObserved.add(container);
    new ResizeObserver(() => fitDiagram(container)).observe(container);
  }
  const key = JSON.stringify(units.map((u) => [u.id, u.w, u.h])) + JSON.stringify(edges);
  const cached = layouts.get(key);
  const draw = (layout, engine) => {
    place(root, content, groups, units, layout, presentLayer, a.layers);
    fitDiagram(container);
    container.dataset.layout = engine;
    selectedIntoView(container);
  };
  if (cached) {
    draw(cached, "elk");
    return Promise.resolve();
  }
  draw(provisional(units), "provisional");
  return layoutDiagram(units, edges).then((result) => {
    layouts.set(key, result);
    if (layouts.size > LAYOUTS_KEPT) layouts.delete(layouts.keys().next().value);
    if (seq !== renderSeq || !container.contains(root)) return;
    content.querySelectorAll(".bands, .edges, defs").forEach((n) => n.remove());
    draw(result, "elk");
    container.dispatchEvent(new CustomEvent("diagram-laid-out"));
  }, (e) => {   // the boxes stay in their rows, without edges, and the panel says why
    if (seq !== renderSeq) return;
    container.dataset.layout = "failed";
    totals.textContent += ` · the layout engine failed (${e.message}): edges not drawn`;
  });
}
