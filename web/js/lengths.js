// The Train tab's "Longer inputs" view (docs/length_generalization.md): accuracy by input length of each
// trained model, live per length bin while it trains, then per length; beside it the length-free compiled
// model measured on the same inputs (where the program has one) and the length up to which a max_len
// compiled model is defined. "Where it breaks": the longest held-out input's per-position correctness and
// each selector's paired head, at a training length and at that length.

import { drawHeatmap, hoverLines } from "./heatmap.js";
import { loadPlotly, plotlyConfig } from "./plotly.js";
import { el, formatValue } from "./values.js";

const COLORS = ["#0072B2", "#D55E00"];
const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);

// the form's length fields: test lengths, the position scheme, the mask
export function lengthFields(field, input) {
  const positional = el("select", { id: "train-positional", "aria-label": "position encoding" },
    el("option", { value: "learned" }, "learned"),
    el("option", { value: "random_offset" }, "learned, random offsets"),
    el("option", { value: "none" }, "none"));
  return [
    field("test lengths", el("span", { class: "pair" },
      input({ id: "train-test-min", type: "number", min: "2", max: "512", "aria-label": "shortest test input" }), "–",
      input({ id: "train-test-max", type: "number", min: "2", max: "512", "aria-label": "longest test input" })),
    "longer, held out: empty for none"),
    field("positions", positional, "random offsets: Huang et al."),
    field("causal", el("span", {}, input({ id: "train-causal", type: "checkbox" })), "decoder mask"),
  ];
}

export function readLengthFields(num) {
  const test = { test_min_len: num("train-test-min"), test_max_len: num("train-test-max") };
  return { ...(test.test_min_len === undefined && test.test_max_len === undefined ? {} : test),
    positional: document.getElementById("train-positional").value,
    causal: document.getElementById("train-causal").checked };
}

function traces(runs) {
  const out = [];
  runs.forEach((run, i) => {
    const L = run.result && run.result.lengths;
    if (L) {
      out.push({ x: L.per_length.map((p) => p.length), y: L.per_length.map((p) => p.seq_acc), mode: "lines+markers",
        name: `${run.label}: trained, per sequence`, line: { color: COLORS[i], width: 2.5 }, marker: { size: 4 } });
      out.push({ x: L.per_length.map((p) => p.length), y: L.per_length.map((p) => p.acc), mode: "lines",
        name: `${run.label}: trained, per position`, line: { color: COLORS[i], dash: "dot" } });
      return;
    }
    const last = [...run.events].reverse().find((e) => e.point === "eval" && e.bins);
    if (!last) return;
    // live: each bin as a flat step over its lengths
    const x = [], y = [];
    for (const b of last.bins) { x.push(b.lo, b.hi, null); y.push(b.seq_acc, b.seq_acc, null); }
    out.push({ x, y, mode: "lines", name: `${run.label}: step ${last.step}, per sequence per bin`,
      line: { color: COLORS[i], width: 2.5 } });
  });
  const done = runs.find((r) => r.result && r.result.lengths);
  const lf = done && done.result.lengths.compiled.length_free;
  if (lf && lf.available) {
    out.push({ x: lf.per_length.map((p) => p.length), y: lf.per_length.map((p) => p.seq_acc), mode: "lines",
      name: "length-free compiled model", line: { color: "#009E73", width: 2, dash: "dash" } });
  }
  return out;
}

function lengthsOf(runs) {
  const run = runs.find((r) => r.result && r.result.lengths) || runs.find((r) => r.job && r.job.spec);
  const cfg = run && (run.result ? run.result.config : run.job.spec.config);
  return cfg && cfg.test_min_len ? cfg : null;
}

export async function renderLengths(container, runs) {
  const cfg = lengthsOf(runs);
  if (!cfg) {
    container.replaceChildren(el("p", { class: "note" }, "Give test lengths (longer than the training lengths) and " +
      "start training: this view then shows accuracy by input length."));
    return;
  }
  // the chart is kept between updates (they come every second while a job runs); the rest is redrawn
  let plot = container.querySelector(".lengths-plot");
  if (!plot) {
    plot = el("div", { id: "lengths-plot", class: "curves lengths-plot" });
    container.replaceChildren(plot);
  }
  while (plot.nextSibling) plot.nextSibling.remove();
  container.append(summary(runs, cfg));
  const Plotly = await loadPlotly();
  const maxLen = cfg.max_len;
  await Plotly.react(plot, traces(runs), {
    height: 300, margin: { l: 50, r: 20, t: 10, b: 40 }, legend: { orientation: "h", y: -0.25, font: { size: 11 } },
    xaxis: { title: { text: "input length" }, range: [0, cfg.test_max_len + 1] },
    yaxis: { title: { text: "accuracy" }, range: [0, 1.02], tickformat: ".0%", dtick: 0.25 },
    shapes: [
      { type: "rect", xref: "x", yref: "paper", x0: cfg.min_len - 0.5, x1: maxLen + 0.5, y0: 0, y1: 1,
        fillcolor: "#999", opacity: 0.12, line: { width: 0 } },
      { type: "line", xref: "x", yref: "paper", x0: maxLen + 0.5, x1: maxLen + 0.5, y0: 0, y1: 1,
        line: { color: "#555", dash: "dash", width: 1.5 } }],
    annotations: [{ x: maxLen + 0.5, y: 1.0, yref: "paper", xanchor: "left", showarrow: false, font: { size: 11 },
      text: ` training lengths end; a model compiled with max_len ${maxLen} is defined up to here` }],
  }, plotlyConfig({ responsive: true }));
  plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1);
  const done = runs.find((r) => r.result && r.result.lengths);
  if (done) container.append(whereItBreaks(done));
}

