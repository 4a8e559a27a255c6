// The Compile view: the program as real transformer weights. Summary and residual layout; each
// compiled head's attention next to the program's selector (BOS column shown); the residual stream
// decoded stage by stage; a beta slider from hard to soft attention with live agreement; the
// agreement-vs-beta curve of the soft-attention study; the weights and the ONNX graph to download.

import * as api from "./api.js";
import { graphIndex, isSelector, traced } from "./docmodel.js";
import { drawHeatmap, hoverLines, selectionDetails } from "./heatmap.js";
import { CHART, loadPlotly, plotlyConfig, TICKS } from "./plotly.js";
import { followEdits, longestInput, vocabOf, vocabValue } from "./forms.js";
import { boundCompileMaxLen, limitsNow, serverLimits } from "./limits.js";
import { parseInputText } from "./state.js";
import { el, formatValue } from "./values.js";

export const compiled = { id: null, summary: null, run: null, study: null, spec: null };

export function renderCompileForm(container, state) {
  const doc = state.doc;
  const sops = doc ? Object.entries(doc.results).filter(([, r]) => r.kind === "sop").map(([n]) => n) : [];
  const output = el("select", { id: "compile-output", "aria-label": "output s-op to compile" },
    ...sops.map((n) => el("option", { value: n }, n)));
  const preferred = doc ? doc.output : null;  // the program's default output (its `# output:` header)
  output.value = sops.includes(preferred) ? preferred : sops[sops.length - 1] || "";
  // vocab and max_len follow the inputs on screen (unless edited for this program: forms.js)
  const vocab = el("input", { id: "compile-vocab", type: "text", spellcheck: "false" });
  vocab.value = vocabOf(state.inputs);
  const maxLen = el("input", { id: "compile-max-len", type: "number", min: "1" });
  maxLen.value = String(longestInput(state.inputs));
  if (limitsNow()) boundCompileMaxLen(limitsNow(), maxLen);
  else serverLimits().then((limits) => boundCompileMaxLen(limits, maxLen)).catch(() => {});
  const form = el("form", { id: "compile-form", class: "train-form", onsubmit: (e) => e.preventDefault() },
    el("label", { class: "field" }, el("span", {}, "output"), output),
    el("label", { class: "field" }, el("span", {}, "vocab"), vocab, el("small", {}, "characters, or a JSON list")),
    el("label", { class: "field" }, el("span", {}, "max_len"), maxLen, el("small", {}, "exact for every input up to this")));
  followEdits(form);
  container.replaceChildren(form);
}

function readForm() {
  const v = (id) => document.getElementById(id).value.trim();
  return { output: v("compile-output") || undefined, vocab: vocabValue(v("compile-vocab")),
    max_len: Number(v("compile-max-len")) };
}

export async function compileProgram(state) {
  const request = { source: state.source, ...readForm() };
  const { id, summary } = await api.compile(request);
  Object.assign(compiled, { id, summary, run: null, study: null, spec: request });
  return compiled;
}

export async function runCompiled(state, beta) {
  if (!compiled.id) return null;
  const input = parseInputText(state.inputs[state.current]).value;
  compiled.run = await api.runModel(compiled.id, [input], beta ? { mode: "soft", beta } : { mode: "hard" });
  return compiled.run;
}

export async function studySoft() {
  if (!compiled.id) return null;
  compiled.study = await api.softStudy(compiled.id, {});
  return compiled.study;
}

// ------------------------------------------------------------------ summary and layout

// A block's dimensions: a range, or the list when reuse gave it dimensions of dead blocks (layout `dims`).
function dimsText(b) {
  if (b.dims) return b.dims.join(", ");
  return b.size === 1 ? `${b.start}` : `${b.start}–${b.start + b.size - 1}`;
}

