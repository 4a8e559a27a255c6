// Exercises: the gallery, the task beside the editor, the Check button (Ctrl+Shift+Enter), the verdict
// with its counterexample (shown in the values table, with the selector that went wrong in the heatmap),
// the layer/head budget as bars, progress and drafts kept in localStorage, and `#x=ID` links.
// The checking happens on the server (POST /api/v1/exercises/{id}/check); the reference never comes here.

import * as api from "./api.js";
import { addSharePart, state } from "./state.js";
import { el, formatValue } from "./values.js";

const $ = (id) => document.getElementById(id);
const STORE = "rasplay.exercises.v1";
let ctx = null;          // {editor(), runNow, toast, embedMode}
let summaries = null;    // GET /exercises, once
let analyzeSeq = 0;

// ------------------------------------------------------------------ progress (localStorage)

function progress() {
  try {
    const p = JSON.parse(localStorage.getItem(STORE) || "{}");
    return { solved: p.solved || {}, drafts: p.drafts || {} };
  } catch (e) {
    return { solved: {}, drafts: {} };
  }
}

function saveProgress(p) {
  try { localStorage.setItem(STORE, JSON.stringify(p)); } catch (e) { /* private mode: progress is not kept */ }
}

function saveDraft(id, source) {
  const p = progress();
  if (p.drafts[id] === source) return;
  p.drafts[id] = source;
  saveProgress(p);
}

function markSolved(id) {
  const p = progress();
  p.solved[id] = true;
  saveProgress(p);
}

// ------------------------------------------------------------------ links

export function exerciseIdFromHash() {
  const m = location.hash.match(/^#x=([a-z0-9_]{1,64})$/);
  return m ? m[1] : null;
}

export function exerciseLink(id, path = "/") {
  return `${location.origin}${path}#x=${id}`;
}

// ------------------------------------------------------------------ entering and leaving

export function initExercises(context) {
  ctx = context;
  $("exercises-btn").addEventListener("click", () => openExerciseGallery().catch((e) => ctx.toast(e.message)));
  $("check-btn").addEventListener("click", () => checkNow());
  $("exercise-reset").addEventListener("click", () => {
    if (!state.exercise) return;
    ctx.editor().setValue(state.exercise.starter);
    state.source = state.exercise.starter;
    ctx.runNow();
  });
  $("exercise-leave").addEventListener("click", () => (ctx.leave ? ctx.leave() : leaveExercise()));
  $("exercise-link").addEventListener("click", async () => {
    if (!state.exercise) return;
    const link = exerciseLink(state.exercise.id);
    let copied = false;
    try { await navigator.clipboard.writeText(link); copied = true; } catch (e) { copied = false; }
    ctx.toast(copied ? "Exercise link copied:" : "Exercise link:", link);
  });
  // capture: before CodeMirror's own Mod-Enter, and before the page's Ctrl+Enter (run)
  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.shiftKey && e.key === "Enter" && state.exercise && !ctx.embedMode) {
      e.preventDefault();
      e.stopPropagation();
      checkNow();
    }
  }, true);
}

// A share link (Share, Short link) made inside an exercise carries it: `"exercise": ID` beside the attempt's
// source and inputs (state.js's link format); opening the link enters the exercise with that attempt.
addSharePart({ save(out) { if (state.exercise) out.exercise = state.exercise.id; } });

export function sharedExerciseId(obj) {
  return obj && typeof obj.exercise === "string" && /^[a-z0-9_]{1,64}$/.test(obj.exercise) ? obj.exercise : null;
}

