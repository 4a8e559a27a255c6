// rasplay's browser app: wires the editor, inputs, values, diagram, heatmap, gallery, sharing,
// embed and presenter modes around one state object and the REST API. No RASP logic lives here.

import * as api from "./api.js";
import { renderDiagram } from "./diagram.js";
import { ATTENTION_KINDS, defaultSelection, graphIndex, resolve, selectorOf } from "./docmodel.js";
import { createEditor, firstCodeLine } from "./editor.js";
import { exportDiagram, exportHeatmap } from "./export.js";
import { openGallery } from "./gallery.js";
import { heatmapView, showSelector } from "./heatmap.js";
import { renderHeadGrid } from "./headgrid.js";
import { applyProvenance, initProvenance } from "./provenance.js";
import { copyText, embedLink, shareLink, shortLink } from "./share.js";
import { applyShared, cancelAddressWrite, linkFor, loadDraft, LinkError, lockAddress, parseInputText, pushState, readHash,
  saveHashSoon, settleAddress, shareable, state } from "./state.js";
import { agreementAt, compileInitSpec, compileProgram, compiled, compiledAttentionFor, coverageProblem, forgetCompiled,
  renderAttention, renderCompileForm, renderResidual, renderStudy, renderSummary, runCompiled, studySoft } from "./compile.js";
import { forgetEdits } from "./forms.js";
import { cancelRuns, checkTrainingAvailable, importMaps, preferImported, renderCurves, renderOverlay, renderTrainForm,
  setInitModel, startRuns } from "./train.js";
import { el, renderValues } from "./values.js";
import { showDialect } from "./dialect.js";
import { initLengthFree } from "./lengthfree.js";
import { afterRun, decorateValues, enterExercise, exerciseIdFromHash, exerciseLink, initExercises,
  leaveExercise } from "./exercises.js";

const $ = (id) => document.getElementById(id);
const embedMode = location.pathname.replace(/\/+$/, "") === "/embed";
// `/embed?solve=1#x=ID`: an exercise embed a student solves in place (editable, with Check)
const solveMode = embedMode && new URLSearchParams(location.search).has("solve");
let editor = null;
let runSeq = 0;
let runTimer = null;
let presentLayer = null;
let compileRequested = false;   // a link asked for the compiled view: compile once the program has run
const timings = [];

// ------------------------------------------------------------------ status and messages

function setStatus(text) { $("status").textContent = text; }

let toastTimer = null;
// action: {label, run} adds a button (e.g. "Undo") that runs it and closes the toast.
function toast(message, link = null, action = null) {
  const box = $("toast");
  box.replaceChildren(document.createTextNode(message));
  if (link) box.append(" ", el("a", { href: link, target: "_blank", rel: "noopener" }, link));
  if (action) {
    box.append(" ", el("button", { type: "button", class: "small", "data-action": action.label.toLowerCase(),
      onclick: () => { box.hidden = true; action.run(); } }, action.label));
  }
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, link || action ? 10000 : 5000);
}
// a click anywhere else puts the message away (it never stays over what the user turns to)
document.addEventListener("pointerdown", (e) => { if (!$("toast").contains(e.target)) $("toast").hidden = true; }, true);

// A message on the page itself (a link that could not be opened): stays until closed.
function notice(message) {
  $("notice-text").textContent = message;
  $("notice").hidden = false;
}

// ------------------------------------------------------------------ running

function scheduleRun(delay = 300) {
  lockAddress(false);   // the user changed something: the address bar follows again
  clearTimeout(runTimer);
  runTimer = setTimeout(runNow, delay);
}

// A document that cannot replace what is on screen: the program does not parse (or defines nothing
// that runs). The last good results stay, marked stale, until the program parses again.
// A half-typed statement stops the parse of itself (and maybe more) while nothing new appears: the last
// good results stay. An error
// that leaves new names running (the rest of a program around a bad line) shows the new results.
function brokenDocument(doc) {
  const errors = doc.diagnostics.filter((d) => d.severity === "error");
  if (!errors.length) return false;
  const names = Object.keys(doc.results);
  if (!names.length) return true;
  const before = state.doc ? new Set(Object.keys(state.doc.results)) : new Set();
  return errors.some((d) => d.kind === "syntax") && names.every((n) => before.has(n));
}

