// Selector heatmaps: queries as rows, keys as columns, both axes labelled with position and token;
// selected cells filled; hover names both sides; a side column with each row's selector width; below,
// the aggregated values and the results. The Program view's heatmap is our own small SVG (heatmapsvg.js),
// so a first visit needs no plotly.js; the Compile and Train views' heatmaps (attention as a colour ramp
// with the selector outlined, drawHeatmap) use plotly.js, which they load when they are first shown.

import { displayName, graphIndex, selectorOf, traced, usersOfSelector } from "./docmodel.js";
import { drawMatrix } from "./heatmapsvg.js";
import { plotlyConfig, plotlyText } from "./plotly.js";
import { el, formatValue } from "./values.js";

export const SELECTED = "#0072B2";   // Okabe–Ito blue
export const EMPTY = "#f1f3f6";

const LABEL_ROOM = 76;     // px left of and below the matrix for the position/token labels
const TOP_ROOM = 30;       // px above the matrix (plotly's mode bar sits there in the Compile and Train views)
const SIDE = 46;           // px of the width column
const MIN_CELL = 2, MAX_CELL = 30, READABLE = 18;
const FIT_MAX = 48;        // the Program view's fitted cells grow with the panel up to this (readable, not huge)

function cellSize(n) {
  return Math.max(6, Math.min(MAX_CELL, Math.floor(560 / Math.max(n, 1))));
}

// The cell size that fits an n x m matrix (with its labels and width column) into `box` px.
export function fitCell(n, m, box, side = SIDE, largest = MAX_CELL, labelRoom = LABEL_ROOM) {
  const w = Math.floor((box.width - labelRoom - side - 24) / Math.max(m, 1));
  const h = Math.floor((box.height - labelRoom - TOP_ROOM - 14) / Math.max(n, 1));
  return Math.max(MIN_CELL, Math.min(largest, w, Math.max(h, MIN_CELL)));
}

// Positions numbered as in the Program view (the first token is 0); a BOS position before them
// (`offset` 1: compiled and trained models) is labelled BOS.
// `escape`: for plotly's markup (plotlyText); the SVG heatmap sets its labels as text.
function tickLabels(tokens, prefix, offset = 0, escape = plotlyText) {
  return tokens.map((t, i) => (i < offset ? `${prefix} BOS` : `${prefix}${i - offset} ${escape(formatValue(t))}`));
}

// The room left of and below the matrix for labels of `font` px (presenter mode: larger type).
export function labelRoomFor(font) {
  return font ? Math.max(LABEL_ROOM, Math.round(font * 5.6)) : LABEL_ROOM;
}

// Show every label when cells are large enough to read, else every step-th one.
function ticks(labels, size, font = 12) {
  const step = size >= font ? 1 : Math.ceil(font / size);
  const shown = labels.filter((_, i) => i % step === 0);
  return { tickmode: "array", tickvals: shown, ticktext: shown };
}

