// The Learned view (docs/learned_programs.md, "Checking"): a learned program (pasted, imported from
// TransformerPrograms' Python and weights CSV, or emitted by a "program"-mode training) beside the user's
// program; one click opens it in the editor (and one brings the user's program back); Check compares it
// with the user's program on every input up to a length (POST /learned/check): agreement by length, the
// shortest failing inputs (one click puts one in the playground's values table and heatmaps, wrapped in
// the learned program's BOS/EOS when the editor shows the learned program), and which of its selectors
// equal one of the user's. Program, input, value and error text reaches the page only as text.

import * as api from "./api.js";
import { markEdited, vocabOf, vocabValue } from "./forms.js";
import { $, page, toast } from "./page.js";
import { renderInputs } from "./programview.js";
import { saveHashSoon, state } from "./state.js";
import { el, formatValue } from "./values.js";
import { showView } from "./views.js";

const learned = { source: "", origin: "", report: null, userSource: null,   // userSource: while the editor shows the learned program
  settings: null };   // the check's settings from a link, until the form shows them
const CHECK_DEFAULTS = { min_length: 1, max_length: 5, beyond: 2, samples: 1000, seed: 0 };
const CHECK_FIELDS = { min_length: "learned-min-len", max_length: "learned-max-len", beyond: "learned-beyond",
  samples: "learned-samples", seed: "learned-seed" };
const pct = (x) => (x === null || x === undefined ? "–" : `${(100 * x).toFixed(1)}%`);
const showTokens = (values) => (values ? values.map(formatValue).join(" ") : "–");

function field(label, input, hint = "") {
  return el("label", { class: "field" }, el("span", {}, label), input, hint ? el("small", {}, hint) : "");
}

function numberInput(id, value, attrs = {}) {
  const node = el("input", { id, type: "number", min: "0", ...attrs });
  node.value = String(value);
  return node;
}

// A learned program arrives (a training's emitted program, an import): shown here, said where it came from.
export function receiveLearned(source, origin) {
  learned.source = source;
  learned.origin = origin;
  learned.report = null;
  if ($("learned-source")) $("learned-source").value = source;
  setOrigin();
  renderReport();
}

function setOrigin() {
  const box = $("learned-origin");
  if (box) box.textContent = learned.origin ? `From ${learned.origin}.` : "";
}

const editorShowsLearned = () => learned.userSource !== null && state.source === learned.source;

async function setEditor(text) {
  page.editor.setValue(text);
  state.source = text;
  await page.run();
}

async function openInEditor() {
  if (!learned.source.trim()) { toast("Paste, import or train a learned program first."); return; }
  if (!editorShowsLearned()) learned.userSource = state.source;
  await setEditor(learned.source);
  $("learned-back").hidden = false;
  showView("program");
}

async function backToUserProgram() {
  if (learned.userSource === null) return;
  const source = learned.userSource;
  learned.userSource = null;
  $("learned-back").hidden = true;
  await setEditor(source);
}

async function importProgram() {
  const program = $("learned-tp-program").files[0];
  const weights = $("learned-tp-weights").files[0];
  if (!program || !weights) { toast("Choose the program (.py) and its weights (.csv)."); return; }
  $("learned-status").textContent = "Importing…";
  try {
    const result = await api.importLearned(await program.text(), await weights.text());
    receiveLearned(result.source, `TransformerPrograms: ${program.name}`);
    saveHashSoon();
    $("learned-status").textContent = "Imported.";
  } catch (e) {
    $("learned-status").textContent = `Import refused: ${e.message}${e.line ? ` (line ${e.line})` : ""}`;
  }
}

function readOptions() {
  const num = (id) => Number($(id).value);
  return { vocab: vocabValue($("learned-vocab").value.trim()), min_length: num("learned-min-len"),
    max_length: num("learned-max-len"), beyond: num("learned-beyond"), samples: num("learned-samples"),
    seed: num("learned-seed") };
}

async function runCheck() {
  if (!learned.source.trim()) { toast("Paste, import or train a learned program first."); return; }
  const task = editorShowsLearned() ? learned.userSource : state.source;
  const status = $("learned-status");
  status.textContent = "Checking every input…";
  $("learned-check").disabled = true;
  try {
    learned.report = await api.checkLearned({ learned: learned.source, task, ...readOptions() });
    status.textContent = "";
  } catch (e) {
    learned.report = null;
    status.textContent = `Check refused: ${e.message}${e.line ? ` (line ${e.line})` : ""}`;
  } finally {
    $("learned-check").disabled = false;
  }
  renderReport();
}