function setStale(diagnostics) {
  const stale = diagnostics !== null;
  document.body.classList.toggle("stale", stale);
  const banner = $("stale-banner");
  banner.hidden = !stale;
  if (stale) {
    const first = diagnostics.find((d) => d.severity === "error") || diagnostics[0];
    const where = first && first.line ? ` (line ${first.line}: ${first.message})` : first ? ` (${first.message})` : "";
    banner.textContent = `Stale: showing the last results that ran; the program does not run now${where}.`;
  }
}

// Nothing valid to show for these inputs (an input over a limit, a server error): clear the views.
function clearViews(message) {
  state.doc = null;
  setStale(null);
  $("values").replaceChildren(el("p", { class: "empty error" }, message));
  $("diagram").replaceChildren();
  $("diagram-totals").textContent = "";
  $("selector-chips").replaceChildren();
  $("heatmap-plot").hidden = true;
  $("heatmap-below").replaceChildren();
  $("heatmap-note").textContent = message;
  $("heatmap-title").textContent = "Selector";
}

async function runNow() {
  clearTimeout(runTimer);
  const seq = ++runSeq;
  const started = performance.now();
  state.source = editor ? editor.getValue() : state.source;
  const inputs = state.inputs.map((t) => parseInputText(t).value);
  state.current = Math.min(state.current, inputs.length - 1);
  setStatus("running…");
  try {
    const doc = await api.evaluate(state.source, inputs, state.current);
    if (seq !== runSeq) return;
    const ms = performance.now() - started;
    timings.push(ms);
    const errors = doc.diagnostics.filter((d) => d.severity === "error").length;
    if (brokenDocument(doc) && state.doc) {
      editor.setDiagnostics(doc.diagnostics);
      showProblems(doc.diagnostics);
      setStale(doc.diagnostics);
      renderInputs();
      afterRun();
      setStatus(`${errors} problem${errors === 1 ? "" : "s"} · showing the last results (stale)`);
    } else {
      state.doc = doc;
      setStale(null);
      await renderAll();
      afterRun();
      setStatus(`${doc.analysis.layers} layer${doc.analysis.layers === 1 ? "" : "s"} · ` +
        `${errors ? `${errors} problem${errors === 1 ? "" : "s"} · ` : ""}${ms.toFixed(0)} ms`);
      if (!embedMode) showDialect(state.source);
    }
  } catch (e) {
    if (seq !== runSeq) return;
    setStatus(e.message);
    showProblems([{ severity: "error", message: e.message }]);
    clearViews(e.message);
    renderInputs();
  } finally {
    if (seq === runSeq) document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  }
  if (!embedMode) saveHashSoon();
  if (compileRequested && state.doc && seq === runSeq) {
    // a link asked for the compiled view: compiling costs the server seconds, so ask first (whoever
    // made the link chose it, not the visitor)
    compileRequested = false;
    toast("This link shows the program compiled to a transformer.", null, { label: "Compile", run: compileNow });
  }
}

// ------------------------------------------------------------------ rendering

function showProblems(diagnostics) {
  const list = $("problems");
  list.replaceChildren(...diagnostics.map((d) => {
    const where = d.line ? `${d.line}:${d.col} ` : "";
    const li = el("li", { class: d.severity, tabindex: "0" }, `${where}${d.severity}: ${d.message}`);
    if (d.line) {
      const go = () => editor.goTo(d.line, d.col);
      li.addEventListener("click", go);
      li.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
    }
    return li;
  }));
}

function opensHeatmap(name) {
  const id = resolve(state.doc, name);
  if (id === null) return false;
  const node = graphIndex(state.doc).nodes.get(id);
  return Boolean(node && (ATTENTION_KINDS.has(node.kind) || node.kind.startsWith("select")));
}

function currentSelector() {
  const doc = state.doc;
  let id = resolve(doc, state.selection);
  if (id === null || selectorOf(doc, id) === null) {
    state.selection = defaultSelection(doc);
    id = resolve(doc, state.selection);
  }
  return id === null ? null : selectorOf(doc, id);
}