// A generic heatmap: `matrix` (0/1) drawn filled, or `fill` (floats) drawn as a colour ramp with the
// 0/1 `matrix` outlined on top. Reused by the Compile and Train views. `hover` holds plotly markup: build
// it with hoverLines(), which escapes the text in it. `size`: px per cell (default: from the matrix
// size). The matrix starts LABEL_ROOM px from the left, one column every `size` px.
export function drawHeatmap(plot, { matrix, fill = null, tokens, rowTokens = tokens, hover, widths = null,
  fillTitle = "attention", title = "", size = null, offset = 0, labelFont = null }) {
  const labelRoom = labelRoomFor(labelFont);
  const n = rowTokens.length, m = tokens.length;
  size = size || cellSize(Math.max(n, m));
  const x = tickLabels(tokens, "k", offset), y = tickLabels(rowTokens, "q", offset);
  const gaps = size >= 6 ? 1 : 0;
  const traces = [{
    type: "heatmap", z: fill || matrix, x, y, customdata: hover, hovertemplate: "%{customdata}<extra></extra>",
    colorscale: fill ? "Viridis" : [[0, EMPTY], [1, SELECTED]], zmin: 0, zmax: 1, showscale: Boolean(fill),
    colorbar: fill ? { title: { text: fillTitle, side: "right" }, thickness: 10, len: 0.6 } : undefined,
    xgap: gaps, ygap: gaps, xaxis: "x", yaxis: "y",
  }];
  if (!fill && matrix && size >= 10) {   // a dot in each selected cell: colour is never the only signal
    traces[0].text = matrix.map((row) => row.map((v) => (v ? "●" : "")));
    traces[0].texttemplate = "%{text}";
    traces[0].textfont = { color: "#ffffff", size: Math.max(8, Math.round(size * 0.45)) };
  }
  const shapes = [];
  if (fill && matrix) {
    matrix.forEach((row, qi) => row.forEach((v, ki) => {
      if (v) shapes.push({ type: "rect", xref: "x", yref: "y", x0: ki - 0.5, x1: ki + 0.5, y0: qi - 0.5, y1: qi + 0.5,
        line: { color: "#E69F00", width: m <= 32 ? 2.5 : 1 }, fillcolor: "rgba(0,0,0,0)" });
    }));
  }
  if (widths) {
    traces.push({
      type: "heatmap", z: widths.map((w) => [w]), x: ["width"], y, xaxis: "x2", yaxis: "y",
      colorscale: [[0, "#ffffff"], [1, "#fff3d6"]], showscale: false, texttemplate: size >= 10 ? "%{z}" : "",
      textfont: labelFont ? { size: labelFont } : undefined,
      hovertemplate: "query %{y}: selects %{z} keys<extra></extra>", xgap: 1, ygap: gaps,
    });
  }
  const side = labelFont ? Math.max(SIDE, labelFont * 2.4) : SIDE;
  const plotWidth = m * size, sideWidth = widths ? side : 0;
  const area = plotWidth + sideWidth;
  const right = 10 + (fill ? 70 : 0);
  const top = (title ? 34 : 0) + TOP_ROOM;   // room for plotly's mode bar above the cells
  const font = labelFont || (size < 12 ? 9 : size >= 40 ? 15 : 11);
  const layout = {
    width: labelRoom + area + right,
    height: n * size + labelRoom + top,
    margin: { l: labelRoom, r: right, t: top, b: labelRoom, pad: 0 },
    title: title ? { text: plotlyText(title), font: { size: 13 }, x: 0, xanchor: "left", xref: "paper" } : undefined,
    xaxis: { domain: [0, plotWidth / area], side: "bottom", tickangle: -45, title: { text: "keys", standoff: 4 },
      fixedrange: false, tickfont: { family: "DejaVu Sans Mono, monospace", size: font }, ...ticks(x, size, labelFont || 12) },
    yaxis: { autorange: "reversed", title: { text: "queries", standoff: 4 },
      tickfont: { family: "DejaVu Sans Mono, monospace", size: font }, ...ticks(y, size, labelFont || 12) },
    xaxis2: { domain: [(plotWidth + 4) / area, 1], showticklabels: true, fixedrange: true, tickfont: { size: labelFont || 10 } },
    shapes,
    plot_bgcolor: "#fff", paper_bgcolor: "#fff",
    font: { family: "system-ui, DejaVu Sans, sans-serif", size: labelFont || 12 },
  };
  if (!widths) delete layout.xaxis2;
  plot.dataset.cell = String(size);
  return window.Plotly.react(plot, traces, layout, plotlyConfig({ responsive: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d"], toImageButtonOptions: { filename: "rasplay-heatmap" } }));
}

// The heatmap as text, a list a screen reader walks: which keys each query selects, and where a fill
// (compiled or trained attention) puts most of its weight. `offset`: rows and columns before position 0
// (1 for a BOS column), which are named as such.
export function selectionItems(tokens, matrix, { rowTokens = tokens, fill = null, offset = 0, fillTitle = "attention" } = {}) {
  const name = (i, toks) => (i < offset ? `${i} (BOS)` : `${i - offset} (${formatValue(toks[i])})`);
  return (matrix || fill).map((row, q) => {
    const keys = matrix ? row.map((v, k) => (v ? name(k, tokens) : null)).filter((x) => x !== null) : null;
    let text = `query ${name(q, rowTokens)}: `;
    if (keys) text += keys.length ? `selects ${keys.length === 1 ? "key" : `${keys.length} keys:`} ${keys.join(", ")}` : "selects no key";
    if (fill && fill[q]) {
      let best = 0;
      fill[q].forEach((v, k) => { if (v > fill[q][best]) best = k; });
      text += `${keys ? "; " : ""}most ${fillTitle} on key ${name(best, tokens)}, ${fill[q][best].toFixed(2)}`;
    }
    return el("li", {}, text);
  });
}

// A collapsed "as text" list under a heatmap card (Compile and Train views).
export function selectionDetails(tokens, matrix, options = {}) {
  return el("details", { class: "heatmap-text" }, el("summary", {}, "As text: which keys each query selects"),
    el("ol", {}, ...selectionItems(tokens, matrix, options)));
}

// Hover text for plotly from lines of plain text (escaped, joined with <br>).
export function hoverLines(lines) {
  return lines.map(plotlyText).join("<br>");
}

function cellText(tokens, matrix, keyValues, queryValues, q, k) {
  const qv = queryValues ? `, query value ${formatValue(queryValues[q])}` : "";
  const kv = keyValues ? `, key value ${formatValue(keyValues[k])}` : "";
  return `query ${q} (${formatValue(tokens[q])}${qv}) ← key ${k} (${formatValue(tokens[k])}${kv}), ` +
    (matrix[q][k] ? "selected" : "not selected");
}

// The hover text of cell (q, k) as lines of plain text: both sides, then whether the key is selected.
function hoverLinesAt(tokens, matrix, keyValues, queryValues) {
  const side = (role, i, values) => `${role} ${i} (${formatValue(tokens[i])}` +
    `${values ? `, ${role} value ${formatValue(values[i])}` : ""})`;
  return (q, k) => [`${side("query", q, queryValues)} ← ${side("key", k, keyValues)}`, matrix[q][k] ? "selected" : "not selected"];
}

// Plain words for the library's own selectors and for constants used as keys or queries.
const LIBRARY = {
  full_s: "the library's select(1, 1, ==): every query selects every key. `length` counts them with selector_width.",
};

function explainSide(doc, id) {
  const node = graphIndex(doc).nodes.get(id);
  if (node && (node.kind === "constant" || /^-?\d+(\.\d+)?$/.test(node.name))) {
    return `${node.name} (a constant, the same at every position)`;
  }
  return displayName(doc, id);
}

function describe(doc, selId) {
  const { nodes, inputs } = graphIndex(doc);
  const node = nodes.get(selId);
  const parts = [];
  if (node.head !== null && node.head !== undefined) parts.push(`layer ${node.layer}, head ${node.head}`);
  else parts.push(`layer ${node.layer} (not aggregated)`);
  if (node.kind === "select") {
    const ins = inputs.get(selId);
    parts.push(`keys: ${explainSide(doc, ins.keys)}, queries: ${explainSide(doc, ins.queries)}`);
  }
  const library = [node.name, ...node.names].map((name) => LIBRARY[name]).find(Boolean);
  return { label: node.label, text: parts.join(" · "), library: library || null };
}

function renderNote(note, doc, selId) {
  const d = describe(doc, selId);
  note.replaceChildren(el("code", {}, d.label), ` · ${d.text}`);
  if (d.library) note.append(el("br"), el("span", { class: "library" }, d.library));
}

// How the heatmap is shown: fitted to its panel, or zoomed to readable cells; the keyboard cursor.
export const heatmapView = { zoom: false, cursor: null };

// Rows under the matrix, one cell under each key column (same left offset and cell width).
function belowRows(below, rows, size, m) {
  below.replaceChildren();
  const readable = size >= 12;
  for (const { label, values } of rows) {
    const cells = el("div", { class: "below-cells" });
    cells.style.gridTemplateColumns = `repeat(${m}, ${size}px)`;
    cells.style.marginLeft = `${LABEL_ROOM}px`;
    cells.style.fontSize = `${Math.max(8, Math.min(12, Math.floor(size * 0.6)))}px`;
    (values || []).forEach((v, i) => {
      const text = formatValue(v);
      const cell = el("span", { class: "below-cell", title: `${label}, position ${i}: ${text}` }, readable ? text : "");
      cells.append(cell);
    });
    below.append(el("div", { class: "below-row" },
      cells, el("div", { class: "below-label" }, label)));
  }
  if (!readable) below.append(el("p", { class: "note" }, "Cells are small: hover a cell, or Zoom, to read the values."));
}

// Scroll the scrolling box so that cell (q, k) of a drawn heatmap is in view.
function scrollToCell(scroller, size, q, k, top = TOP_ROOM) {
  if (!scroller) return;
  const x = LABEL_ROOM + k * size, y = top + q * size;
  const pad = 40;
  if (x < scroller.scrollLeft + LABEL_ROOM || x + size > scroller.scrollLeft + scroller.clientWidth - pad) {
    scroller.scrollLeft = Math.max(0, x - scroller.clientWidth / 2);
  }
  if (y < scroller.scrollTop || y + size > scroller.scrollTop + scroller.clientHeight - pad) {
    scroller.scrollTop = Math.max(0, y - scroller.clientHeight / 2);
  }
}

// Zoomed, the box scrolls away from plotly's own axis labels (queries on the left, keys below): pinned
// copies stay at the box's left and top edges, lined up with the rows and columns under them.
const pinned = { on: false, size: 0, n: 0, m: 0 };

function pinAxes(scroller, queries, keys, size, on) {
  if (!scroller) return;
  let rows = scroller.querySelector(".pinned-queries"), cols = scroller.querySelector(".pinned-keys");
  if (!rows) {
    rows = el("div", { class: "pinned-queries", "aria-hidden": "true" });
    cols = el("div", { class: "pinned-keys", "aria-hidden": "true" });
    scroller.append(rows, cols);
    scroller.addEventListener("scroll", () => placePinned(scroller), { passive: true });
  }
  Object.assign(pinned, { on, size, n: queries.length, m: keys.length });
  if (on) {
    rows.replaceChildren(...queries.map((t, q) => {
      const label = el("span", { class: "pinned-label", "data-q": String(q) }, `q${q} ${formatValue(t)}`);
      label.style.top = `${TOP_ROOM + q * size}px`;
      label.style.height = label.style.lineHeight = `${size}px`;
      return label;
    }));
    cols.replaceChildren(...keys.map((t, k) => {
      const label = el("span", { class: "pinned-label", "data-k": String(k) },
        el("span", { class: "index" }, String(k)), el("span", { class: "token" }, formatValue(t)));
      label.style.left = `${LABEL_ROOM + k * size}px`;
      label.style.width = `${size}px`;
      return label;
    }));
    rows.style.height = `${TOP_ROOM + queries.length * size}px`;
    cols.style.width = `${LABEL_ROOM + keys.length * size}px`;
  } else {
    rows.replaceChildren();
    cols.replaceChildren();
  }
  placePinned(scroller);
}

// Show each pinned axis only while plotly's own labels for it are out of view.
function placePinned(scroller) {
  const rows = scroller.querySelector(".pinned-queries"), cols = scroller.querySelector(".pinned-keys");
  if (!rows) return;
  const { scrollLeft, scrollTop, clientHeight } = scroller;
  const showRows = pinned.on && scrollLeft > 12;
  const showCols = pinned.on && scrollTop + clientHeight < TOP_ROOM + pinned.n * pinned.size + 24;
  rows.hidden = !showRows;
  cols.hidden = !showCols;
  if (showRows) rows.style.left = `${scrollLeft}px`;
  if (showCols) cols.style.top = `${scrollTop}px`;
}

// The first selected cell (row-major), or null.
function firstSelected(matrix) {
  for (let q = 0; q < matrix.length; q++) {
    const k = matrix[q].findIndex(Boolean);
    if (k >= 0) return [q, k];
  }
  return null;
}

// Show the selector behind `nodeId` (a selector, aggregate or selector_width) for the traced input.
// parts: plot, title, note, below, scroller (the box that scrolls), readout (the cell under the
// keyboard cursor, read aloud), box() -> {width, height} px the fitted heatmap may take.
export function showSelector(doc, nodeId, parts) {
  const { plot, title, note, below, readout } = parts;
  const selId = selectorOf(doc, nodeId);
  below.replaceChildren();
  readout.textContent = "";
  if (selId === null || selId === undefined || !doc.trace) {
    title.textContent = "Selector";
    note.textContent = "Click a selector, an aggregate or a head to see its attention pattern.";
    plot.hidden = true;
    return null;
  }
  const matrix = traced(doc, selId);
  const tokens = doc.inputs[doc.trace.input];
  title.replaceChildren("Selector: ", el("code", { class: "name" }, displayName(doc, selId)));
  if (!matrix) {
    note.textContent = (doc.trace.nodes[String(selId)] || {}).error || "this selector failed on this input";
    plot.hidden = true;
    return selId;
  }
  renderNote(note, doc, selId);
  plot.hidden = false;
  const { nodes, inputs } = graphIndex(doc);
  const node = nodes.get(selId);
  const ins = inputs.get(selId) || {};
  const keyValues = node.kind === "select" ? traced(doc, ins.keys) : null;
  const queryValues = node.kind === "select" ? traced(doc, ins.queries) : null;
  const widths = matrix.map((row) => row.reduce((a, b) => a + Number(b), 0));
  const n = matrix.length, m = tokens.length;
  const room = parts.box();
  // presenter mode: cells as large as the panel allows, labels in the room's type size
  const side = room.font ? Math.max(SIDE, Math.round(room.font * 2.4)) : SIDE;
  const labelRoom = labelRoomFor(room.font);
  const fitted = fitCell(n, m, room, side, room.tight ? 400 : FIT_MAX, labelRoom);
  const size = heatmapView.zoom ? Math.max(READABLE, fitted) : fitted;
  plot.dataset.mode = heatmapView.zoom ? "zoom" : "fit";
  plot.dataset.cell = String(size);
  const target = heatmapView.cursor && heatmapView.cursor[0] < n && heatmapView.cursor[1] < m
    ? heatmapView.cursor : firstSelected(matrix);
  const hover = hoverLinesAt(tokens, matrix, keyValues, queryValues);
  const say = (q, k, locked = false) => {
    readout.textContent = `${locked ? "locked: " : ""}${cellText(tokens, matrix, keyValues, queryValues, q, k)}` +
      ` (query ${q} selects ${widths[q]} key${widths[q] === 1 ? "" : "s"})`;
  };
  const lock = (q, k) => {
    heatmapView.cursor = [q, k];
    say(q, k, true);
    renderNote(note, doc, selId);
    note.append(el("br"), `locked: ${cellText(tokens, matrix, keyValues, queryValues, q, k)}`);
    if (!heatmapView.zoom && size < READABLE && parts.onZoom) parts.onZoom();   // a small map: click zooms there
  };
  const drawn = drawMatrix(plot, { matrix, keys: tickLabels(tokens, "k", 0, String), queries: tickLabels(tokens.slice(0, n), "q", 0, String),
    widths, size, left: labelRoom, top: TOP_ROOM, bottom: labelRoom, side,
    font: room.font || (size < 12 ? 9 : size >= 40 ? 15 : size >= 28 ? 13 : 11), labelEvery: room.font || 12, colours: { selected: SELECTED, empty: EMPTY },
    title: displayName(doc, selId), hover,
    widthHover: (q) => `query ${q}: selects ${widths[q]} key${widths[q] === 1 ? "" : "s"}`, onLock: lock });
  plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1);
  if (target) scrollToCell(parts.scroller, size, target[0], target[1]);
  pinAxes(parts.scroller, tokens.slice(0, n), tokens, size, heatmapView.zoom && size >= READABLE);

  // below: what the heads built on this selector read (per key) and produce (per query), one cell
  // under each column
  const rows = [{ label: "position", values: tokens.map((_, i) => i) }, { label: "token", values: tokens }];
  if (keyValues) rows.push({ label: `keys: ${displayName(doc, ins.keys)}`, values: keyValues });
  if (queryValues) rows.push({ label: `queries: ${displayName(doc, ins.queries)}`, values: queryValues });
  for (const user of usersOfSelector(doc, selId)) {
    if (user.kind === "aggregate") {
      const sopId = inputs.get(user.id).sop;
      rows.push({ label: `aggregated: ${displayName(doc, sopId)} (per key)`, values: traced(doc, sopId) });
      rows.push({ label: `result: ${user.name} (per query)`, values: traced(doc, user.id) });
    } else {
      rows.push({ label: `selector_width: ${user.name}`, values: traced(doc, user.id) });
    }
  }
  belowRows(below, rows, size, m);
  if (parts.list) parts.list.replaceChildren(...selectionItems(tokens, matrix));

  plot.onkeydown = (e) => {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    let [q, k] = heatmapView.cursor || target || [0, 0];
    if (moves[e.key]) {
      q = Math.max(0, Math.min(n - 1, q + moves[e.key][0]));
      k = Math.max(0, Math.min(m - 1, k + moves[e.key][1]));
    } else if (e.key === "Home") k = 0;
    else if (e.key === "End") k = m - 1;
    else if (e.key !== "Enter" && e.key !== " ") return;
    e.preventDefault();
    e.stopPropagation();
    heatmapView.cursor = [q, k];
    say(q, k, e.key === "Enter" || e.key === " ");
    plot.dataset.cursor = `${q},${k}`;
    drawn.point(q, k);
    if (heatmapView.zoom || size >= READABLE) scrollToCell(parts.scroller, size, q, k);
    placePinned(parts.scroller);
  };
  plot.onfocus = () => {
    const [q, k] = heatmapView.cursor || target || [0, 0];
    say(q, k);
    plot.dataset.cursor = `${q},${k}`;
  };
  return selId;
}
