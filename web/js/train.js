// The Train view: train a small transformer on the program's task (on the server, as a job), watch
// its loss and accuracy live, then lay its attention over the program's selectors. "Ablate" trains a
// model with one layer fewer beside the first, to test the analysis' prediction.

import * as api from "./api.js";
import { drawHeatmap, hoverLines, selectionDetails } from "./heatmap.js";
import { CHART, loadPlotly, plotlyConfig, TICKS } from "./plotly.js";
import { followEdits, markEdited, vocabOf, vocabValue } from "./forms.js";
import { boundTrainInputs, limitsNow, serverLimits } from "./limits.js";
import { parseInputText } from "./state.js";
import { el, formatValue } from "./values.js";
import { lengthFields, readLengthFields } from "./lengths.js";

const COLORS = ["#0072B2", "#D55E00"];

// Defaults that reach >= 99% held-out per sequence on Reverse (lengths up to 16) fast on a small CPU
// (bench/train_click.py measures them): stop at the target, or give up after the time budget.
export const TRAIN_DEFAULTS = { max_len: 16, d_model: 32, batch_size: 32, steps: 3000, time_budget: 45, stop_at: 99,
  lr: 0.005 };
// the form's number fields and the POST /train fields whose bounds (GET /limits) they take
const TRAIN_FIELDS = { "train-min-len": "min_len", "train-max-len": "max_len", "train-layers": "layers",
  "train-heads": "heads", "train-d-model": "d_model", "train-steps": "steps", "train-time": "time_budget",
  "train-lr": "lr" };
let runs = [];          // {label, layers, job, events: [], result, source}
let overlayMode = "trained";

function field(label, input, hint = "") {
  return el("label", { class: "field" }, el("span", {}, label), input, hint ? el("small", {}, hint) : "");
}

function input(attrs) {
  const node = el("input", attrs);
  if (attrs.value !== undefined) node.value = attrs.value;
  return node;
}

export function renderTrainForm(container, state) {
  const doc = state.doc;
  const sops = doc ? Object.entries(doc.results).filter(([, r]) => r.kind === "sop").map(([n]) => n) : [];
  const preferred = doc ? doc.output : null;  // the program's default output (its `# output:` header)
  const output = el("select", { id: "train-output", "aria-label": "output s-op to learn" },
    ...sops.map((n) => el("option", { value: n }, n)));
  output.value = sops.includes(preferred) ? preferred : sops[sops.length - 1] || "";
  const layersOf = () => (doc && doc.results[output.value] ? doc.results[output.value].layer : 1);
  const heads = doc ? Math.max(1, ...doc.analysis.heads_per_layer) : 1;
  const layers = input({ id: "train-layers", type: "number", placeholder: `${layersOf()} (analysis)` });
  output.addEventListener("change", () => { layers.placeholder = `${layersOf()} (analysis)`; });
  const form = el("form", { id: "train-form", class: "train-form", onsubmit: (e) => e.preventDefault() },
    field("output", output),
    field("mode", el("select", { id: "train-mode", "aria-label": "what to train" },
      el("option", { value: "standard" }, "a transformer"),
      el("option", { value: "program" }, "a program (read back as RASP)")),
    "program: its emitted program opens in the Learned tab"),
    field("vocab", input({ id: "train-vocab", type: "text", value: vocabOf(state.inputs), spellcheck: "false" }),
      "characters, or a JSON list"),
    field("lengths", el("span", { class: "pair" },
      input({ id: "train-min-len", type: "number", value: "1", "aria-label": "shortest input" }),
      "–",
      input({ id: "train-max-len", type: "number", value: String(TRAIN_DEFAULTS.max_len),
        "aria-label": "longest input" }))),
    ...lengthFields(field, input),
    field("layers", layers),
    field("heads", input({ id: "train-heads", type: "number", placeholder: `${heads} (analysis)` })),
    field("width", input({ id: "train-d-model", type: "number", value: String(TRAIN_DEFAULTS.d_model) }), "d_model"),
    field("steps", input({ id: "train-steps", type: "number", value: String(TRAIN_DEFAULTS.steps) }),
      "at most"),
    field("time", input({ id: "train-time", type: "number", min: "1", value: String(TRAIN_DEFAULTS.time_budget) }),
      "seconds, at most"),
    field("stop at", input({ id: "train-stop-at", type: "number", min: "1", max: "100", step: "0.5", value: String(TRAIN_DEFAULTS.stop_at) }),
      "% held-out per sequence"),
    field("learning rate", input({ id: "train-lr", type: "number", min: "0", step: "any",
      placeholder: String(TRAIN_DEFAULTS.lr) }), "empty: 0.005 (1e-5 fine-tuning)"),
    field("supervise", el("span", {}, input({ id: "train-supervise", type: "checkbox" })),
      "pull heads towards their selectors"),
  );
  followEdits(form);   // the fields follow the program and its inputs unless edited for this program
  container.replaceChildren(form);
  if (limitsNow()) boundTrainInputs(limitsNow(), TRAIN_FIELDS);
  else serverLimits().then((limits) => boundTrainInputs(limits, TRAIN_FIELDS)).catch(() => {});
}