// the bins as a table (what the chart shows, readable without it)
function summary(runs, cfg) {
  const done = runs.filter((r) => r.result && r.result.lengths);
  const rows = [];
  for (const run of done) {
    const L = run.result.lengths;
    const lf = L.compiled.length_free;
    for (const b of L.bins) {
      const c = lf.available ? (lf.bins.find((x) => x.lo === b.lo && x.hi === b.hi) || {}).seq_acc : null;
      rows.push(el("tr", { "data-bin": `${b.lo}-${b.hi}` }, el("td", {}, run.label), el("td", {}, `${b.lo}–${b.hi}`),
        el("td", {}, b.held_out ? "held out by length" : "training lengths"), el("td", {}, pct(b.acc)),
        el("td", {}, pct(b.seq_acc)), el("td", {}, lf.available ? pct(c) : "none"), el("td", {}, String(b.count))));
    }
  }
  const notes = [];
  const first = done[0] && done[0].result.lengths;
  if (first) {
    notes.push(`${first.positional === "random_offset" ? "learned positions trained at random offsets" : first.positional === "none"
      ? "no positional encoding" : "learned positions"}, ${first.causal ? "causal mask" : "bidirectional"}, trained on ${first.device}.`);
    if (!first.compiled.length_free.available) notes.push(`No length-free compiled model: ${first.compiled.length_free.reason}`);
    if (first.unseen_values) notes.push(`${first.unseen_values} positions of the longer inputs take values training never showed (counted wrong).`);
  } else {
    notes.push(`Training on lengths ${cfg.min_len}–${cfg.max_len}; testing at ${cfg.test_min_len}–${cfg.test_max_len}.`);
  }
  return el("div", { id: "lengths-summary" }, ...notes.map((t) => el("p", { class: "note" }, t)),
    rows.length ? el("table", { class: "lengths-table" }, el("thead", {}, el("tr", {},
      ...["model", "lengths", "", "per position", "per sequence", "length-free compiled", "inputs"].map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows)) : "");
}

function correctness(ex) {
  return el("div", { class: "where-correct", role: "list", "aria-label": "model output per position" },
    ...ex.input.map((t, i) => {
      const ok = ex.correct ? ex.correct[i] : null;
      return el("span", { role: "listitem", class: ok ? "cell ok" : "cell wrong", "data-ok": String(ok),
        title: `position ${i}: input ${formatValue(t)}, model ${formatValue(ex.prediction[i])}, program ${
          ex.target ? formatValue(ex.target[i]) : "–"}` }, `${formatValue(ex.prediction[i])}${ok ? "" : "✗"}`);
    }));
}

function headCard(ex, sel, title) {
  const match = ex.matches.find((x) => x.selector === sel.selector) || {};
  const head = match.head ?? 0;
  const matrix = (ex.selectors.find((s) => s.selector === sel.selector) || {}).matrix;
  const fill = ex.attention[sel.layer - 1] ? ex.attention[sel.layer - 1][head] : null;
  const card = el("div", { class: "overlay-card" }, el("h3", {}, `${title}: ${sel.name}, layer ${sel.layer} head ${head}, ` +
    `match ${match.score === null || match.score === undefined ? "–" : match.score.toFixed(3)}`));
  const plot = el("div", { class: "overlay-plot" });
  card.append(plot);
  if (matrix) {
    const offset = ex.offset || 0;
    const pos = (i) => (i < offset ? "BOS" : `${i - offset} (${formatValue(ex.tokens[i])})`);
    const hover = matrix.map((row, q) => row.map((v, k) => hoverLines([`query ${pos(q)} ← key ${pos(k)}`,
      `selector: ${v ? "selected" : "not selected"}`, ...(fill ? [`attention ${fill[q][k].toFixed(3)}`] : [])])));
    loadPlotly().then(() => drawHeatmap(plot, { matrix, fill, tokens: ex.tokens, hover, offset, fillTitle: "attention" }))
      .then(() => { plot.dataset.drawn = "1"; });
  }
  return card;
}

function whereItBreaks(run) {
  const long = run.result.lengths.long_example, short = run.result.example;
  const wrong = long.correct ? long.correct.filter((x) => !x).length : null;
  const box = el("div", { id: "where-it-breaks" }, el("h3", {}, "Where it breaks"),
    el("p", { class: "note" }, `${run.label} on a held-out input of length ${long.input.length}: ` +
      (wrong === null ? "the program fails on it." : `${long.input.length - wrong} of ${long.input.length} positions right.`)),
    correctness(long));
  for (const sel of long.selectors) {
    box.append(el("div", { class: "side-by-side" }, headCard(short, sel, `example input, length ${short.input.length}`),
      headCard(long, sel, `held out, length ${long.input.length}`)));
  }
  return box;
}
