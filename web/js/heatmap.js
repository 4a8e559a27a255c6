// Selector heatmaps (plotly.js, served locally): queries as rows, keys as columns, both axes labelled
// with position and token; selected cells filled; hover names both sides; a side column with each
// row's selector width; below, the aggregated values and the results.

import { displayName, graphIndex, selectorOf, traced, usersOfSelector } from "./docmodel.js";
import { loadPlotly, plotlyConfig, plotlyReady, plotlyText } from "./plotly.js";
import { el, formatValue } from "./values.js";

export const SELECTED = "#0072B2";   // Okabe–Ito blue
export const EMPTY = "#f1f3f6";

function cellSize(n) {
  return Math.max(6, Math.min(30, Math.floor(560 / Math.max(n, 1))));
}

function tickLabels(tokens, prefix) {
  return tokens.map((t, i) => `${prefix}${i} ${plotlyText(formatValue(t))}`);
}

// A generic heatmap: `matrix` (0/1) drawn filled, or `fill` (floats) drawn as a colour ramp with the
// 0/1 `matrix` outlined on top. Reused by the Compile and Train views. `hover` holds plotly markup: build
// it with hoverLines(), which escapes the text in it.
export function drawHeatmap(plot, { matrix, fill = null, tokens, rowTokens = tokens, hover, widths = null,
  fillTitle = "attention", title = "" }) {
  const n = rowTokens.length, m = tokens.length;
  const size = cellSize(Math.max(n, m));
  const x = tickLabels(tokens, "k"), y = tickLabels(rowTokens, "q");
  const traces = [{
    type: "heatmap", z: fill || matrix, x, y, customdata: hover, hovertemplate: "%{customdata}<extra></extra>",
    colorscale: fill ? "Viridis" : [[0, EMPTY], [1, SELECTED]], zmin: 0, zmax: 1, showscale: Boolean(fill),
    colorbar: fill ? { title: { text: fillTitle, side: "right" }, thickness: 10, len: 0.6 } : undefined,
    xgap: m <= 64 ? 1 : 0, ygap: n <= 64 ? 1 : 0, xaxis: "x", yaxis: "y",
  }];
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
      colorscale: [[0, "#ffffff"], [1, "#fff3d6"]], showscale: false, texttemplate: "%{z}",
      hovertemplate: "query %{y}: selects %{z} keys<extra></extra>", xgap: 1, ygap: n <= 64 ? 1 : 0,
    });
  }
  const plotWidth = m * size, sideWidth = widths ? 46 : 0;
  const labelRoom = 70;
  const layout = {
    width: plotWidth + sideWidth + labelRoom + 40 + (fill ? 70 : 0),
    height: n * size + labelRoom + 40,
    margin: { l: labelRoom, r: 20 + (fill ? 60 : 0), t: title ? 30 : 10, b: labelRoom },
    title: title ? { text: plotlyText(title), font: { size: 13 } } : undefined,
    xaxis: { domain: [0, plotWidth / (plotWidth + sideWidth || 1) - (widths ? 0.01 : 0)], side: "bottom",
      tickangle: -45, title: { text: "keys", standoff: 4 }, fixedrange: false,
      tickfont: { family: "DejaVu Sans Mono, monospace", size: size < 12 ? 8 : 11 } },
    yaxis: { autorange: "reversed", title: { text: "queries", standoff: 4 },
      tickfont: { family: "DejaVu Sans Mono, monospace", size: size < 12 ? 8 : 11 } },
    xaxis2: { domain: [plotWidth / (plotWidth + sideWidth || 1), 1], showticklabels: true, fixedrange: true,
      tickfont: { size: 10 } },
    shapes,
    plot_bgcolor: "#fff", paper_bgcolor: "#fff",
    font: { family: "system-ui, DejaVu Sans, sans-serif", size: 12 },
  };
  if (!widths) delete layout.xaxis2;
  return window.Plotly.react(plot, traces, layout, plotlyConfig({ responsive: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d"], toImageButtonOptions: { filename: "rasplay-heatmap" } }));
}

// Hover text for plotly from lines of plain text (escaped, joined with <br>).
export function hoverLines(lines) {
  return lines.map(plotlyText).join("<br>");
}

// One side of a cell, as plain text: "query 2 (l, query value 2)".
function sideText(role, i, tokens, values) {
  return `${role} ${i} (${formatValue(tokens[i])}${values ? `, ${role} value ${formatValue(values[i])}` : ""})`;
}

// The caption above the heatmap, as DOM nodes (program text only ever as text).
function describe(doc, selId) {
  const { nodes, inputs } = graphIndex(doc);
  const node = nodes.get(selId);
  const parts = [el("code", {}, node.label)];
  if (node.head !== null && node.head !== undefined) parts.push(`layer ${node.layer}, head ${node.head}`);
  else parts.push(`layer ${node.layer} (not aggregated)`);
  if (node.kind === "select") {
    const ins = inputs.get(selId);
    parts.push(`keys: ${displayName(doc, ins.keys)}, queries: ${displayName(doc, ins.queries)}`);
  }
  return parts.flatMap((p, i) => (i ? [" · ", p] : [p]));
}

// Show the selector behind `nodeId` (a selector, aggregate or selector_width) for the traced input.
export function showSelector(doc, nodeId, parts) {
  const { plot, title, note, below } = parts;
  if (!plotlyReady()) {
    title.textContent = "Selector";
    note.textContent = "loading the heatmap view…";
    loadPlotly().then(() => showSelector(doc, nodeId, parts)).catch((e) => { note.textContent = e.message; });
    return selectorOf(doc, nodeId);
  }
  const selId = selectorOf(doc, nodeId);
  below.replaceChildren();
  if (selId === null || selId === undefined || !doc.trace) {
    title.textContent = "Selector";
    note.textContent = "Click a selector, an aggregate or a head to see its attention pattern.";
    plot.hidden = true;  // (not Plotly.purge: a redraw plotly still has scheduled would fail on it)
    return null;
  }
  const matrix = traced(doc, selId);
  const tokens = doc.inputs[doc.trace.input];
  title.textContent = `Selector: ${displayName(doc, selId)}`;
  if (!matrix) {
    note.textContent = (doc.trace.nodes[String(selId)] || {}).error || "this selector failed on this input";
    plot.hidden = true;
    return selId;
  }
  note.replaceChildren(...describe(doc, selId));
  plot.hidden = false;
  const { nodes, inputs } = graphIndex(doc);
  const node = nodes.get(selId);
  const ins = inputs.get(selId) || {};
  const keyValues = node.kind === "select" ? traced(doc, ins.keys) : null;
  const queryValues = node.kind === "select" ? traced(doc, ins.queries) : null;
  const widths = matrix.map((row) => row.reduce((a, b) => a + b, 0));
  const queryText = tokens.map((_, q) => sideText("query", q, tokens, queryValues));
  const keyText = tokens.map((_, k) => sideText("key", k, tokens, keyValues));
  const queryHtml = queryText.map(plotlyText), keyHtml = keyText.map(plotlyText);   // escaped once per side
  const hover = matrix.map((r, q) => r.map((v, k) =>
    `${queryHtml[q]} ← ${keyHtml[k]}<br>${v ? "<b>selected</b>" : "not selected"}`));
  drawHeatmap(plot, { matrix, tokens, hover, widths })
    .then(() => { plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1); });

  // below: what the heads built on this selector read (per key) and produce (per query)
  const table = el("table", { class: "below", "aria-label": "Aggregated values and results" });
  const row = (label, values) => {
    const tr = el("tr", {}, el("th", { scope: "row" }, label));
    (values || tokens.map(() => null)).forEach((v) => tr.append(el("td", {}, formatValue(v))));
    table.append(tr);
  };
  row("position", tokens.map((_, i) => i));
  row("token", tokens);
  if (keyValues) row(`keys: ${displayName(doc, ins.keys)}`, keyValues);
  if (queryValues) row(`queries: ${displayName(doc, ins.queries)}`, queryValues);
  for (const user of usersOfSelector(doc, selId)) {
    if (user.kind === "aggregate") {
      const sopId = inputs.get(user.id).sop;
      row(`aggregated: ${displayName(doc, sopId)} (per key)`, traced(doc, sopId));
      row(`result: ${user.name} (per query)`, traced(doc, user.id));
    } else {
      row(`selector_width: ${user.name}`, traced(doc, user.id));
    }
  }
  below.append(table);
  plot.removeAllListeners && plot.removeAllListeners("plotly_click");
  plot.on && plot.on("plotly_click", (ev) => {
    const p = ev.points && ev.points[0];
    const [q, k] = (p && p.curveNumber === 0 && p.pointIndex) || [];   // a cell of the selector, not the widths
    if (matrix[q] && matrix[q][k] !== undefined) {
      const cell = `${queryText[q]} ← ${keyText[k]}, ${matrix[q][k] ? "selected" : "not selected"}`;
      note.replaceChildren(...describe(doc, selId), el("br"), `locked: ${cell}`);
    }
  });
  return selId;
}