function readForm() {
  const v = (id) => document.getElementById(id).value.trim();
  const num = (id) => (v(id) === "" ? undefined : Number(v(id)));
  return {
    output: v("train-output") || undefined, vocab: vocabValue(v("train-vocab")), min_len: num("train-min-len"), max_len: num("train-max-len"),
    layers: num("train-layers"), heads: num("train-heads"), d_model: num("train-d-model"),
    steps: num("train-steps"), time_budget: num("train-time"),
    stop_at: num("train-stop-at") === undefined ? undefined : Math.min(1, num("train-stop-at") / 100),
    lr: num("train-lr") ?? (initModel ? undefined : TRAIN_DEFAULTS.lr), batch_size: TRAIN_DEFAULTS.batch_size,
    supervise: document.getElementById("train-supervise").checked,
    mode: v("train-mode") === "program" ? "program" : undefined,   // sent only when asked: older servers lack it
    ...readLengthFields(num),
  };
}

function drop(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, x]) => x !== undefined && !Number.isNaN(x)));
}

// ------------------------------------------------------------------ jobs

function follow(run, onUpdate) {
  const source = new EventSource(`/api/v1/train/${run.job.id}/events`);
  run.source = source;
  source.addEventListener("progress", (e) => { run.events.push(JSON.parse(e.data)); onUpdate(); });
  source.addEventListener("done", async (e) => {
    source.close();
    const done = JSON.parse(e.data);
    run.ended = performance.now();
    run.job = await api.trainJob(run.job.id);
    run.result = run.job.result;
    run.status = done.status;
    const emitted = run.result && run.result.learned_program;
    if (emitted && emitted.source) {   // program mode: the page's Learned tab takes the emitted program (learned.js);
      // an event, not an import, so that this module stays free of page-only modules (the notebook widget uses it)
      document.dispatchEvent(new CustomEvent("rasplay:learned", {
        detail: { source: emitted.source, origin: `the ${run.label} training (program mode)` } }));
    }
    onUpdate(true);
  });
  source.onerror = () => { /* EventSource reconnects by itself; `done` closes it */ };
}

let initModel = null;   // {id, vocab, max_len} of a compiled model to fine-tune from