// The room the fitted heatmap may take: the panel's width, and the height left in its column.
function heatmapBox() {
  const scroller = $("heatmap-scroll");
  const width = scroller.clientWidth || 500;
  const presenting = document.body.classList.contains("presenting");
  const height = presenting ? scroller.clientHeight : Math.max(260, Math.min(width, window.innerHeight * 0.7));
  // presenter mode: labels readable from the back of a room (24 px at 1920 wide, scaled below)
  const font = presenting ? Math.round(Math.max(16, Math.min(24, window.innerWidth / 80))) : null;
  return { width, height: Math.max(height, 160), tight: presenting, font };
}

function setZoom(on) {
  heatmapView.zoom = on;
  $("heatmap-fit").setAttribute("aria-checked", String(!on));
  $("heatmap-zoom").setAttribute("aria-checked", String(on));
  if (state.doc) renderHeatmap();
}

function renderHeatmap() {
  const id = resolve(state.doc, state.selection);
  return showSelector(state.doc, id === null ? -1 : id, {
    plot: $("heatmap-plot"), title: $("heatmap-title"), note: $("heatmap-note"), below: $("heatmap-below"),
    scroller: $("heatmap-scroll"), readout: $("heatmap-cell"), box: heatmapBox, onZoom: () => setZoom(true),
    list: $("heatmap-list"),
  });
}

// Every named selector and every head, as buttons above the heatmap.
function renderChips(selectorId) {
  const doc = state.doc;
  const { nodes } = graphIndex(doc);
  const seen = new Set();
  const chips = [];
  const add = (id, label) => {
    if (seen.has(id)) return;
    seen.add(id);
    const node = nodes.get(id);
    const where = node.head !== null && node.head !== undefined ? `L${node.layer} h${node.head}` : `L${node.layer}`;
    const button = el("button", { type: "button", "aria-pressed": String(id === selectorId), "data-selector": String(id),
      onclick: () => select(node.names[0] || `#${id}`, id) }, label, el("span", { class: "where" }, where));
    chips.push(button);
  };
  for (const [name, r] of Object.entries(doc.results)) if (r.kind === "selector") add(resolve(doc, name), name);
  for (const head of doc.analysis.heads.flat()) add(head.selector, head.display || head.name);
  $("selector-chips").replaceChildren(...chips);
}

function renderAll() {
  const doc = state.doc;
  if (!doc) return;
  editor.setDiagnostics(doc.diagnostics);
  showProblems(doc.diagnostics);
  renderInputs();
  const selectorId = currentSelector();
  renderValues($("values"), doc, state.current, {
    onSelect: select, opensHeatmap, selection: state.selection, presentLayer,
  });
  decorateValues($("values"));
  const laidOut = renderDiagram($("diagram"), $("diagram-totals"), doc, {
    onSelectHead: (selId) => select(`#${selId}`, selId), selectedSelector: selectorId, presentLayer,
  });
  renderChips(selectorId);
  renderHeatmap();
  renderHeadGrid(doc, { openSelector: (selId) => select(`#${selId}`, selId), selectedSelector: selectorId });
  applyProvenance();
  renderTrainForm($("train-form-box"), state);      // the forms follow the program and its inputs (forms.js)
  renderCompileForm($("compile-form-box"), state);
  if (compiled.id && !compileRequested) refreshCompiled();   // the compiled heads on the input shown now
  // the diagram's layout (elkjs) arrives after the render: label it for assistive technology then
  return Promise.resolve(laidOut).then(() => labelDiagram($("diagram")));
}

// The diagram for assistive technology: a group (its head boxes are buttons, so not one image); a head
// box is named by the text it shows first (so speech input can say what it sees), then by what the
// diagram says of it (layer, head, full expression).
function labelDiagram(box) {
  const svg = box.querySelector("svg");
  if (svg) svg.setAttribute("role", "group");
  for (const g of box.querySelectorAll(".head-box")) {
    if (g.dataset.labelled) continue;
    // a trailing space ends each line (SVG does not draw it), so the lines read as words, not run together
    const texts = [...g.querySelectorAll("text")];
    texts.forEach((t) => { t.textContent = `${t.textContent.trimEnd()} `; });
    const shown = texts.map((t) => t.textContent).join("").trim();
    const said = g.getAttribute("aria-label");
    g.setAttribute("aria-label", said ? `${shown} (${said})` : `${shown}, layer ${g.dataset.layer}`);
    g.dataset.labelled = "1";
  }
}

