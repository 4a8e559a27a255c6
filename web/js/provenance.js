// "Where did this value come from?" Clicking a value cell (s-op X at position i) asks the engine
// (POST /api/v1/provenance) which cells that value read, through every layer, on the shown input, and
// highlights them: in the diagram the heads and MLPs on the path, in the heatmaps (the large one and the
// grid of all heads) the query rows and the key cells read, in the values table the cells read. A bar
// above the values steps back one layer at a time (keys of keys), also in presenter mode, and exports
// the provenance view (the diagram as highlighted, with the reads listed) to SVG or PNG.
// The page computes nothing here: every cell comes from the engine's answer.

import * as api from "./api.js";
import { resolve, selectorOf } from "./docmodel.js";
import { exportDiagram } from "./export.js";
import { parseInputText, state } from "./state.js";
import { el, formatValue } from "./values.js";

const $ = (id) => document.getElementById(id);
let current = null;   // {doc, name, position, prov, step} while a provenance is shown
let hooks = { openSelector: () => {}, toast: () => {}, showLayer: () => {} };
let seq = 0;

export function provenanceShown() { return current && current.prov ? current : null; }

// What the bar and the highlights show at the current step: heads and MLPs of layers >= step, and the
// s-op cells read by them.
function visible() {
  const { prov, step } = current;
  const heads = prov.heads.filter((h) => h.layer >= step);
  const mlps = prov.mlps.filter((L) => L >= step);
  const cells = new Map();   // s-op name -> Set of positions
  for (const s of prov.sops) {
    const positions = new Set(s.reads.filter((r) => r.layer >= step).flatMap((r) => r.positions));
    if (positions.size) cells.set(s.name, positions);
  }
  return { heads, mlps, cells };
}

function bar() {
  let box = $("provenance-bar");
  if (!box) {
    box = el("div", { id: "provenance-bar", class: "provenance-bar", role: "region", "aria-label": "Where did this value come from", hidden: "" });
    $("values").before(box);
  }
  return box;
}

function valueAt(doc, name, position) {
  const r = doc.results[name];
  return r && r.values[state.current] ? r.values[state.current][position] : undefined;
}

function renderBar() {
  const box = bar();
  if (!current) { box.hidden = true; box.replaceChildren(); return; }
  box.hidden = false;
  if (!current.prov) {
    box.replaceChildren(el("span", { class: "hint" }, current.error || `tracing ${current.name} at position ${current.position}…`));
    return;
  }
  const { prov, step } = current;
  const v = visible();
  const title = el("p", { class: "provenance-title" },
    el("strong", {}, `Where did ${prov.name} at position ${prov.position} (${formatValue(valueAt(current.doc, current.name, prov.position))}) come from?`),
    ` Layers ${prov.layer}${step < prov.layer ? `…${step}` : ""} of the path.`);
  const back = el("button", { type: "button", class: "small", "data-provenance": "back", title: "show the layer below: the keys of these keys",
    onclick: () => stepBack(1) }, "◀ One layer back");
  if (step <= 0) back.disabled = true;
  const forward = el("button", { type: "button", class: "small", "data-provenance": "forward", onclick: () => stepBack(-1) }, "Forward ▶");
  if (step >= prov.layer) forward.disabled = true;
  const all = el("button", { type: "button", class: "small", "data-provenance": "all", onclick: () => setStep(0) }, "Whole path");
  const close = el("button", { type: "button", class: "small", "data-provenance": "clear", onclick: clearProvenance }, "Clear");
  const svgBtn = el("button", { type: "button", class: "small", "data-provenance": "svg", onclick: () => exportProvenance("svg") }, "SVG");
  const pngBtn = el("button", { type: "button", class: "small", "data-provenance": "png", onclick: () => exportProvenance("png") }, "PNG");
  const list = el("ul", { class: "provenance-reads" });
  for (const line of summaryLines(v)) list.append(el("li", {}, line));
  box.replaceChildren(title, el("div", { class: "buttons" }, back, forward, all, close, svgBtn, pngBtn), list);
}

function summaryLines(v) {
  const lines = [];
  const heads = [...v.heads].sort((a, b) => b.layer - a.layer);
  for (const h of heads) {
    const reads = h.reads.map((r) => `q${r.query} ← ${r.keys.length ? r.keys.map((k) => `k${k}`).join(" ") : "nothing (default)"}`);
    lines.push(`L${h.layer} head ${h.head} (${h.name}): ${reads.join("; ")}`);
  }
  for (const L of [...v.mlps].sort((a, b) => b - a)) lines.push(`L${L} MLP: elementwise, same positions`);
  return lines;
}