export function setInitModel(init) {
  initModel = init;
  const note = document.getElementById("train-init");
  if (!note) return;
  note.hidden = !init;
  if (init) {
    note.textContent = `Starting from the compiled model ${init.id} (exact on every input up to length ${init.max_len}; ` +
      "fine-tuning uses a learning rate of 1e-5 unless you set one in the learning rate field). ";
    note.append(el("button", { type: "button", class: "small", onclick: () => setInitModel(null) }, "train from scratch"));
    const vocab = document.getElementById("train-vocab");
    if (vocab) vocab.value = init.vocab.every((t) => typeof t === "string" && t.length === 1) ? init.vocab.join("") : JSON.stringify(init.vocab);
    const maxLen = document.getElementById("train-max-len");
    if (maxLen) maxLen.value = String(init.max_len);
    markEdited(vocab);    // the compiled model's vocab and lengths, kept while this program is shown
    markEdited(maxLen);
  }
}

export function preferImported(on) { if (imported) imported.newer = on; }

let ticker = null;

export async function startRuns(state, { ablate }, onUpdate) {
  preferImported(false);
  const options = drop({ ...readForm(), example: parseInputText(state.inputs[state.current]).value,
    init_model: initModel ? initModel.id : undefined });
  if (options.mode === "program") {   // its own constrained model: no attention example, its own learning rate
    delete options.example;
    if (document.getElementById("train-lr").value.trim() === "") delete options.lr;
  }
  for (const run of runs) if (run.source) run.source.close();
  runs = [];
  const clicked = performance.now();
  const first = await api.train({ source: state.source, ...options });
  runs.push({ label: "predicted", job: first, events: [], result: null, status: first.status, clicked });
  if (ablate) {
    const predicted = options.layers ?? (state.doc.results[options.output] || {}).layer ?? 1;
    if (predicted < 1) throw new Error("the program needs no layer: there is nothing to take away");
    const second = await api.train({ source: state.source, ...options, layers: predicted - 1 });
    runs.push({ label: `${predicted - 1} layer${predicted - 1 === 1 ? "" : "s"}`, job: second, events: [], result: null,
      status: second.status, clicked });
    runs[0].label = `${predicted} layer${predicted === 1 ? "" : "s"} (predicted)`;
  }
  runs.forEach((run) => follow(run, onUpdate));
  onUpdate();
  // the status says what each job is doing, and for how long, even while no event arrives
  clearInterval(ticker);
  ticker = setInterval(() => {
    if (runs.every((r) => r.ended)) clearInterval(ticker);
    else onUpdate();
  }, 1000);
}

export async function cancelRuns() {
  await Promise.all(runs.filter((r) => !r.result).map((r) => api.cancelTrain(r.job.id).catch(() => null)));
}

export const currentRuns = () => runs;

// Whether this server can train (GET /health: PyTorch installed), said on the tab before any click.
export async function checkTrainingAvailable() {
  const health = await api.health();
  const available = health.training.available !== false;
  const note = document.getElementById("train-unavailable");
  note.hidden = available;
  note.textContent = available ? "" : "This server cannot train: PyTorch is not installed on it. Whoever runs the " +
    "server can add it with pip install 'rasplay[train]' (the train extra) and restart rasplay serve.";
  for (const id of ["train-start", "train-ablate"]) document.getElementById(id).disabled = !available;
  document.body.dataset.training = available ? "available" : "unavailable";
  return available;
}

// ------------------------------------------------------------------ views