function select(selection, selectorId = null) {
  state.selection = selection;
  const doc = state.doc;
  if (selectorId === null) {
    const id = resolve(doc, selection);
    selectorId = id === null ? null : selectorOf(doc, id);
  }
  // prefer the selector's own name when it has one
  if (selectorId !== null) {
    const node = graphIndex(doc).nodes.get(selectorId);
    if (selection.startsWith("#") && node.names.length) state.selection = node.names[0];
  }
  lockAddress(false);
  renderAll();
  heatmapIntoView();
  if (!embedMode) saveHashSoon();
}

// A click changed the heatmap: bring it into view when its top is off screen or too low to see
// (a 3-4 layer diagram pushes it below the fold at 1366x768, the exercise panel further).
function heatmapIntoView() {
  const panel = $("heatmap-title").closest(".panel");
  if (!panel || document.body.classList.contains("presenting")) return;
  const r = panel.getBoundingClientRect(), plot = $("heatmap-plot").getBoundingClientRect();
  if (r.top < 0 || plot.top + Math.min(plot.height, 240) > window.innerHeight) panel.scrollIntoView({ block: "start" });
}

// ------------------------------------------------------------------ inputs

function renderInputs() {
  const box = $("inputs");
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.index : null;
  box.replaceChildren(...state.inputs.map((text, i) => {
    const parsed = parseInputText(text);
    const row = el("div", { class: `input-row${i === state.current ? " current" : ""}` });
    const radio = el("input", { type: "radio", name: "current-input", "aria-label": `show input ${i + 1}` });
    radio.checked = i === state.current;
    radio.addEventListener("change", () => { state.current = i; lockAddress(false); runNow(); });
    const field = el("input", { type: "text", value: text, "data-index": String(i), spellcheck: "false",
      "aria-label": `input ${i + 1}`, autocomplete: "off" });
    field.value = text;
    field.addEventListener("input", () => { state.inputs[i] = field.value; state.current = i; scheduleRun(); });
    field.addEventListener("keydown", (e) => { if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); runNow(); } });
    row.append(radio, field);
    if (state.inputs.length > 1 && !embedMode) {   // the embed is read-only: its inputs stay
      row.append(el("button", { type: "button", class: "small", "aria-label": `remove input ${i + 1}`, onclick: () => {
        state.inputs.splice(i, 1);
        state.current = Math.min(state.current, state.inputs.length - 1);
        lockAddress(false);
        runNow();
      } }, "✕"));
    }
    if (parsed.error) row.append(el("span", { class: "input-error" }, parsed.error));
    return row;
  }));
  if (focused !== null && focused !== undefined) {
    const field = box.querySelector(`input[data-index="${focused}"]`);
    if (field) { field.focus(); field.setSelectionRange(field.value.length, field.value.length); }
  }
}

// ------------------------------------------------------------------ views (tabs)

function showView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll("[role='tab']")) {
    const on = tab.dataset.view === view;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`view-${tab.dataset.view}`).hidden = !on;
  }
  if (view === "train") renderTrainForm($("train-form-box"), state);
  if (view === "compile") renderCompileForm($("compile-form-box"), state);
  if (!embedMode) saveHashSoon();
}

async function renderTraining(finished = false) {
  await renderCurves($("train-curves"), $("train-status"));
  if (finished) renderOverlay($("train-overlay"), compiledAttentionFor(state.doc));
}

// ------------------------------------------------------------------ the Compile view

function currentBeta() {
  return $("compile-hard").checked ? null : 10 ** Number($("compile-beta").value);
}

async function refreshCompiled() {
  const beta = currentBeta();
  $("compile-beta-value").textContent = beta ? formatBeta(beta) : "∞";
  const problem = coverageProblem(state);   // a model compiled for another vocab or length says so
  $("compile-coverage").hidden = !problem;
  $("compile-coverage").textContent = problem || "";
  try {
    await runCompiled(state, beta);
  } catch (e) {
    $("compile-attention").replaceChildren(el("p", { class: "note" }, e.message));
    return;
  }
  renderAttention($("compile-attention"), state.doc);
  renderResidual($("compile-residual"));
  const point = agreementAt(beta);
  if (point) {
    $("compile-agreement").textContent += ` On all inputs up to max_len at this β: ${(100 * point.agreement).toFixed(1)}% fully right.`;
  }
  if ($("compile-study-plot").dataset.drawn) renderStudy($("compile-study-plot"), $("compile-study-note"), beta);
}