// Load an exercise into the state (before the editor exists, or replacing its text). `attempt`: a shared
// attempt ({source}, from a link whose inputs and selection are in the state already), which replaces
// this browser's draft of the exercise (a toast offers the draft back).
export async function enterExercise(id, attempt = null) {
  const ex = await api.exercise(id);
  const drafts = progress().drafts;
  state.exercise = ex;
  state.check = null;
  const draft = !ctx.embedMode && drafts[id] !== undefined ? drafts[id] : null;
  if (attempt) {
    state.source = attempt.source;
    if (draft !== null && draft !== attempt.source && !ctx.embedMode) {
      ctx.toast(`This link holds an attempt at “${ex.title}”; it replaces your own draft of it.`, null, { label: "My draft",
        run: () => { state.source = draft; ctx.editor().setValue(draft); ctx.runNow(); } });
    }
  } else {
    state.source = draft !== null ? draft : ex.starter;
    const example = ex.example !== null && ex.example !== undefined ? ex.example : "";
    state.inputs = [typeof example === "string" ? example : JSON.stringify(example)];
    state.current = 0;
    state.selection = null;
  }
  renderPanel();
  if (ctx.editor()) {
    ctx.editor().setValue(state.source);
    await ctx.runNow();
  }
}

export function leaveExercise(run = true) {
  state.exercise = null;
  state.check = null;
  $("exercise-panel").hidden = true;
  document.body.classList.remove("exercising");
  if (run) ctx.runNow();
}

export async function openExerciseGallery() {
  if (!summaries) summaries = await api.exercises();
  const solved = progress().solved;
  const dialog = $("exercise-gallery");
  $("exercise-gallery-progress").textContent = `${summaries.filter((x) => solved[x.id]).length} of ${summaries.length} solved`;
  $("exercise-gallery-list").replaceChildren(...summaries.map((ex, i) => el("li", {},
    el("button", { type: "button", "data-exercise": ex.id, onclick: async () => {
      dialog.close();
      try { await (ctx.openExercise ? ctx.openExercise(ex.id) : enterExercise(ex.id)); } catch (e) { ctx.toast(e.message); }
    } },
    el("span", { class: "title" }, `${i + 1}. ${ex.title}${solved[ex.id] ? "  ✓" : ""}`),
    el("span", { class: "desc" }, `Define ${ex.target}${budgetWords(ex.budget)}`),
    el("span", { class: "tags" }, ex.tags.join(" · "))))));
  dialog.showModal();
  const first = dialog.querySelector("li button");
  if (first) first.focus();
}

// `name` in a task becomes <code>name</code> (as text nodes: nothing from the file is parsed as HTML)
function withCode(text) {
  return text.split("`").map((part, i) => (i % 2 ? el("code", {}, part) : document.createTextNode(part)));
}

function budgetWords(budget) {
  const parts = [];
  if (budget.max_layers !== null) parts.push(`${budget.max_layers} layer${budget.max_layers === 1 ? "" : "s"}`);
  if (budget.max_heads_per_layer !== null) parts.push(`${budget.max_heads_per_layer} head${budget.max_heads_per_layer === 1 ? "" : "s"} per layer`);
  if (budget.max_heads !== null) parts.push(`${budget.max_heads} head${budget.max_heads === 1 ? "" : "s"} in all`);
  return parts.length ? ` in at most ${parts.join(", ")}` : "";
}

// ------------------------------------------------------------------ the panel

function renderPanel() {
  const ex = state.exercise;
  $("exercise-panel").hidden = false;
  document.body.classList.add("exercising");
  $("exercise-title").textContent = ex.title;
  $("exercise-task").replaceChildren(...withCode(ex.task));
  const alphabet = ex.input_format === "str" ? ex.alphabet.join("") : JSON.stringify(ex.alphabet);
  const generated = ex.alphabet.length ? ` over ${alphabet || "—"}, lengths ${ex.lengths[0]} to ${ex.lengths[1]}` : "";
  $("exercise-meta").textContent = `Target: ${ex.target}. A check runs your program on ${ex.inputs} inputs${generated}` +
    `${ex.forbid.length ? `; not allowed: ${ex.forbid.join(", ")}` : ""}.`;
  const solved = progress().solved;
  $("exercise-progress").textContent = solved[ex.id] ? "✓ solved" : "";
  $("check-btn").hidden = ctx.embedMode;
  $("exercise-reset").hidden = ctx.embedMode;
  $("exercise-leave").hidden = ctx.embedMode;
  $("exercise-result").replaceChildren();
  renderBudget(null);
}