// The failing input in the playground: added to the inputs (BOS/EOS around it when the editor shows the
// learned program), made current, and run: the values table and the heatmaps show it.
async function showInput(failing) {
  const r = learned.report;
  const tokens = editorShowsLearned()
    ? [...(r.bos !== null ? [r.bos] : []), ...failing.input.map(String), ...(r.eos !== null ? [r.eos] : [])]
    : failing.input;
  const text = tokens.every((t) => typeof t === "string" && [...t].length === 1) ? tokens.join("") : JSON.stringify(tokens);
  let index = state.inputs.indexOf(text);
  if (index < 0) { state.inputs.push(text); index = state.inputs.length - 1; }
  state.current = index;
  renderInputs();
  showView("program");
  await page.run();
}

function bar(fraction) {
  const fill = el("span");
  fill.style.width = `${Math.round(100 * (fraction ?? 0))}%`;
  return el("span", { class: "bar", "aria-hidden": "true" }, fill);
}

function lengthTable(r) {
  const head = el("tr", {}, ...["length", "inputs", "agree", "", "tokens agree", "task failed", "learned failed"]
    .map((t) => el("th", { scope: "col" }, t)));
  const rows = r.lengths.map((row) => el("tr", { "data-length": String(row.length), class: row.beyond ? "beyond" : "" },
    el("th", { scope: "row" }, `${row.length}${row.beyond ? " (beyond)" : ""}`),
    el("td", {}, `${row.inputs.toLocaleString()} ${row.mode === "exhaustive" ? "(all)" : "(sampled)"}`),
    el("td", { class: "agree" }, `${row.agree.toLocaleString()} · ${pct(row.input_agreement)}`),
    el("td", {}, bar(row.input_agreement)),
    el("td", {}, pct(row.token_agreement)),
    el("td", {}, String(row.task_failed)),
    el("td", {}, String(row.learned_failed))));
  return el("table", { id: "learned-lengths-table", class: "summary learned-table", "aria-label": "Agreement by input length" },
    el("thead", {}, head), el("tbody", {}, ...rows));
}

function failingList(r) {
  if (!r.failing.length) return el("p", { class: "note" }, "No failing input among those checked.");
  return el("ol", { id: "learned-failing-list", class: "learned-failing" }, ...r.failing.map((f, i) => el("li", {},
    el("div", {}, el("span", { class: "label" }, "input "), el("code", { class: "failing-input" }, showTokens(f.input)),
      f.beyond ? " (beyond)" : ""),
    el("div", {}, el("span", { class: "label" }, "expected "), el("code", {}, showTokens(f.expected))),
    el("div", {}, el("span", { class: "label" }, "got "), f.error ? el("span", { class: "err" }, f.error)
      : el("code", {}, showTokens(f.got)), ` (differs at ${f.differs.join(", ")})`),
    el("button", { type: "button", class: "small", "data-failing": String(i), onclick: () => showInput(f) },
      "Show in the playground"))));
}

function selectorList(r) {
  return el("ul", { id: "learned-selectors-list", class: "learned-selectors" }, ...r.selectors.map((s) => {
    const where = s.line !== null ? ` (line ${s.line})` : "";
    const said = s.equals.length ? `= ${s.equals.join(", ")}`
      : s.closest ? `≠ every selector of yours (closest: ${s.closest.name}, the same on ${pct(s.closest.inputs_equal)} of inputs)`
        : "≠ every selector of yours";
    return el("li", { class: s.equals.length ? "equal" : "different", "data-selector": s.name },
      el("span", { class: "mark", "aria-hidden": "true" }, s.equals.length ? "✓" : "·"), " ",
      el("code", {}, s.name), `${where} `, said);
  }));
}

function renderReport() {
  const box = $("learned-report");
  if (!box) return;
  const r = learned.report;
  if (!r) { box.replaceChildren(); return; }
  const t = r.total;
  const verdict = r.all_agree ? `Agrees on every input checked (${t.inputs.toLocaleString()} inputs)`
    : `Disagrees on ${(t.inputs - t.agree).toLocaleString()} of ${t.inputs.toLocaleString()} inputs`;
  box.replaceChildren(
    el("p", { id: "learned-verdict", class: r.all_agree ? "verdict ok" : "verdict wrong", role: "status" },
      `${verdict}: ${pct(t.token_agreement)} of tokens, ${r.seconds} s.`,
      r.compared_as === "text" ? " Outputs compared as text (\"3\" agrees with 3)." : ""),
    lengthTable(r),
    el("h3", {}, "Shortest failing inputs"), failingList(r),
    el("h3", {}, "Its selectors against yours"), selectorList(r));
}