function formatBeta(beta) {
  return beta >= 100 ? beta.toFixed(0) : beta >= 10 ? beta.toFixed(1) : beta.toFixed(2);
}

function resetCompiled() {
  forgetCompiled();
  renderSummary($("compile-summary"), $("compile-layout"));
  $("compile-attention").replaceChildren();
  $("compile-residual").replaceChildren();
  $("compile-coverage").hidden = true;
  $("compile-study").disabled = true;
  $("compile-finetune").disabled = true;
}

async function compileNow() {
  $("compile-start").disabled = true;
  setStatus("compiling…");
  renderCompileForm($("compile-form-box"), state);
  try {
    const model = await compileProgram(state);
    state.compiled = true;
    if (!embedMode) saveHashSoon();
    renderSummary($("compile-summary"), $("compile-layout"));
    $("compile-study").disabled = false;
    $("compile-finetune").disabled = false;
    $("compile-beta").disabled = $("compile-hard").checked;
    setStatus(`compiled: ${model.summary.layers} layers, residual width ${model.summary.residual_width}`);
    await refreshCompiled();
  } catch (e) {
    setStatus(e.message);
    $("compile-summary").replaceChildren(el("p", { class: "note error" }, e.message));
    if (e.line) {
      const squiggle = { severity: "error", message: `compile: ${e.message}`, line: e.line, col: e.col || 1,
        end_line: e.line, end_col: (e.col || 1) + 1 };
      editor.setDiagnostics([...(state.doc ? state.doc.diagnostics : []), squiggle]);
      editor.goTo(e.line, e.col || 1);
    }
  } finally {
    $("compile-start").disabled = false;
  }
}

async function startTraining(ablate) {
  try {
    await startRuns(state, { ablate }, (finished) => renderTraining(finished));
  } catch (e) {
    toast(e.message);
  }
}

// ------------------------------------------------------------------ export names