// ------------------------------------------------------------------ highlights

function highlightValues(v) {
  const table = $("values").querySelector(".values-table");
  if (!table) return;
  let first = true;
  for (const tr of table.querySelectorAll("tbody tr[data-name]")) {
    const cells = [...tr.querySelectorAll("td:not(.layer):not(.err)")];
    const on = v && v.cells.get(tr.dataset.name);
    cells.forEach((td, i) => {
      td.dataset.pos = String(i);
      td.tabIndex = first ? 0 : -1;   // one tab stop for the table's values; arrow keys move between them
      first = false;
      td.classList.toggle("prov-read", Boolean(on && on.has(i)));
      td.classList.toggle("prov-origin", Boolean(current && current.prov && tr.dataset.name === current.name && i === current.position));
    });
  }
}

function highlightDiagram(v) {
  const root = $("diagram").querySelector("svg");
  const units = new Set();
  if (v) {
    for (const h of v.heads) units.add(`h:${h.layer}:${h.head}`);
    for (const L of v.mlps) units.add(`mlp:${L}`);
    for (const name of ["tokens", "indices"]) if (v.cells.has(name)) units.add(`in:${name}`);
  }
  // presenter mode's cards of the stepped layer (presentrow.js)
  for (const c of document.querySelectorAll("#present-row .present-card[data-unit]")) c.classList.toggle("on-path", units.has(c.dataset.unit));
  if (!root) return;
  root.classList.toggle("provenance", Boolean(v));
  for (const g of root.querySelectorAll("g[data-unit]")) g.classList.toggle("on-path", units.has(g.dataset.unit));
  for (const p of root.querySelectorAll("path.edge")) p.classList.toggle("on-path", units.has(p.dataset.from) && units.has(p.dataset.to));
}

// The query rows and read cells of `selector` at the current step: [{query, keys}], or null.
export function readsOf(selectorId) {
  if (!current || !current.prov) return null;
  const v = visible();
  const reads = v.heads.filter((h) => h.selector === selectorId).flatMap((h) => h.reads);
  return reads.length ? reads : null;
}

function highlightHeatmap() {
  const plot = $("heatmap-plot");
  if (!plot || !plot.heatmap || !state.doc) return;
  const id = resolve(state.doc, state.selection);
  const selector = id === null ? null : selectorOf(state.doc, id);
  const reads = selector === null ? null : readsOf(selector);
  const m = plot.heatmap.x.length;
  const mine = [];
  for (const r of reads || []) {
    mine.push({ q0: r.query, q1: r.query, k0: 0, k1: m - 1, stroke: "#D55E00", width: 2 });
    for (const k of r.keys) mine.push({ q0: r.query, q1: r.query, k0: k, k1: k, stroke: "#D55E00", width: 3, fill: "rgba(230,159,0,0.45)" });
  }
  plot.heatmap.mark(mine);
  plot.dataset.provenanceShapes = String(mine.length);
}

// Called after every render of the values, diagram and heatmap (the page re-renders them on each change).
export function applyProvenance() {
  if (current && current.prov && current.doc !== state.doc) {
    refetch();
    return;
  }
  const v = current && current.prov ? visible() : null;
  highlightValues(v);
  highlightDiagram(v);
  highlightHeatmap();
  document.dispatchEvent(new CustomEvent("provenance-changed"));
  renderBar();
}

function setStep(step) {
  current.step = Math.max(0, Math.min(current.prov.layer, step));
  hooks.showLayer(current.step);   // presenter mode follows the step
  // open the heatmap of the first head on the path in the layer stepped to
  const head = current.prov.heads.find((h) => h.layer === current.step);
  if (head) hooks.openSelector(head.selector);
  else applyProvenance();
  $("provenance-bar").dataset.step = String(current.step);
}

function stepBack(delta) {
  if (!current || !current.prov) return;
  // skip layers with nothing on the path
  const layers = new Set([...current.prov.heads.map((h) => h.layer), ...current.prov.mlps, 0]);
  let step = current.step - delta;
  while (step > 0 && step < current.prov.layer && !layers.has(step)) step -= delta;
  setStep(step);
}

export function clearProvenance() {
  current = null;
  applyProvenance();
}

