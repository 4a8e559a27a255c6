// The Compile tab's "every length" panel: compile the program for every length (weights that do not depend
// on the input length; docs/every_length.md), or show the dialect check's reason it cannot be, with the line;
// then plot agreement with the evaluator against input length for a fixed softmax temperature, for the
// paper's temperature scaling, and for hard attention; the model's ONNX download. Text goes in with textContent only.

import * as api from "./api.js";
import { vocabValue } from "./forms.js";
import { CHART, loadPlotly, plotlyConfig, TICKS } from "./plotly.js";

let getState = null;
let seq = 0;

function node(tag, attrs = {}, text = "") {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
  if (text) n.textContent = text;
  return n;
}

export function initLengthFree(stateGetter) {
  getState = stateGetter;
  const view = document.getElementById("view-compile");
  if (!view || document.getElementById("lf-panel")) return;
  const panel = node("div", { id: "lf-panel", class: "panel" });
  const title = node("div", { class: "panel-title" });
  title.append(node("h2", {}, "Every length"),
    node("span", { class: "hint" }, "weights that do not depend on the input length, for programs in the length-free fragment"));
  const button = node("button", { id: "lf-compile", type: "button" }, "Compile for every length");
  button.addEventListener("click", compileForEveryLength);
  const buttons = node("div", { class: "buttons" });
  buttons.append(button);
  const plot = node("div", { id: "lf-plot", class: "plot" });
  plot.hidden = true;
  // the compiled model as ONNX (any length, hard attention; docs/interop.md), shown once it is compiled
  const onnx = node("a", { id: "lf-onnx-download", download: "" }, "Download as ONNX (.onnx, any length)");
  const downloads = node("p", { id: "lf-downloads", class: "hint" });
  downloads.append(onnx);
  downloads.hidden = true;
  panel.append(title, buttons, node("p", { id: "lf-status", class: "hint", "aria-live": "polite" }), downloads, plot,
    node("p", { id: "lf-note", class: "hint" }));
  view.append(panel);
}

async function compileForEveryLength() {
  const mine = ++seq;
  const state = getState();
  const status = document.getElementById("lf-status");
  const plot = document.getElementById("lf-plot");
  const note = document.getElementById("lf-note");
  const field = (id) => (document.getElementById(id) ? document.getElementById(id).value.trim() : "");
  const request = { source: state.source, length_free: true, vocab: vocabValue(field("compile-vocab") || "ab") };
  if (field("compile-output")) request.output = field("compile-output");
  const downloads = document.getElementById("lf-downloads");
  plot.hidden = true;
  downloads.hidden = true;
  note.textContent = "";
  status.textContent = "compiling…";
  status.dataset.state = "busy";
  try {
    const { id, summary } = await api.compile(request);
    if (mine !== seq) return;
    document.getElementById("lf-onnx-download").setAttribute("href", `/api/v1/models/${encodeURIComponent(id)}/model.onnx`);
    downloads.hidden = false;
    const d = summary.dialect;
    status.textContent = `${d.smallest_name}${d.causal.member ? ", causal" : ""}: ${summary.layers} layers, ` +
      `${summary.heads.length} heads, ${summary.params} parameters, no max_len. Measuring agreement by length…`;
    const study = await api.softStudy(id, {});
    if (mine !== seq) return;
    await drawStudy(plot, study);
    status.textContent = status.textContent.replace(" Measuring agreement by length…", "");
    status.dataset.state = "done";
    note.textContent = `Each point: ${study.samples} seeded inputs of that length, right at every position. Counting heads are ` +
      `uniform attention, exact at any temperature; lookups and rightmost heads need β to grow with n ` +
      `(the paper's temperature scaling, β = ${study.scaling}); a fixed β = ${study.fixed_beta} loses them ` +
      `once their score gap falls below about 1/β.`;
  } catch (e) {
    if (mine !== seq) return;
    status.textContent = e.line ? `line ${e.line}: ${e.message}` : e.message;
    status.dataset.state = "refused";
  }
}

async function drawStudy(plot, study) {
  const Plotly = await loadPlotly();
  plot.hidden = false;
  const line = (y, name, color, dash) => ({ x: study.lengths, y, name, mode: "lines+markers", line: { color, dash } });
  await Plotly.react(plot, [
    line(study.hard, "hard attention", "#009E73", "dot"),
    line(study.scaled, "softmax, β scaled with n", "#0072B2", "solid"),
    line(study.fixed, `softmax, fixed β = ${study.fixed_beta}`, "#D55E00", "dash"),
  ], {
    height: 260, margin: { l: 50, r: 20, t: 10, b: 40 }, legend: { orientation: "h", y: -0.3 },
    xaxis: { type: "log", title: { text: "input length n" }, tickformat: "d" },
    yaxis: { title: { text: "inputs fully right" }, range: [-0.02, 1.02], ...TICKS.percent },
  }, plotlyConfig(CHART));
  plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1);
}