function renderForm() {
  const box = $("learned-form-box");
  if (box.firstChild) {   // kept: only the vocabulary follows the inputs, until edited
    const vocab = $("learned-vocab");
    if (!vocab.dataset.edited) vocab.value = vocabOf(state.inputs);
    return;
  }
  const vocab = el("input", { id: "learned-vocab", type: "text", spellcheck: "false" });
  vocab.value = vocabOf(state.inputs);
  vocab.addEventListener("input", () => { vocab.dataset.edited = "1"; markEdited(vocab); });
  box.replaceChildren(el("form", { id: "learned-form", class: "train-form", onsubmit: (e) => e.preventDefault(),
    onchange: () => saveHashSoon() },
    field("vocab", vocab, "characters, or a JSON list"),
    field("lengths", el("span", { class: "pair" }, numberInput("learned-min-len", 1, { min: "1", "aria-label": "shortest input" }),
      "–", numberInput("learned-max-len", 5, { min: "1", "aria-label": "longest input" }))),
    field("beyond", numberInput("learned-beyond", 2), "lengths past the longest"),
    field("samples", numberInput("learned-samples", 1000, { min: "1" }), "per length past 20,000 inputs"),
    field("seed", numberInput("learned-seed", 0))));
  applySettings();
}

// A link's check settings into the form (once it exists); a vocabulary from a link counts as edited.
function applySettings() {
  const s = learned.settings;
  if (!s || !$("learned-form")) return;
  learned.settings = null;
  for (const [key, id] of Object.entries(CHECK_FIELDS)) $(id).value = String(s[key] ?? CHECK_DEFAULTS[key]);
  const vocab = $("learned-vocab");
  if (typeof s.vocab === "string") { vocab.value = s.vocab; vocab.dataset.edited = "1"; return; }
  delete vocab.dataset.edited;
  vocab.value = vocabOf(state.inputs);
}

// The check's settings for a link: those of the form (or of the link not yet shown), the vocabulary only
// where it was edited (else it follows the inputs).
function currentSettings() {
  if (!$("learned-form")) return learned.settings ? { ...learned.settings } : {};
  const out = {};
  for (const [key, id] of Object.entries(CHECK_FIELDS)) {
    const value = Number($(id).value);
    if (Number.isInteger(value) && value !== CHECK_DEFAULTS[key]) out[key] = value;
  }
  if ($("learned-vocab").dataset.edited) out.vocab = $("learned-vocab").value.trim();
  return out;
}

// Its part of a share link (state.js): the learned program's text, where it came from, the user's program
// while the editor shows the learned one, and the check's settings; never a model's weights.
const sharePart = {
  save(out) {
    if (!learned.source.trim()) return;
    const part = { source: learned.source };
    if (learned.origin) part.origin = learned.origin;
    if (editorShowsLearned()) part.user_source = learned.userSource;
    const check = currentSettings();
    if (Object.keys(check).length) part.check = check;
    out.learned = part;
  },
  load(obj) {
    const part = obj.learned;
    const ok = part && typeof part === "object" && typeof part.source === "string";
    receiveLearned(ok ? part.source : "", ok && typeof part.origin === "string" ? part.origin : "");
    learned.userSource = ok && typeof part.user_source === "string" ? part.user_source : null;
    if ($("learned-back")) $("learned-back").hidden = learned.userSource === null;
    const check = ok && part.check && typeof part.check === "object" ? part.check : {};
    learned.settings = { ...CHECK_DEFAULTS, ...check };
    applySettings();
  },
};

export function initLearned() {
  // a program-mode training's emitted program (train.js announces it with this event)
  document.addEventListener("rasplay:learned", (e) => {
    receiveLearned(e.detail.source, e.detail.origin);
    saveHashSoon();
    toast("The trained program is in the Learned tab: open it, or check it on every input.");
  });
  $("learned-source").addEventListener("input", (e) => {
    learned.source = e.target.value; learned.origin = ""; setOrigin(); saveHashSoon();
  });
  $("learned-open").addEventListener("click", openInEditor);
  $("learned-back").addEventListener("click", backToUserProgram);
  $("learned-import").addEventListener("click", importProgram);
  $("learned-check").addEventListener("click", runCheck);
}

export const learnedView = {
  id: "learned",
  label: "Learned",
  show() { renderForm(); },
  render() { if (!$("view-learned").hidden) renderForm(); },
  share: sharePart,
};