// The program's `# title:` header, else its first name, for file names and figure titles.
function programTitle() {
  const m = state.source.match(/^#\s*title:\s*(.+?)\s*$/m);
  if (m) return m[1];
  const names = state.doc ? Object.keys(state.doc.results) : [];
  return names.length ? names[names.length - 1] : "program";
}

function selectorName() {
  const id = resolve(state.doc, state.selection);
  const sel = id === null ? null : selectorOf(state.doc, id);
  return sel === null ? state.selection || "selector" : graphIndex(state.doc).nodes.get(sel).name;
}

function exportName() {
  return `rasplay-${programTitle()}-${selectorName()}`.replace(/[^\w-]+/g, "_").replace(/_+/g, "_").slice(0, 120);
}

function exportTitle() {
  const tokens = state.doc ? state.doc.inputs[state.current] || [] : [];
  const shown = tokens.map((t) => (typeof t === "string" ? t : JSON.stringify(t))).join(tokens.every((t) => typeof t === "string" && t.length === 1) ? "" : " ");
  return `${programTitle()} — selector ${selectorName()} on “${shown.length > 60 ? `${shown.slice(0, 59)}…` : shown}”`;
}

// ------------------------------------------------------------------ presenter mode

function setPresenting(on) {
  document.body.classList.toggle("presenting", on);
  $("present-btn").setAttribute("aria-pressed", String(on));
  $("present-bar").hidden = !on;
  presentLayer = on ? 1 : null;
  if (on) {
    showView("program");
    editor.showLine(Math.max(1, firstCodeLine(state.source) - 1));   // the code, not only the header
    stepLayer(0);
  } else {
    editor.markLines([]);
    renderAll();
  }
}

function stepLayer(delta) {
  const layers = state.doc ? state.doc.analysis.layers : 0;
  if (!layers) return;
  presentLayer = Math.min(Math.max((presentLayer || 1) + delta, 1), layers);
  $("layer-label").textContent = `Layer ${presentLayer} of ${layers}`;
  const head = state.doc.analysis.heads[presentLayer - 1][0];
  if (head) state.selection = graphIndex(state.doc).nodes.get(head.selector).names[0] || `#${head.selector}`;
  renderAll();
  // the stepped layer's values row and the heatmap in view
  const row = $("values").querySelector("tr.hot");
  if (row) row.scrollIntoView({ block: "nearest" });
  $("heatmap-title").scrollIntoView({ block: "nearest" });
  editor.markLines(layerLines(presentLayer));   // and the layer's definitions, marked, in the editor
}

// The program's lines that define the operations of a layer (from the analysis' source spans).
function layerLines(layer) {
  const lines = [];
  for (const node of state.doc.analysis.graph.nodes) {
    if (node.layer !== layer || node.source !== "<program>" || !node.span) continue;
    for (let l = node.span.line; l <= (node.span.end_line || node.span.line); l++) lines.push(l);
  }
  return lines;
}

// ------------------------------------------------------------------ loading programs

// Put a state (from a link, the draft, an undo or Back) on screen.
async function openState(obj) {
  forgetEdits();
  applyShared(obj);
  editor.setValue(state.source);
  compileRequested = state.compiled;
  resetCompiled();
  await runNow();
  showView(state.view);
}

// An example replaces the program in a new history entry (Back returns), with an undo.
async function loadExample(ex) {
  await settleAddress();   // Back returns to exactly this program, even if it was typed a moment ago
  const before = snapshot();
  forgetEdits();
  if (state.exercise) leaveExercise(false);
  state.source = ex.source;
  state.inputs = [ex.input];
  state.current = 0;
  state.selection = ex.output || null;
  state.compiled = false;
  resetCompiled();
  editor.setValue(ex.source);
  await runNow();
  await pushState();
  toast(`Loaded the example “${ex.title}”; your program is one step back (Back, or Undo).`, null,
    { label: "Undo", run: async () => { await restore(before); await pushState(); } });
}

// What is on screen, to put back with Undo: a free program, or an exercise (with its own draft).
function snapshot() {
  return { exercise: state.exercise ? state.exercise.id : null, shared: shareable() };
}

async function restore(snap) {
  if (snap.exercise) { forgetEdits(); await enterExercise(snap.exercise); return; }
  if (state.exercise) leaveExercise(false);
  await openState(snap.shared);
}

// An exercise opens like an example: in a new history entry (Back returns), with an Undo; the free
// editor's draft is kept (exercises keep drafts of their own, exercises.js).
async function openExercise(id) {
  await settleAddress();
  const before = snapshot();
  forgetEdits();
  state.compiled = false;
  resetCompiled();
  await enterExercise(id);
  await pushState();
  toast(`Opened the exercise “${state.exercise.title}”; your program is one step back (Back, or Undo).`, null,
    { label: "Undo", run: async () => { await restore(before); await pushState(); } });
}

// Leave an exercise: back to the free editor's draft, in a new history entry (Back returns to the exercise).
async function leaveToDraft() {
  await settleAddress();
  leaveExercise(false);
  const draft = loadDraft();
  if (draft) await openState(draft);
  else await runNow();
  await pushState();
}

async function initialState() {
  let problem = null;
  try {
    const shared = await readHash();
    if (shared) { applyShared(shared); return; }
  } catch (e) {
    problem = e instanceof LinkError ? e.message : `this link could not be opened (${e.message})`;
    lockAddress(true);
  }
  const draft = loadDraft();
  if (draft) {
    applyShared(draft);
    if (problem) notice(`${problem[0].toUpperCase()}${problem.slice(1)}. Showing your last draft instead.`);
    return;
  }
  if (problem) notice(`${problem[0].toUpperCase()}${problem.slice(1)}. Showing an example instead.`);
  const ex = await api.example("reverse");
  state.source = ex.source;
  state.inputs = [ex.input];
  state.selection = ex.output;
}

// Back / Forward, or a hash typed into the address bar (an exercise link opens the exercise).
async function openFromAddress() {
  cancelAddressWrite();
  const exerciseId = exerciseIdFromHash();
  if (exerciseId) {
    if (!state.exercise || state.exercise.id !== exerciseId) {
      forgetEdits();
      enterExercise(exerciseId).catch((e) => toast(e.message));
    }
    return;
  }
  let shared;
  try {
    shared = await readHash();
  } catch (e) {
    notice(`${e.message[0].toUpperCase()}${e.message.slice(1)}. The program on screen is unchanged.`);
    lockAddress(true);
    return;
  }
  if (!shared || JSON.stringify(shared) === JSON.stringify(shareable())) return;
  $("notice").hidden = true;
  if (state.exercise) leaveExercise(false);
  await openState(shared);
}

// ------------------------------------------------------------------ wiring

function wire() {
  $("run-btn").addEventListener("click", runNow);
  for (const tab of document.querySelectorAll("[role='tab']")) {
    tab.addEventListener("click", () => showView(tab.dataset.view));
    tab.addEventListener("keydown", (e) => {
      const tabs = [...document.querySelectorAll("[role='tab']")];
      const i = tabs.indexOf(tab);
      const next = e.key === "ArrowRight" ? tabs[(i + 1) % tabs.length] : e.key === "ArrowLeft" ? tabs[(i + tabs.length - 1) % tabs.length] : null;
      if (next) { e.preventDefault(); next.focus(); showView(next.dataset.view); }
    });
  }
  $("train-start").addEventListener("click", () => startTraining(false));
  $("train-ablate").addEventListener("click", () => startTraining(true));
  $("train-cancel").addEventListener("click", () => cancelRuns());
  $("train-import").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    if (!file) return;
    try {
      await importMaps(state, file);
      preferImported(true);
      renderOverlay($("train-overlay"), compiledAttentionFor(state.doc));
    } catch (err) { toast(err.message); }
    e.target.value = "";
  });
  $("compile-start").addEventListener("click", compileNow);
  initLengthFree(() => state);
  $("compile-hard").addEventListener("change", () => { $("compile-beta").disabled = $("compile-hard").checked; refreshCompiled(); });
  let betaTimer = null;
  $("compile-beta").addEventListener("input", () => {
    $("compile-beta-value").textContent = formatBeta(10 ** Number($("compile-beta").value));
    clearTimeout(betaTimer);
    betaTimer = setTimeout(refreshCompiled, 120);
  });
  $("compile-study").addEventListener("click", async () => {
    $("compile-study").disabled = true;
    $("compile-study-note").textContent = "running the study (every input up to max_len, at many β)…";
    try {
      await studySoft();
      await renderStudy($("compile-study-plot"), $("compile-study-note"), currentBeta());
    } catch (e) { $("compile-study-note").textContent = e.message; }
    $("compile-study").disabled = false;
  });
  $("compile-finetune").addEventListener("click", () => {
    showView("train");
    setInitModel(compileInitSpec());
  });
  $("add-input").addEventListener("click", () => {
    state.inputs.push(state.inputs[state.inputs.length - 1] || "abc");
    state.current = state.inputs.length - 1;
    runNow().then(() => { const f = $("inputs").querySelector(`input[data-index="${state.current}"]`); if (f) f.focus(); });
  });
  $("examples-btn").addEventListener("click", () => openGallery($("gallery"), $("gallery-list"), loadExample)
    .catch((e) => toast(e.message)));
  $("keys-btn").addEventListener("click", () => $("keys").showModal());
  $("share-btn").addEventListener("click", async () => {
    const link = await shareLink();
    history.replaceState(null, "", link.slice(location.origin.length));
    toast((await copyText(link)) ? "Link copied:" : "Link:", link);
  });
  $("shortlink-btn").addEventListener("click", async () => {
    try {
      const link = await shortLink();
      toast((await copyText(link)) ? "Short link copied:" : "Short link:", link);
    } catch (e) { toast(e.message); }
  });
  $("embed-btn").addEventListener("click", async () => {
    const link = state.exercise ? exerciseLink(state.exercise.id, "/embed") : await embedLink();
    const snippet = `<iframe src="${link}" width="100%" height="640" style="border:0"></iframe>`;
    // an exercise's embed can be solved in place (editable, with Check): /embed?solve=1#x=ID
    const solve = state.exercise ? ` (read-only; ${exerciseLink(state.exercise.id, "/embed?solve=1")} lets students solve it in the frame)` : "";
    toast(`${(await copyText(snippet)) ? "Embed code copied; the embed link" : "Embed link"}${solve}:`, link);
  });
  $("heatmap-fit").addEventListener("click", () => setZoom(false));
  $("heatmap-zoom").addEventListener("click", () => setZoom(true));
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (state.doc) { renderHeatmap(); } }, 200);
  });
  $("present-btn").addEventListener("click", () => setPresenting(!document.body.classList.contains("presenting")));
  $("layer-prev").addEventListener("click", () => stepLayer(-1));
  $("layer-next").addEventListener("click", () => stepLayer(1));
  document.querySelectorAll("[data-export]").forEach((button) => button.addEventListener("click", async () => {
    try {
      if (button.dataset.export === "diagram") await exportDiagram($("diagram"), button.dataset.format);
      else await exportHeatmap($("heatmap-plot"), button.dataset.format, exportName(), exportTitle());
    } catch (e) { toast(`Export failed: ${e.message}`); }
  }));
  document.addEventListener("keydown", (e) => {
    const presenting = document.body.classList.contains("presenting");
    if (presenting && e.key === "ArrowRight" && !e.target.closest(".cm-editor, input")) { e.preventDefault(); stepLayer(1); }
    else if (presenting && e.key === "ArrowLeft" && !e.target.closest(".cm-editor, input")) { e.preventDefault(); stepLayer(-1); }
    else if (presenting && e.key === "Escape") setPresenting(false);
    else if (e.altKey && (e.key === "e" || e.key === "E")) { e.preventDefault(); $("examples-btn").click(); }
    else if (e.altKey && (e.key === "p" || e.key === "P")) { e.preventDefault(); $("present-btn").click(); }
    else if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && !e.target.closest(".cm-editor")) { e.preventDefault(); runNow(); }
  });
  window.addEventListener("popstate", openFromAddress);
  window.addEventListener("hashchange", openFromAddress);
  $("notice-close").addEventListener("click", () => { $("notice").hidden = true; });
}

