// All heads at once: a compact grid of every head's attention pattern on the shown input (queries as
// rows, keys as columns), each a button that opens the head's large heatmap; the provenance's query
// rows and read cells are marked on every head on the path. Below, one selector side by side on two
// inputs. Patterns come from the evaluation document (trace of the shown input, or the named selector's
// values for other inputs); nothing is computed here.

import * as api from "./api.js";
import { graphIndex, traced } from "./docmodel.js";
import { drawMatrix as drawHeatmapSvg } from "./heatmapsvg.js";
import { readsOf } from "./provenance.js";
import { parseInputText, state } from "./state.js";
import { el, formatValue } from "./values.js";

const $ = (id) => document.getElementById(id);
const SIZE = 88;              // px of a grid thumbnail
const BLUE = "#0072B2", EMPTY = "#eef1f5", READ = "#E69F00", ROW = "#D55E00";
let hooks = { openSelector: () => {} };
let compare = { a: 0, b: 1 };
let compareSeq = 0;

function panel() {
  let box = $("head-grid-panel");
  if (!box) {
    box = el("div", { id: "head-grid-panel", class: "panel headgrid-panel" },
      el("div", { class: "panel-title" }, el("h2", {}, "All heads"),
        el("span", { class: "hint" }, "every head's attention on the shown input; click one to open it")),
      el("div", { id: "head-grid", class: "head-grid", role: "list" }),
      el("p", { id: "head-grid-cross", class: "note cross-readout", "aria-live": "polite" }),
      el("div", { id: "head-compare", class: "head-compare" }));
    $("view-program").append(box);
  }
  return box;
}

// Draws a 0/1 matrix on a canvas of `px` x `px` (device pixels scaled), marking provenance reads and the
// row and column under the pointer in any head (`cross`: {q, k}).
function drawMatrix(canvas, matrix, px, reads = null, cross = null) {
  const n = matrix.length, m = n ? matrix[0].length : 0;
  const ratio = window.devicePixelRatio || 1;
  const cell = px / Math.max(n, m, 1);
  canvas.width = Math.round(m * cell * ratio);
  canvas.height = Math.round(n * cell * ratio);
  canvas.style.width = `${Math.round(m * cell)}px`;
  canvas.style.height = `${Math.round(n * cell)}px`;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  const gap = cell >= 6 ? 1 : 0;
  for (let q = 0; q < n; q++) {
    for (let k = 0; k < m; k++) {
      ctx.fillStyle = matrix[q][k] ? BLUE : EMPTY;
      ctx.fillRect(k * cell, q * cell, cell - gap, cell - gap);
    }
  }
  for (const r of reads || []) {
    ctx.strokeStyle = ROW;
    ctx.lineWidth = Math.max(1, Math.min(2, cell / 4));
    ctx.strokeRect(0.5, r.query * cell + 0.5, m * cell - 1, cell - 1);
    ctx.fillStyle = READ;
    for (const k of r.keys) ctx.fillRect(k * cell, r.query * cell, cell - gap, cell - gap);
  }
  if (cross) {
    ctx.fillStyle = "rgba(230, 159, 0, .5)";
    if (cross.q < n) ctx.fillRect(0, cross.q * cell, m * cell, cell);
    if (cross.k < m) ctx.fillRect(cross.k * cell, 0, cell, n * cell);
    ctx.strokeStyle = "#1b1f24";
    ctx.lineWidth = 1;
    if (cross.q < n) ctx.strokeRect(0.5, cross.q * cell + 0.5, m * cell - 1, cell - 1);
    if (cross.k < m) ctx.strokeRect(cross.k * cell + 0.5, 0.5, cell - 1, n * cell - 1);
  }
}

// Hovering a cell of one head marks its query row and key column in every head, and names both tokens.
let cross = null;

function redrawTiles() {
  if (!state.doc) return;
  for (const tile of document.querySelectorAll("#head-grid .head-tile")) {
    const matrix = traced(state.doc, Number(tile.dataset.selector));
    const canvas = tile.querySelector("canvas");
    if (matrix && canvas) drawMatrix(canvas, matrix, SIZE, readsOf(Number(tile.dataset.selector)), cross);
  }
}