export function renderSummary(box, layoutBox) {
  const s = compiled.summary;
  if (!s) { box.replaceChildren(el("p", { class: "empty" }, "Not compiled yet.")); layoutBox.replaceChildren(); return; }
  const rows = [
    ["output", `${s.output} (${s.output_encoding}${s.classes ? `, ${s.classes.length} classes` : ""})`],
    ["layers", `${s.layers} (RASP analysis: ${s.analysis_layers})`],
    ["heads per layer", `${s.heads_per_layer.join(", ")} (analysis: ${s.analysis_heads_per_layer.join(", ")})`],
    ["MLP widths", s.mlp_widths.join(", ")],
    ["residual width", String(s.residual_width)],
    ["d_head · d_mlp", `${s.d_head} · ${s.d_mlp}`],
    ["parameters", s.params.toLocaleString()],
    ["vocab · max_len", `${s.vocab.map(formatValue).join(" ")} (+ ${s.bos}) · ${s.max_len}`],
    ["compiled in", `${(1000 * s.compile_seconds).toFixed(0)} ms`],
  ];
  const table = el("table", { class: "summary", "aria-label": "Compiled model summary" },
    ...rows.map(([k, v]) => el("tr", {}, el("th", { scope: "row" }, k), el("td", {}, v))));
  const notes = s.notes.length ? el("ul", { class: "notes" }, ...s.notes.map((n) => el("li", {}, n))) : "";
  const download = el("a", { id: "weights-download", href: `/api/v1/models/${compiled.id}/weights.npz`, download: "" },
    "Download the weights (.npz)");
  // the same model as a standard ONNX graph (float64, hard attention: the exact model; docs/interop.md)
  const onnx = el("a", { id: "onnx-download", href: `/api/v1/models/${compiled.id}/model.onnx`, download: "" },
    "Download as ONNX (.onnx)");
  box.replaceChildren(table, notes, el("p", {}, download, " · ", onnx, " · layout: ",
    el("a", { href: "/docs", target: "_blank" }, "API"), " · the names follow docs/weights.md, the ONNX graph docs/interop.md"));
  const blocks = el("table", { class: "layout-table", "aria-label": "Residual stream layout" },
    el("tr", {}, ...["block", "dims", "kind", "written by", "values"].map((h) => el("th", { scope: "col" }, h))),
    ...s.layout.map((b) => el("tr", {},
      el("td", { class: "mono" }, b.name), el("td", {}, dimsText(b)),
      el("td", {}, b.kind + (b.encoding ? ` (${b.encoding})` : "")),
      el("td", {}, b.written_by + (b.erased_by ? `, erased by ${b.erased_by}` : "")),
      el("td", { class: "mono" }, (b.values || []).slice(0, 12).join(" ") + ((b.values || []).length > 12 ? " …" : "")))));
  layoutBox.replaceChildren(blocks);
}

// ------------------------------------------------------------------ attention next to the selectors

function programSelector(doc, head) {
  // the RASP selector of a compiled head, by name, then by label
  if (!doc || !doc.trace) return null;
  const { nodes } = graphIndex(doc);
  for (const n of nodes.values()) {
    if (isSelector(n) && (n.names.includes(head.selector) || n.name === head.selector || n.label === head.label)) {
      return traced(doc, n.id);
    }
  }
  return null;
}

function withBos(matrix) {
  const n = matrix.length;
  return [new Array(n + 1).fill(0), ...matrix.map((row) => [0, ...row])];
}

export function renderAttention(container, doc) {
  container.replaceChildren();
  const run = compiled.run;
  if (!run) return;
  const tokens = run.positions[0];
  const a = run.agreement;
  container.append(el("p", { class: "note", id: "compile-agreement" },
    `${run.mode === "hard" ? "average-hard attention" : `softmax, β = ${formatValue(run.beta)}`}: ` +
    `output ${run.outputs[0] ? run.outputs[0].map(formatValue).join(" ") : "—"}; evaluator ${run.expected[0] ? run.expected[0].map(formatValue).join(" ") : "—"}; ` +
    `${a.agree}/${a.inputs} agree${a.max_error ? `, largest output error ${a.max_error.toFixed(3)}` : ""}.`));
  container.append(el("p", { class: "note" }, "The column before position 0 is the BOS token: a query whose selector selects nothing rests on it " +
    "(the aggregate's default), and selector_width heads always give it a share, 1/(w+1), which the next MLP decodes."));
  for (const head of run.attention) {
    const card = el("div", { class: "overlay-card", "data-layer": String(head.layer), "data-head": String(head.head) });
    card.append(el("h3", {}, `layer ${head.layer}, head ${head.head}: ${head.selector} — ${head.mode}` +
      (head.part ? ` (${head.part})` : "")));
    const plot = el("div", { class: "overlay-plot" });
    card.append(plot);
    container.append(card);
    const matrix = programSelector(doc, head);
    const fill = head.matrices[0];
    // positions as in the Program view (the first token is 0), the BOS column named BOS
    const pos = (i) => (i === 0 ? "BOS" : `${i - 1} (${formatValue(tokens[i])})`);
    const hover = fill.map((row, q) => row.map((v, k) => hoverLines([
      `query ${pos(q)} ← key ${pos(k)}`, `compiled attention ${v.toFixed(3)}`,
      ...(matrix && q > 0 && k > 0 ? [`selector: ${matrix[q - 1][k - 1] ? "selected" : "not selected"}`] : [])])));
    const outlined = matrix ? withBos(matrix) : fill.map((r) => r.map(() => 0));
    card.append(selectionDetails(tokens, matrix ? outlined : null, { fill, offset: 1, fillTitle: "compiled attention" }));
    loadPlotly().then(() => drawHeatmap(plot, { matrix: outlined,
      fill, tokens, hover, fillTitle: "compiled attention", offset: 1 })).then(() => { plot.dataset.drawn = "1"; });
  }
}

// compiled attention of the head implementing a program selector, for the Train view's overlay
export function compiledAttentionFor(doc) {
  if (!compiled.run) return null;
  return (selectorId, tokens) => {
    const node = graphIndex(doc).nodes.get(selectorId);
    if (!node) return null;
    const head = compiled.run.attention.find((h) => node.names.includes(h.selector) || h.selector === node.name || h.label === node.label);
    const positions = compiled.run.positions[0];
    if (!head || positions.length !== tokens.length) return null;
    return head.matrices[0];
  };
}

// ------------------------------------------------------------------ residual stream