// Bars for the budgets: use from the last analysis (live) or check.
function renderBudget(use) {
  const ex = state.exercise;
  const box = $("exercise-budget");
  const rows = [["layers", "Layers", ex.budget.max_layers], ["heads_per_layer", "Heads in a layer", ex.budget.max_heads_per_layer],
    ["heads", "Heads in all", ex.budget.max_heads]];
  box.replaceChildren(...rows.filter(([, , max]) => max !== null).map(([key, label, max]) => {
    const used = use ? use[key] : null;
    const over = used !== null && used > max;
    const meter = el("meter", { min: "0", max: String(Math.max(max, used || 0)), value: String(used || 0),
      high: String(max), optimum: "0", "aria-label": `${label}: ${used === null ? "unknown" : used} of ${max}` });
    return el("div", { class: `budget-row${over ? " over" : ""}`, "data-budget": key },
      el("span", { class: "label" }, label), meter,
      el("span", { class: "figures" }, `${used === null ? "–" : used} / ${max}${over ? " over budget" : ""}`));
  }));
  if (!box.childElementCount) box.append(el("span", { class: "hint" }, "No layer or head budget for this exercise."));
}

// After every run: keep the draft, and measure the target's layers and heads for the bars.
export async function afterRun() {
  const ex = state.exercise;
  if (!ex) return;
  if (!ctx.embedMode) saveDraft(ex.id, state.source);
  const seq = ++analyzeSeq;
  try {
    const a = await api.analyze(state.source, ex.target);
    if (seq !== analyzeSeq || state.exercise !== ex) return;
    const defined = !a.diagnostics.some((d) => d.severity === "error" && d.kind === "name");
    const heads = a.heads_per_layer || [];
    renderBudget(defined ? { layers: a.layers, heads_per_layer: heads.length ? Math.max(...heads) : 0,
      heads: heads.reduce((x, y) => x + y, 0) } : null);
  } catch (e) {
    if (seq === analyzeSeq) renderBudget(null);
  }
}

// ------------------------------------------------------------------ checking

function inputText(input) {
  return typeof input === "string" ? input : JSON.stringify(input);
}

function shownValues(values) {
  return values ? values.map(formatValue).join(" ") : "—";
}

export async function checkNow() {
  const ex = state.exercise;
  if (!ex) return;
  const source = ctx.editor().getValue();
  state.source = source;
  const box = $("exercise-result");
  box.replaceChildren(el("p", { class: "verdict checking" }, "Checking…"));
  document.body.dataset.checking = "1";
  let result;
  try {
    result = await api.checkExercise(ex.id, source);
  } catch (e) {
    box.replaceChildren(el("p", { class: "verdict error" }, e.message));
    delete document.body.dataset.checking;
    return;
  }
  if (state.exercise !== ex) return;
  state.check = { ...result, source };
  if (result.passed) {
    markSolved(ex.id);
    summaries = null;
    $("exercise-progress").textContent = "✓ solved";
  }
  if (result.budget) {
    renderBudget({ layers: result.budget.layers.used, heads_per_layer: result.budget.heads_per_layer.used,
      heads: result.budget.heads.used });
  }
  renderResult(result);
  const c = result.counterexample;
  if (c) {
    // show the counterexample in the values table, and the selector that went wrong in the heatmap
    const text = inputText(c.input);
    let i = state.inputs.indexOf(text);
    if (i < 0) { state.inputs.unshift(text); i = 0; }
    state.current = i;
    if (c.sop.selector) state.selection = c.sop.selector;
    await ctx.runNow();
  }
  document.body.dataset.checks = String(Number(document.body.dataset.checks || 0) + 1);
  delete document.body.dataset.checking;
}