function setCross(next) {
  const same = (cross && next && cross.q === next.q && cross.k === next.k) || (!cross && !next);
  if (same) return;
  cross = next;
  const grid = $("head-grid");
  if (grid) grid.dataset.cross = next ? `${next.q},${next.k}` : "";
  const tokens = state.doc ? state.doc.inputs[state.doc.trace ? state.doc.trace.input : state.current] || [] : [];
  const readout = $("head-grid-cross");
  if (readout) {
    readout.textContent = next ? `query ${next.q} (${formatValue(tokens[next.q])}) and key ${next.k} ` +
      `(${formatValue(tokens[next.k])}), marked in every head` : "";
  }
  redrawTiles();
}

function crossAt(canvas, matrix, e) {
  const r = canvas.getBoundingClientRect();
  const n = matrix.length, m = n ? matrix[0].length : 0;
  const cell = r.width / Math.max(m, 1);
  const q = Math.floor((e.clientY - r.top) / cell), k = Math.floor((e.clientX - r.left) / cell);
  return q >= 0 && q < n && k >= 0 && k < m ? { q, k } : null;
}

export function renderHeadGrid(doc, { openSelector, selectedSelector }) {
  hooks = { openSelector };
  const box = panel();
  const grid = $("head-grid");
  grid.replaceChildren();
  cross = null;
  grid.dataset.cross = "";
  $("head-grid-cross").textContent = "";
  if (!doc) { box.hidden = true; return; }
  const heads = doc.analysis.heads.flat();
  box.hidden = !heads.length;
  for (const head of heads) {
    const matrix = traced(doc, head.selector);
    const canvas = el("canvas", { "aria-hidden": "true" });
    // a list item holding a toggle button (a button cannot be a list item and pressed at once); its name is
    // the text it shows (layer, head, name), the full expression its description
    const button = el("button", { type: "button", class: "head-tile", "data-selector": String(head.selector),
      "data-layer": String(head.layer), "data-head": String(head.slot), title: head.expression || head.label,
      "aria-pressed": String(head.selector === selectedSelector),
      onclick: () => hooks.openSelector(head.selector) },
    canvas, el("span", { class: "tile-where" }, `L${head.layer} h${head.slot} `), el("span", { class: "tile-name" }, head.display || head.name));
    grid.append(el("div", { role: "listitem", class: "head-tile-item" }, button));
    if (matrix && matrix.length) {
      drawMatrix(canvas, matrix, SIZE, readsOf(head.selector), cross);
      canvas.addEventListener("pointermove", (e) => setCross(crossAt(canvas, matrix, e)));
      canvas.addEventListener("pointerleave", () => setCross(null));
    }
    else canvas.replaceWith(el("span", { class: "tile-empty" }, "no pattern on this input"));
  }
  renderCompare(doc, selectedSelector);
}

// Re-marks the provenance on the grid (after a step) without rebuilding the rest.
const remark = redrawTiles;
document.addEventListener("provenance-changed", remark);

// The selector's matrix on input `i`: the named selector's values, the trace of the shown input, or a
// trace asked of the server for another input.
async function matrixOn(doc, selectorId, i) {
  const node = graphIndex(doc).nodes.get(selectorId);
  const named = node && node.names.find((n) => doc.results[n] && doc.results[n].kind === "selector");
  if (named && doc.results[named].values[i]) return doc.results[named].values[i];
  if (i === state.current) return traced(doc, selectorId);
  const inputs = state.inputs.map((t) => parseInputText(t).value);
  const other = await api.evaluate(state.source, inputs, i);
  return traced(other, selectorId);
}

// Which cells differ between two matrices (over the positions both inputs have).
export function differingCells(a, b) {
  const out = [];
  const n = Math.min(a.length, b.length);
  for (let q = 0; q < n; q++) {
    const m = Math.min(a[q].length, b[q].length);
    for (let k = 0; k < m; k++) if (Boolean(a[q][k]) !== Boolean(b[q][k])) out.push([q, k]);
  }
  return out;
}

const LEFT = 64, BOTTOM = 60, SIDE = 40, TOP = 8;