export function renderResidual(container) {
  container.replaceChildren();
  const run = compiled.run;
  if (!run) return;
  const stages = run.residual.map((s) => s.stage);
  const blocks = Object.keys(run.residual[0].blocks);
  const table = el("table", { class: "residual-table", "aria-label": "Residual stream decoded at every stage" },
    el("tr", {}, el("th", { scope: "col" }, "block"), ...stages.map((s) => el("th", { scope: "col" }, s))));
  for (const block of blocks) {
    const tr = el("tr", {}, el("th", { scope: "row", class: "mono" }, block));
    let previous = null;
    for (const stage of run.residual) {
      const values = stage.blocks[block][0];
      const text = values.map((v) => (v === null ? "·" : formatValue(v))).join(" ");
      tr.append(el("td", { class: `mono${text !== previous && previous !== null ? " changed" : ""}` }, text));
      previous = text;
    }
    table.append(tr);
  }
  container.append(table);
}

// ------------------------------------------------------------------ the soft-attention study

export async function renderStudy(plot, note, beta) {
  const study = compiled.study;
  if (!study) { plot.hidden = true; return; }
  const Plotly = await loadPlotly();
  plot.hidden = false;
  const betas = study.curve.map((p) => p.beta);
  const traces = [
    { x: betas, y: study.curve.map((p) => p.agreement), name: "inputs fully right", mode: "lines+markers", line: { color: "#0072B2" } },
    { x: betas, y: study.curve.map((p) => p.positions), name: "positions right", mode: "lines", line: { color: "#56B4E9", dash: "dot" } },
    { x: betas, y: study.curve.map((p) => p.max_error), name: "max output error", mode: "lines", yaxis: "y2", line: { color: "#D55E00" } },
  ];
  const shapes = [];
  if (study.min_beta) shapes.push({ type: "line", x0: study.min_beta, x1: study.min_beta, y0: 0, y1: 1, yref: "paper",
    line: { color: "#009E73", dash: "dash" } });
  if (beta) shapes.push({ type: "line", x0: beta, x1: beta, y0: 0, y1: 1, yref: "paper", line: { color: "#E69F00" } });
  await Plotly.react(plot, traces, {
    height: 280, margin: { l: 50, r: 50, t: 10, b: 40 }, legend: { orientation: "h", y: -0.3 },
    xaxis: { type: "log", title: { text: "β (inverse temperature)" }, dtick: 1, exponentformat: "power" },
    yaxis: { title: { text: "agreement" }, range: [0, 1.02], ...TICKS.percent },
    yaxis2: { overlaying: "y", side: "right", title: { text: "max error" }, showgrid: false, rangemode: "tozero",
      ...TICKS.number },
    shapes,
  }, plotlyConfig(CHART));
  plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1);
  const byN = (study.min_beta_by_n || []).map((x) => `n=${x.n}: ${x.min_beta === null ? "—" : x.min_beta.toFixed(2)}`).join(", ");
  const kinds = study.heads.map((h) => `L${h.layer} h${h.head} ${h.selector}: ${h.kind}`).join("; ");
  const over = study.exhaustive ? `on all ${study.inputs} inputs up to length ${study.max_len}`
    : `on ${study.inputs} inputs sampled up to length ${study.max_len} (too many to try them all)`;
  note.textContent = `Exact with softmax from β ≈ ${study.min_beta ? study.min_beta.toFixed(2) : "—"} ${over}. ` +
    `Smallest β by length: ${byN}. Heads: ${kinds}.`;
}

export function agreementAt(beta) {
  const study = compiled.study;
  if (!study || !beta) return null;
  const curve = study.curve;
  let best = curve[0];
  for (const p of curve) if (Math.abs(Math.log(p.beta / beta)) < Math.abs(Math.log(best.beta / beta))) best = p;
  return best;
}

// Forget the compiled model (the program changed, or another was loaded).
export function forgetCompiled() {
  Object.assign(compiled, { id: null, summary: null, run: null, study: null, spec: null });
}

// Whether the compiled model can read the input on screen: a sentence saying what it lacks, or null.
export function coverageProblem(state) {
  const s = compiled.summary;
  if (!s) return null;
  const { value } = parseInputText(state.inputs[state.current] || "");
  const tokens = Array.isArray(value) ? value : [...value];
  const known = new Set(s.vocab.map((t) => JSON.stringify(t)));
  const missing = [...new Set(tokens.map((t) => JSON.stringify(t)))].filter((t) => !known.has(t)).map((t) => formatValue(JSON.parse(t)));
  const parts = [];
  if (missing.length) parts.push(`its vocab (${s.vocab.map(formatValue).join(" ")}) lacks ${missing.join(" ")}`);
  if (tokens.length > s.max_len) parts.push(`the input has ${tokens.length} tokens, over its max_len of ${s.max_len}`);
  return parts.length ? `This model was compiled for another input: ${parts.join("; ")}. ` +
    "Compile again (the form follows the input on screen) to see its heads on this input." : null;
}

export function compileInitSpec() {
  return compiled.id ? { id: compiled.id, vocab: compiled.summary.vocab, max_len: compiled.summary.max_len } : null;
}
