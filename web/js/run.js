// Running the program: evaluate it on the inputs (api.evaluate), keep the last good results on screen
// (marked stale) while the program does not parse, and render what came back.

import * as api from "./api.js";
import { showDialect } from "./dialect.js";
import { afterRun } from "./exercises.js";
import { compileNow } from "./compileview.js";
import { $, embedMode, page, setStatus, toast } from "./page.js";
import { renderInputs, showProblems } from "./programview.js";
import { lockAddress, parseInputText, saveHashSoon, state } from "./state.js";
import { clearViews, renderViews } from "./views.js";

let runSeq = 0;
let runTimer = null;

export function scheduleRun(delay = 300) {
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
function clearAll(message) {
  state.doc = null;
  setStale(null);
  clearViews(message);
}

// A server that stops answering (no connection, or a proxy saying it is gone) does not empty the views: the
// last results stay, marked stale, the page says "reconnecting" and runs again after 1, 2, 4, ... (at most
// 10) seconds until the server answers. <body data-connection="lost"> while it does not.
let retries = 0;
let retryTimer = null;

function lostServer(e) {
  return e.status === 0 || e.status === 502 || e.status === 504;
}

function reconnect() {
  const delay = Math.min(1000 * 2 ** retries, 10000);
  retries += 1;
  document.body.dataset.connection = "lost";
  const banner = $("stale-banner");
  banner.hidden = false;
  banner.textContent = state.doc
    ? `The server does not answer: showing the last results; reconnecting (try ${retries})…`
    : `The server does not answer; reconnecting (try ${retries})…`;
  document.body.classList.toggle("stale", Boolean(state.doc));
  setStatus("reconnecting…");
  clearTimeout(retryTimer);
  retryTimer = setTimeout(runNow, delay);
}

function reconnected() {
  if (document.body.dataset.connection !== "lost") return;
  retries = 0;
  clearTimeout(retryTimer);
  document.body.dataset.connection = "ok";
  toast("The server answers again.");
}

export async function runNow() {
  clearTimeout(runTimer);
  const seq = ++runSeq;
  const started = performance.now();
  state.source = page.editor ? page.editor.getValue() : state.source;
  const inputs = state.inputs.map((t) => parseInputText(t).value);
  state.current = Math.min(state.current, inputs.length - 1);
  setStatus("running…");
  try {
    const doc = await api.evaluate(state.source, inputs, state.current);
    if (seq !== runSeq) return;
    reconnected();
    const ms = performance.now() - started;
    page.timings.push(ms);
    const errors = doc.diagnostics.filter((d) => d.severity === "error").length;
    if (brokenDocument(doc) && state.doc) {
      page.editor.setDiagnostics(doc.diagnostics);
      showProblems(doc.diagnostics);
      setStale(doc.diagnostics);
      renderInputs();
      afterRun();
      setStatus(`${errors} problem${errors === 1 ? "" : "s"} · showing the last results (stale)`);
    } else {
      state.doc = doc;
      setStale(null);
      await renderViews();
      afterRun();
      setStatus(`${doc.analysis.layers} layer${doc.analysis.layers === 1 ? "" : "s"} · ` +
        `${errors ? `${errors} problem${errors === 1 ? "" : "s"} · ` : ""}${ms.toFixed(0)} ms`);
      if (!embedMode) showDialect(state.source);
    }
  } catch (e) {
    if (seq !== runSeq) return;
    if (lostServer(e)) {
      reconnect();
      return;
    }
    setStatus(e.message);
    showProblems([{ severity: "error", message: e.message }]);
    clearAll(e.message);
    renderInputs();
  } finally {
    if (seq === runSeq) document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1);
  }
  if (!embedMode) saveHashSoon();
  if (page.compileRequested && state.doc && seq === runSeq) {
    // a link asked for the compiled view: compiling costs the server seconds, so ask first (whoever
    // made the link chose it, not the visitor)
    page.compileRequested = false;
    toast("This link shows the program compiled to a transformer.", null, { label: "Compile", run: compileNow });
  }
}
