// The selector heatmap drawn as one small SVG (no charting library): a 0/1 matrix, queries as rows and keys as
// columns, position and token on both axes, a column of each row's selector width, a dot in each selected
// cell (colour is never the only signal), a hover label, a click that locks a cell, a keyboard cursor and
// marks laid over cells (the provenance's reads). Every text is set with textContent, never parsed as
// markup. The drawn heatmap's data and geometry stay on the element as `plot.heatmap` (export, tests).

const NS = "http://www.w3.org/2000/svg";
const MONO = "DejaVu Sans Mono, monospace";
const SANS = "system-ui, DejaVu Sans, sans-serif";
let drawings = 0;   // a fresh id per drawing: two heatmaps on one page (the notebook) share no pattern

function svg(tag, attrs = {}, parent = null, text = null) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== null) node.textContent = text;
  if (parent) parent.append(node);
  return node;
}

// Labels every `step`-th row or column: all of them when cells are as large as the type.
function labelStep(size, font) {
  return size >= font ? 1 : Math.ceil(font / size);
}

// Fill of a width cell, from white (0) to a light amber (the largest width).
function widthColour(w, most) {
  const t = most > 0 ? w / most : 0;
  const mix = (a, b) => Math.round(a + (b - a) * t);
  return `rgb(${mix(255, 255)},${mix(255, 243)},${mix(255, 214)})`;
}