function renderResult(r) {
  const box = $("exercise-result");
  const words = { pass: "Solved", wrong: "Not yet", outside_fragment: "Almost", over_budget: "Almost", error: "Cannot check" };
  const parts = [el("p", { class: `verdict ${r.status}`, "data-status": r.status },
    el("strong", {}, `${words[r.status]}: `), r.message)];
  if (r.verdict) parts.push(el("p", { class: "proof", "data-outcome": r.verdict.outcome }, proofSentence(r.verdict)));
  const c = r.counterexample;
  if (c) {
    const table = el("table", { class: "counterexample", "aria-label": "Counterexample" },
      el("tr", {}, el("th", { scope: "row" }, "input"), el("td", {}, inputText(c.input))),
      el("tr", {}, el("th", { scope: "row" }, `expected ${r.target}`), el("td", { class: "expected" }, shownValues(c.expected))),
      el("tr", {}, el("th", { scope: "row" }, `your ${r.target}`), el("td", { class: "got" }, c.error || shownValues(c.got))));
    parts.push(table);
    if (c.sop.name !== r.target) {
      parts.push(el("p", { class: "hint" }, `The first s-op that differs from the reference: ${c.sop.name} (layer ${c.sop.layer}): ` +
        `expected ${shownValues(c.sop.expected)}, got ${c.sop.error || shownValues(c.sop.got)}.`));
    }
    if (c.sop.selector) {
      parts.push(el("p", { class: "hint" }, `The values below are on this input; the heatmap shows the selector ${c.sop.selector_name || c.sop.selector}.`));
    }
  }
  box.replaceChildren(...parts);
}

// How the check decided, in one sentence (docs/exercises.md, "Proven verdicts").
function proofSentence(v) {
  if (v.internal_error) return `Internal error, please report it: ${v.internal_error}. The sampled verdict stands.`;
  if (v.outcome === "proved") {
    return v.scope === "every_length"
      ? `Proved: your program equals the reference on every input of every length (${v.fragment}).`
      : `Proved: your program equals the reference on every input up to length ${v.length} (${v.fragment}).`;
  }
  if (v.outcome === "different" && v.method === "proof") {
    return `Proved different: your program and the reference differ on the input of length ${v.length} shown below.`;
  }
  if (v.outcome === "different") return "Found by sampling: the input below tells your program from the reference.";
  if (v.outcome === "not_proved") {
    return `Not proved: identical to the reference on every input up to length ${v.length}, but no proof was found (${v.reason}).`;
  }
  return `Sampled, not proved: ${v.reason}.`;
}

// The values table, on the counterexample: an "expected" row under the wrong s-ops, wrong cells marked.
export function decorateValues(container) {
  const chk = state.check;
  if (!state.exercise || !chk || !chk.counterexample || chk.source !== state.source) return;
  const c = chk.counterexample;
  if (state.inputs[state.current] !== inputText(c.input)) return;
  const rows = [[chk.target, c.expected]];
  if (c.sop.name !== chk.target && c.sop.expected) rows.unshift([c.sop.name, c.sop.expected]);
  for (const [name, expected] of rows) {
    const tr = [...container.querySelectorAll("tr[data-name]")].find((row) => row.dataset.name === name);
    if (!tr) continue;
    tr.classList.add("wrong");
    const cells = [...tr.querySelectorAll("td:not(.layer)")];
    if (cells.length === expected.length) {
      cells.forEach((td, i) => { if (td.textContent !== formatValue(expected[i])) td.classList.add("mismatch"); });
    }
    const row = el("tr", { class: "expected-row", "data-expected": name },
      el("th", { class: "name", scope: "row" }, el("span", { class: "plain" }, `expected ${name}`)));
    expected.forEach((v) => row.append(el("td", {}, formatValue(v))));
    row.append(el("td", { class: "layer" }, ""));
    tr.after(row);
  }
}