async function request(name, position, step = null) {
  const mine = ++seq;
  const doc = state.doc;
  current = { doc, name, position, prov: null, step: 0 };
  renderBar();
  try {
    const input = parseInputText(state.inputs[state.current]).value;
    const answer = await api.provenance({ source: state.source, input, name, position });
    if (mine !== seq) return;
    current = { doc, name, position, prov: answer.provenance, step: step === null ? answer.provenance.layer : step };
    $("values").dataset.provenance = `${name}:${position}`;
    if (step === null) setStep(current.step);   // a new value: its own layer (its head's heatmap, the presenter's layer)
    else applyProvenance();                     // the same value after a re-run: stay where the user was
    bar().dataset.step = String(current.step);
  } catch (e) {
    if (mine !== seq) return;
    current = { doc, name, position, prov: null, step: 0, error: `No provenance: ${e.message}` };
    renderBar();
  }
}

function refetch() {
  const { name, position, step } = current;
  const r = state.doc && state.doc.results[name];
  if (r && r.kind === "sop" && r.values[state.current] && position < r.values[state.current].length) request(name, position, step);
  else clearProvenance();
}

async function exportProvenance(format) {
  const source = $("diagram").querySelector("svg");
  if (!source || !current || !current.prov) return;
  const lines = [`Where did ${current.prov.name} at position ${current.prov.position} come from?`, ...summaryLines(visible())];
  const [, , w, h] = source.getAttribute("viewBox").split(" ").map(Number);
  const box = el("div", { class: "diagram provenance-export", style: "position:absolute;left:-10000px;top:0" });
  const NS = "http://www.w3.org/2000/svg";
  const out = document.createElementNS(NS, "svg");
  const textH = 18 * lines.length + 12;
  out.setAttribute("viewBox", `0 0 ${w} ${h + textH}`);
  out.setAttribute("width", String(w));
  out.setAttribute("height", String(h + textH));
  out.setAttribute("class", `diagram-svg${source.classList.contains("provenance") ? " provenance" : ""}`);
  const bg = document.createElementNS(NS, "rect");
  Object.entries({ x: 0, y: 0, width: w, height: h + textH, fill: "#fff" }).forEach(([k, val]) => bg.setAttribute(k, val));
  out.append(bg);
  lines.forEach((line, i) => {
    const t = document.createElementNS(NS, "text");
    t.setAttribute("x", "10");
    t.setAttribute("y", String(20 + 18 * i));
    if (!i) t.setAttribute("class", "layer-label");
    t.textContent = line;
    out.append(t);
  });
  const drawing = source.cloneNode(true);
  drawing.setAttribute("y", String(textH));
  drawing.setAttribute("width", String(w));
  drawing.setAttribute("height", String(h));
  drawing.querySelectorAll(".diagram-zoom").forEach((n) => n.remove());
  out.append(drawing);
  box.append(out);
  document.body.append(box);
  try {
    await exportDiagram(box, format, "rasplay-provenance");
  } catch (e) {
    hooks.toast(`Export failed: ${e.message}`);
  } finally {
    box.remove();
  }
}

// Wires the values table (click or Enter on a value cell) and re-applies the highlights when the
// diagram's layout or the heatmap arrives later than the render.
export function initProvenance({ openSelector, toast, showLayer = () => {} }) {
  hooks = { openSelector, toast, showLayer };
  const values = $("values");
  const pick = (td) => {
    const tr = td.closest("tr[data-name]");
    if (!tr || td.classList.contains("layer") || td.classList.contains("err") || td.dataset.pos === undefined) return;
    request(tr.dataset.name, Number(td.dataset.pos));
  };
  values.addEventListener("click", (e) => {
    const td = e.target.closest("td");
    if (td) pick(td);
  });
  values.addEventListener("keydown", (e) => {
    const td = e.target.closest("td[data-pos]");
    if (!td) return;
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(td); return; }
    const moves = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    if (!moves[e.key]) return;
    e.preventDefault();
    const rows = [...values.querySelectorAll("tbody tr[data-name]")].filter((tr) => tr.querySelector("td[data-pos]"));
    const r = rows.indexOf(td.closest("tr")) + moves[e.key][0];
    const row = rows[Math.max(0, Math.min(rows.length - 1, r))];
    const cells = row.querySelectorAll("td[data-pos]");
    const next = cells[Math.max(0, Math.min(cells.length - 1, Number(td.dataset.pos) + moves[e.key][1]))];
    td.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  });
  $("diagram").addEventListener("diagram-laid-out", () => highlightDiagram(current && current.prov ? visible() : null));
  new MutationObserver(() => highlightHeatmap()).observe($("heatmap-plot"), { attributes: true, attributeFilter: ["data-drawn"] });
  document.addEventListener("keydown", (e) => {
    if (!current || !current.prov || e.target.closest(".cm-editor, input, textarea")) return;
    if (e.key === "[") { e.preventDefault(); stepBack(1); }
    else if (e.key === "]") { e.preventDefault(); stepBack(-1); }
  });
}