async function main() {
  if (embedMode) {
    document.body.classList.add("embed");
    document.body.classList.toggle("solve", solveMode);
    $("embed-bar").hidden = false;
  }
  initExercises({ editor: () => editor, runNow, toast, embedMode: embedMode && !(solveMode && exerciseIdFromHash()),
    openExercise, leave: leaveToDraft });
  const exerciseId = exerciseIdFromHash();
  let exerciseOpened = false;
  if (exerciseId) {
    try { await enterExercise(exerciseId); exerciseOpened = true; } catch (e) { toast(`No exercise '${exerciseId}': ${e.message}`); }
  }
  if (!exerciseOpened) await initialState();
  editor = await createEditor($("editor"), {
    initial: state.source, readOnly: embedMode && !(solveMode && state.exercise),
    onChange: (text) => {
      state.source = text;
      if (state.compiled) { state.compiled = false; resetCompiled(); }
      scheduleRun();
    },
    onRun: runNow,
  });
  document.body.dataset.editor = editor.kind;
  wire();
  initProvenance({ openSelector: (selId) => select(`#${selId}`, selId), toast,
    showLayer: (layer) => { if (presentLayer !== null && layer >= 1) { presentLayer = layer; stepLayer(0); } } });
  renderInputs();
  compileRequested = state.compiled;
  await runNow();
  if (state.view !== "program" && $(`view-${state.view}`)) showView(state.view);
  if (embedMode) {
    $("open-in-rasplay").href = state.exercise ? exerciseLink(state.exercise.id) : await linkFor(shareable(), "/");
    editor.showLine(firstCodeLine(state.source));   // a small frame opens on the code, the header comments scrolled past
  }
  if (!embedMode) checkTrainingAvailable().catch(() => null);   // the Train tab says so when this server cannot train
  document.body.dataset.ready = "1";
  // hooks for tests and the curious: the state and the run timings
  window.rasplay = { state, timings, runNow, select };
}

main().catch((e) => {
  console.error(e);
  setStatus(`rasplay failed to start: ${e.message}`);
});
