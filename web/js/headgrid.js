// All heads at once: a compact grid of every head's attention pattern on the shown input (queries as
// rows, keys as columns), each a button that opens the head's large heatmap; the provenance's query
// rows and read cells are marked on every head on the path. Below, one selector side by side on two
// inputs. Patterns come from the evaluation document (trace of the shown input, or the named selector's
// values for other inputs); nothing is computed here.

import * as api from "./api.js";
import { graphIndex, resolve, selectorOf, traced } from "./docmodel.js";
import { readsOf } from "./provenance.js";
import { parseInputText, state } from "./state.js";
import { el } from "./values.js";

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
      el("div", { id: "head-compare", class: "head-compare" }));
    $("view-program").append(box);
  }
  return box;
}

// Draws a 0/1 matrix on a canvas of `px` x `px` (device pixels scaled), marking provenance reads.
function drawMatrix(canvas, matrix, px, reads = null) {
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
}

export function renderHeadGrid(doc, { openSelector, selectedSelector }) {
  hooks = { openSelector };
  const box = panel();
  const grid = $("head-grid");
  grid.replaceChildren();
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
    if (matrix && matrix.length) drawMatrix(canvas, matrix, SIZE, readsOf(head.selector));
    else canvas.replaceWith(el("span", { class: "tile-empty" }, "no pattern on this input"));
  }
  renderCompare(doc, selectedSelector);
}

// Re-marks the provenance on the grid (after a step) without rebuilding the rest.
function remark() {
  if (!state.doc) return;
  for (const tile of document.querySelectorAll("#head-grid .head-tile")) {
    const matrix = traced(state.doc, Number(tile.dataset.selector));
    const canvas = tile.querySelector("canvas");
    if (matrix && canvas) drawMatrix(canvas, matrix, SIZE, readsOf(Number(tile.dataset.selector)));
  }
}
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
  box.append(el("p", { class: "compare-title" }, `${label} on two inputs: `, pickers[0], " vs ", pickers[1]),
    el("div", { class: "compare-row" }, ...figures));
  const mine = ++compareSeq;
  ["a", "b"].forEach(async (side, j) => {
    const i = compare[side];
    try {
      const matrix = await matrixOn(doc, selectedSelector, i);
      if (mine !== compareSeq) return;
      const canvas = el("canvas", { role: "img", "aria-label": `${label} on input ${i + 1}` });
      figures[j].append(canvas, el("figcaption", {}, `input ${i + 1}: ${doc.inputs[i].join("")}`));
      if (matrix && matrix.length) drawMatrix(canvas, matrix, Math.min(220, 14 * matrix.length));
      figures[j].dataset.drawn = "1";
    } catch (e) {
      figures[j].append(el("figcaption", {}, e.message));
    }
  });
}