export async function renderCurves(plot, statusBox) {
  if (!runs.length) { statusBox.textContent = "No training yet."; plot.hidden = true; return; }
  const Plotly = await loadPlotly();
  plot.hidden = false;
  const traces = [];
  runs.forEach((run, i) => {
    const points = run.events.filter((e) => e.point === "eval");
    const steps = points.map((p) => p.step);
    traces.push({ x: steps, y: points.map((p) => p.test_seq_acc), name: `${run.label}: per sequence`, mode: "lines",
      line: { color: COLORS[i], width: 2.5 } });
    traces.push({ x: steps, y: points.map((p) => p.test_acc), name: `${run.label}: per position`, mode: "lines",
      line: { color: COLORS[i], dash: "dot" } });
    traces.push({ x: steps, y: points.map((p) => p.loss), name: `${run.label}: loss`, mode: "lines", yaxis: "y2",
      line: { color: COLORS[i], width: 1 }, opacity: 0.5 });
  });
  await Plotly.react(plot, traces, {
    height: 300, margin: { l: 50, r: 50, t: 10, b: 40 }, legend: { orientation: "h", y: -0.25, font: { size: 11 } },
    // few ticks, accuracy in percent: readable axes
    xaxis: { title: { text: "step" }, nticks: 6, tickformat: "d" }, yaxis: { title: { text: "held-out accuracy" },
      range: [0, 1.02], ...TICKS.percent },
    yaxis2: { title: { text: "loss" }, overlaying: "y", side: "right", type: "log", dtick: 1, exponentformat: "power",
      showgrid: false, nticks: 4 },
  }, plotlyConfig({ responsive: true, ...CHART }));
  plot.dataset.drawn = String(Number(plot.dataset.drawn || 0) + 1);
  statusBox.replaceChildren(...runs.map((run, i) => {
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = COLORS[i];
    const line = el("div", { class: "run-line", "data-status": runStatus(run), "data-run": String(i) }, swatch,
      `${run.label} — ${runText(run)}`);
    return line;
  }));
}

const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);

function runStatus(run) {
  const last = run.events[run.events.length - 1];
  if (run.result || ["done", "failed", "cancelled", "timeout"].includes(run.status)) return run.status;
  if (!last) return run.status === "queued" ? "queued" : "starting";
  return last.point === "phase" ? "starting" : "training";
}

// What the job is doing, in words: waiting, starting (and at what), training, or its end.
function runText(run) {
  const status = runStatus(run);
  const since = `${(((run.ended || performance.now()) - run.clicked) / 1000).toFixed(0)} s since the click`;
  const evals = run.events.filter((e) => e.point === "eval");
  const last = run.events[run.events.length - 1];
  if (status === "queued") return `queued: waiting for a free training slot (${since})`;
  if (status === "starting") {
    const what = last ? last.message : run.job.warm ? "starting in a ready process"
      : "starting a training process (loading PyTorch can take several seconds on a busy server)";
    return `starting: ${what}… (${since})`;
  }
  const point = [...run.events].reverse().find((e) => e.point !== "phase");
  const figures = point
    ? `step ${point.step}${point.steps ? `/${point.steps}` : ""} · ${point.elapsed.toFixed(1)} s of training · ` +
      `loss ${point.loss === null ? "–" : point.loss.toFixed(3)} · held-out ${pct(point.test_acc)} per position, ` +
      `${pct(point.test_seq_acc)} per sequence`
    : "no step yet";
  const best = evals.length ? Math.max(...evals.map((e) => e.test_seq_acc)) : null;
  const end = (run.result && run.result.stopped === "target" ? " · reached the target"
    : run.result && run.result.stopped === "time" ? " · time budget used up" : "") +
    (run.result && run.result.last && run.result.last.step !== run.result.final.step
      ? ` · kept the best checkpoint (step ${run.result.final.step}, ${pct(run.result.final.test_seq_acc)} per sequence)` : "");
  const top = best !== null ? ` · best ${pct(best)} per sequence` : "";
  return `${status}: ${figures}${top}${end} (${since})` +
    (run.job.error ? ` — ${run.job.error}` : "");
}

let imported = null;   // an overlay document of attention maps from another tool

export async function importMaps(state, file) {
  let maps;
  try {
    maps = JSON.parse(await file.text());
  } catch (e) {
    throw new Error(`${file.name} is not JSON: ${e.message}`);
  }
  imported = { name: file.name, doc: await api.overlay({ source: state.source, maps }) };
  return imported;
}