// One side of the comparison: the selector on input `i`, drawn as the main heatmap is (labels, hover, widths).
function drawSide(figure, matrix, tokens, label, i, width) {
  const n = matrix.length, m = tokens.length;
  const size = Math.max(6, Math.min(30, Math.floor((width - LEFT - SIDE - 14) / Math.max(m, 1))));
  const widths = matrix.map((row) => row.reduce((a, v) => a + Number(Boolean(v)), 0));
  const plot = el("div", { class: "compare-plot" });
  figure.append(plot, el("figcaption", {}, `input ${i + 1}: ${tokens.map(formatValue).join(" ")}`));
  const name = (role, j) => `${role} ${j} (${formatValue(tokens[j])})`;
  return drawHeatmapSvg(plot, { matrix, keys: tokens.map((t, k) => `k${k} ${formatValue(t)}`),
    queries: tokens.slice(0, n).map((t, q) => `q${q} ${formatValue(t)}`), widths, size, left: LEFT, top: TOP,
    bottom: BOTTOM, side: SIDE, font: size < 12 ? 9 : 11, labelEvery: 12, colours: { selected: BLUE, empty: EMPTY },
    title: `${label} on input ${i + 1}`, hover: (q, k) => [`${name("query", q)} ← ${name("key", k)}`, matrix[q][k] ? "selected" : "not selected"],
    widthHover: (q) => `query ${q}: selects ${widths[q]} key${widths[q] === 1 ? "" : "s"}` });
}

function renderCompare(doc, selectedSelector) {
  const box = $("head-compare");
  box.replaceChildren();
  const n = doc.inputs.length;
  if (selectedSelector === null || selectedSelector === undefined) return;
  const name = graphIndex(doc).nodes.get(selectedSelector);
  const label = name ? (name.names[0] || name.name) : `#${selectedSelector}`;
  if (n < 2) {
    box.append(el("p", { class: "hint" }, `Side by side: add a second input (+ input) to compare ${label} on two inputs.`));
    return;
  }
  compare.a = Math.min(compare.a, n - 1);
  compare.b = Math.min(compare.b, n - 1);
  const pickers = ["a", "b"].map((side) => {
    const select = el("select", { "aria-label": `input ${side === "a" ? "left" : "right"}`, "data-compare": side,
      onchange: (e) => { compare[side] = Number(e.target.value); renderCompare(state.doc, selectedSelector); } });
    doc.inputs.forEach((tokens, i) => {
      const option = el("option", { value: String(i) }, `input ${i + 1}: ${tokens.join("")}`.slice(0, 40));
      if (i === compare[side]) option.selected = true;
      select.append(option);
    });
    return select;
  });
  const figures = ["a", "b"].map(() => el("figure", { class: "compare-figure" }));
  const differ = el("p", { class: "note compare-differ", "aria-live": "polite" });
  box.append(el("p", { class: "compare-title" }, `${label} on two inputs: `, pickers[0], " vs ", pickers[1]),
    el("div", { class: "compare-row" }, ...figures), differ);
  const mine = ++compareSeq;
  const width = Math.max(200, Math.floor((box.clientWidth || 600) / 2) - 12);
  Promise.all(["a", "b"].map((side) => matrixOn(doc, selectedSelector, compare[side]))).then((matrices) => {
    if (mine !== compareSeq) return;
    const drawn = matrices.map((matrix, j) => {
      const i = compare[j ? "b" : "a"];
      if (!matrix || !matrix.length) {
        figures[j].append(el("figcaption", {}, `input ${i + 1}: no pattern on this input`));
        return null;
      }
      const heatmap = drawSide(figures[j], matrix, doc.inputs[i], label, i, width);
      figures[j].dataset.drawn = "1";
      return heatmap;
    });
    if (drawn[0] && drawn[1]) {   // a mark on every cell that differs, on both sides
      const cells = differingCells(matrices[0], matrices[1]);
      const marks = cells.map(([q, k]) => ({ q0: q, q1: q, k0: k, k1: k, stroke: "#D55E00", width: 2.5 }));
      drawn.forEach((h) => h.mark(marks));
      const sameLength = matrices[0].length === matrices[1].length;
      differ.textContent = cells.length ? `${cells.length} cell${cells.length === 1 ? "" : "s"} differ (outlined)` +
        `${sameLength ? "" : " over the positions both inputs have"}` : `no cell differs${sameLength ? "" : " over the positions both inputs have"}`;
      box.dataset.differ = String(cells.length);
    }
  }, (e) => { if (mine === compareSeq) figures[0].append(el("figcaption", {}, e.message)); });
}