// Draws into `plot` (replacing what was there). opts: matrix (rows of 0/1), keys and queries (axis labels),
// widths (per query, or null), size (px per cell), left/top (px before the matrix), bottom (px below it),
// side (px of the widths column), font (tick type size), labelEvery (a label per row and column while cells
// are at least this many px, else every few), colours {selected, empty}, title (what the SVG's
// <title> names),
// hover(q, k) -> lines of text, the last one "selected"/"not selected" (shown bold when selected),
// widthHover(q) -> a line, onLock(q, k) called on a click on a cell.
export function drawMatrix(plot, opts) {
  const { matrix, keys, queries, widths = null, size, left, top, bottom, side, font, colours, title = "" } = opts;
  const n = matrix.length, m = keys.length;
  const gap = size >= 6 ? 1 : 0;
  const columnX = left + m * size + 4;
  const step = labelStep(size, opts.labelEvery || font);
  // the axis name "keys" just below the longest key label (as plotly's standoff), within the room below
  const longest = Math.max(0, ...keys.filter((_, k) => k % step === 0).map((t) => [...t].length));
  const below = Math.min(bottom - 4, 6 + longest * font * 0.45 + font * 1.6);
  const width = left + m * size + (widths ? side : 0) + 10, height = top + n * size + Math.min(bottom, Math.ceil(below + 8));
  const id = `rasplay-hm-${++drawings}`;
  const root = svg("svg", { xmlns: NS, class: "heatmap-svg", width, height, viewBox: `0 0 ${width} ${height}`,
    "font-family": SANS, "font-size": font, role: "img" });
  svg("title", {}, root, title ? `Selector heatmap: ${title}` : "Selector heatmap");
  svg("rect", { x: 0, y: 0, width, height, fill: "#ffffff" }, root);

  // the cells: every cell empty (a pattern), the selected ones as one path, a dot in each when large enough
  const defs = svg("defs", {}, root);
  const pattern = svg("pattern", { id: `${id}-empty`, patternUnits: "userSpaceOnUse", x: left, y: top, width: size, height: size }, defs);
  svg("rect", { x: 0, y: 0, width: size - gap, height: size - gap, fill: colours.empty }, pattern);
  const cells = svg("g", { class: "cells" }, root);
  svg("rect", { x: left, y: top, width: m * size, height: n * size, fill: `url(#${id}-empty)` }, cells);
  const s = size - gap;
  const selected = svg("path", { fill: colours.selected, class: "selected" }, cells);
  let d = "";
  const dots = size >= 10;
  const dotFont = Math.max(8, Math.round(size * 0.45));
  for (let q = 0; q < n; q++) {
    const row = matrix[q];
    for (let k = 0; k < m; k++) {
      if (!row[k]) continue;
      const x = left + k * size, y = top + q * size;
      d += `M${x} ${y}h${s}v${s}h${-s}z`;
      if (dots) svg("text", { x: x + s / 2, y: y + s / 2, fill: "#ffffff", "font-size": dotFont, "text-anchor": "middle",
        "dominant-baseline": "central" }, cells, "●");
    }
  }
  if (d) selected.setAttribute("d", d);
  else selected.remove();

  // axes: the query labels left of the rows, the key labels below the columns (slanted), the axis names
  const axes = svg("g", { class: "axes", "font-family": MONO, "font-size": font, fill: "#2a3f5f" }, root);
  queries.forEach((label, q) => {
    if (q % step === 0) svg("text", { x: left - 4, y: top + (q + 0.5) * size, "text-anchor": "end", "dominant-baseline": "central" }, axes, label);
  });
  keys.forEach((label, k) => {
    if (k % step) return;
    const x = left + (k + 0.5) * size, y = top + n * size + 6;
    svg("text", { transform: `translate(${x} ${y}) rotate(-45)`, "text-anchor": "end", "dominant-baseline": "central" }, axes, label);
  });
  svg("text", { x: left + (m * size) / 2, y: top + n * size + below, "text-anchor": "middle", "font-family": SANS }, axes, "keys");
  svg("text", { transform: `translate(${Math.round(font * 0.9)} ${top + (n * size) / 2}) rotate(-90)`, "text-anchor": "middle",
    "font-family": SANS }, axes, "queries");

  // the widths column
  if (widths) {
    const column = svg("g", { class: "widths" }, root);
    const most = Math.max(...widths, 0);
    widths.forEach((w, q) => {
      const y = top + q * size;
      svg("rect", { x: columnX, y, width: side - 4, height: s, fill: widthColour(w, most) }, column);
      if (size >= 10) svg("text", { x: columnX + (side - 4) / 2, y: y + s / 2, "text-anchor": "middle", "dominant-baseline": "central",
        fill: "#2a3f5f" }, column, String(w));
    });
    svg("text", { x: columnX + (side - 4) / 2, y: top + n * size + 4, "text-anchor": "middle", "dominant-baseline": "hanging",
      "font-size": font }, column, "width");
  }
  const marks = svg("g", { class: "marks", fill: "none" }, root);
  const cursor = svg("rect", { class: "cursor", width: size, height: size, fill: "none", stroke: "#1b1f24", "stroke-width": 2,
    visibility: "hidden" }, root);

  // the hover label: HTML beside the SVG (not exported), built from text nodes
  const label = document.createElement("div");
  label.className = "heatmap-hover";
  label.setAttribute("role", "tooltip");
  label.hidden = true;
  Object.assign(label.style, { position: "absolute", zIndex: 5, pointerEvents: "none", background: "#1b1f24", color: "#fff",
    font: `12px ${SANS}`, padding: "4px 7px", borderRadius: "4px", whiteSpace: "nowrap", boxShadow: "0 1px 4px rgba(0,0,0,.3)" });
  plot.style.position = "relative";
  plot.replaceChildren(root, label);

  const place = (x, y) => {
    label.hidden = false;
    const w = label.offsetWidth, below = y + 12;
    label.style.left = `${Math.max(0, Math.min(x + 12, width - w - 2))}px`;
    label.style.top = `${below}px`;
  };
  const showCell = (q, k) => {
    const lines = opts.hover(q, k);
    label.replaceChildren();
    lines.forEach((line, i) => {
      if (i) label.append(document.createElement("br"));
      if (i === lines.length - 1 && matrix[q][k]) label.append(Object.assign(document.createElement("b"), { textContent: line }));
      else label.append(line);
    });
    place(left + (k + 1) * size, top + (q + 0.5) * size);
  };
  const showWidth = (q) => {
    label.replaceChildren(opts.widthHover(q));
    place(columnX + side - 4, top + (q + 0.5) * size);
  };
  // the cell under a pointer event: ["cell", q, k], ["width", q] or null
  const at = (e) => {
    const r = root.getBoundingClientRect();
    const x = e.clientX - r.left, y = e.clientY - r.top;
    const q = Math.floor((y - top) / size), k = Math.floor((x - left) / size);
    if (q < 0 || q >= n) return null;
    if (k >= 0 && k < m) return ["cell", q, k];
    if (widths && x >= columnX && x < columnX + side - 4) return ["width", q];
    return null;
  };
  root.addEventListener("pointermove", (e) => {
    const hit = at(e);
    if (!hit) label.hidden = true;
    else if (hit[0] === "cell") showCell(hit[1], hit[2]);
    else showWidth(hit[1]);
  });
  root.addEventListener("pointerleave", () => { label.hidden = true; });
  root.addEventListener("click", (e) => {
    const hit = at(e);
    if (hit && hit[0] === "cell" && opts.onLock) opts.onLock(hit[1], hit[2]);
  });

  const heatmap = {
    z: matrix, x: keys, y: queries, widths, size, left, top, width, height,
    text: matrix.map((row) => row.map((v) => (v && dots ? "●" : ""))),
    hover: (q, k) => opts.hover(q, k).join("\n"),
    svg: root,
    // the page coordinates of the centre of cell (q, k), and of row q's width cell
    cellCentre(q, k) {
      const r = root.getBoundingClientRect();
      return [r.left + left + (k + 0.5) * size, r.top + top + (q + 0.5) * size];
    },
    widthCentre(q) {
      const r = root.getBoundingClientRect();
      return [r.left + columnX + (side - 4) / 2, r.top + top + (q + 0.5) * size];
    },
    // the keyboard cursor on cell (q, k), with its hover label
    point(q, k) {
      cursor.setAttribute("x", left + k * size);
      cursor.setAttribute("y", top + q * size);
      cursor.setAttribute("visibility", "visible");
      showCell(q, k);
    },
    // rectangles over cells: [{q0, q1, k0, k1, stroke, width, fill}] (inclusive ranges), replacing the last ones
    mark(list) {
      marks.replaceChildren(...list.map((b) => svg("rect", { x: left + b.k0 * size, y: top + b.q0 * size,
        width: (b.k1 - b.k0 + 1) * size, height: (b.q1 - b.q0 + 1) * size, stroke: b.stroke, "stroke-width": b.width,
        fill: b.fill || "none" })));
    },
  };
  plot.heatmap = heatmap;
  return heatmap;
}

// The drawn heatmap as a standalone SVG document (text), with `title` above it when given.
export function heatmapSvgText(plot, title = "") {
  const { svg: drawn, width, height } = plot.heatmap;
  const clone = drawn.cloneNode(true);
  clone.querySelector(".cursor").remove();
  if (!title) return { text: new XMLSerializer().serializeToString(clone), width, height };
  const extra = Math.max(0, 8 * title.length + 24 - width);
  const out = svg("svg", { xmlns: NS, width: width + extra, height: height + 30, viewBox: `0 0 ${width + extra} ${height + 30}`,
    "font-family": SANS });
  svg("rect", { x: 0, y: 0, width: width + extra, height: height + 30, fill: "#ffffff" }, out);
  svg("text", { x: 8, y: 20, "font-size": 14 }, out, title);
  const body = svg("g", { transform: "translate(0 30)" }, out);
  body.append(...clone.childNodes);
  return { text: new XMLSerializer().serializeToString(out), width: width + extra, height: height + 30 };
}