export function renderOverlay(container, compiledAttention) {
  container.replaceChildren();
  const run = runs[0] && runs[0].result ? runs[0] : runs.find((r) => r.result);
  let ex;
  if (imported && (!run || imported.newer)) {
    ex = imported.doc;
    container.append(el("p", { class: "note" }, `Imported from ${imported.name}: ${ex.layers} layers × ${ex.heads} heads ` +
      `on ${JSON.stringify(ex.tokens)}; the program's ${ex.output} needs ${ex.program_layers} layers.`));
  } else if (run && !run.result.example) {   // program mode: no attention maps; its heads are the emitted selectors
    container.append(el("p", { class: "note", id: "train-kept" }, `${run.label}: a program-mode training. Its heads ` +
      "are the emitted program's selectors: the program is in the Learned tab, where it is checked on every input."));
    return;
  } else if (run) {
    ex = run.result.example;
    const m = run.result.final, last = run.result.last;
    const kept = last && last.step !== m.step
      ? ` (the best checkpoint, step ${m.step}, is the model shown; the last step, ${last.step}, had ${(100 * last.test_seq_acc).toFixed(1)}%)` : "";
    container.append(el("p", { class: "note", id: "train-kept" },
      `${run.label}: held-out accuracy ${(100 * m.test_acc).toFixed(1)}% per position, ${(100 * m.test_seq_acc).toFixed(1)}% per sequence${kept}. ` +
      `On ${JSON.stringify(ex.input)}: model → ${ex.prediction.map(formatValue).join(" ")}; program → ${ex.target.map(formatValue).join(" ")}.`));
  } else {
    return;
  }
  const modes = el("div", { class: "toggle", role: "radiogroup", "aria-label": "overlay" },
    ...["selector", "compiled", "trained"].map((mode) => {
      const b = el("button", { type: "button", role: "radio", "aria-checked": String(mode === overlayMode), "data-mode": mode,
        onclick: () => { overlayMode = mode; renderOverlay(container, compiledAttention); } }, mode);
      if (mode === "compiled" && !compiledAttention) {
        b.disabled = true;
        b.title = "compile the program in the Compile tab to compare";
      }
      return b;
    }));
  container.append(modes);
  for (const sel of ex.selectors) {
    const match = ex.matches.find((x) => x.selector === sel.selector) || {};
    const head = match.head ?? 0;
    const layer = sel.layer;
    const att = ex.attention[layer - 1] ? ex.attention[layer - 1][head] : null;
    const score = match.score === null || match.score === undefined ? "–" : match.score.toFixed(3);
    const card = el("div", { class: "overlay-card", "data-selector": String(sel.selector) });
    card.append(el("h3", {}, `${sel.name} — layer ${layer}, ${ex === (imported && imported.doc) ? "imported" : "trained"} head ${head}: match ${score}`));
    const plot = el("div", { class: "overlay-plot" });
    card.append(plot);
    container.append(card);
    let fill = null;
    if (overlayMode === "trained") fill = att;
    else if (overlayMode === "compiled" && compiledAttention) fill = compiledAttention(sel.selector, ex.tokens);
    const offset = ex.offset || 0;   // a BOS position first: named BOS, the tokens numbered from 0 as in the Program view
    const pos = (i) => (i < offset ? "BOS" : `${i - offset} (${formatValue(ex.tokens[i])})`);
    const hover = sel.matrix.map((row, q) => row.map((v, k) => hoverLines([
      `query ${pos(q)} ← key ${pos(k)}`,
      `selector: ${v ? "selected" : "not selected"}`, ...(fill ? [`${overlayMode} attention ${fill[q][k].toFixed(3)}`] : [])])));
    card.append(selectionDetails(ex.tokens, sel.matrix, { fill, offset, fillTitle: `${overlayMode} attention` }));
    loadPlotly().then(() => drawHeatmap(plot, { matrix: sel.matrix, fill, tokens: ex.tokens, hover, offset,
      fillTitle: `${overlayMode} attention` }))
      .then(() => { plot.dataset.drawn = "1"; });
  }
}
