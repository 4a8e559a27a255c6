// The tabs (Program, Compile, Train): which view shows, and the Train view's runs and overlay.

import { compiledAttentionFor, renderCompileForm } from "./compile.js";
import { $, embedMode, toast } from "./page.js";
import { saveHashSoon, state } from "./state.js";
import { renderLengths } from "./lengths.js";
import { currentRuns, renderCurves, renderOverlay, renderTrainForm, startRuns } from "./train.js";

export function showView(view) {
  state.view = view;
  for (const tab of document.querySelectorAll("[role='tab']")) {
    const on = tab.dataset.view === view;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`view-${tab.dataset.view}`).hidden = !on;
  }
  if (view === "train") {
    renderTrainForm($("train-form-box"), state);
    renderLengths($("train-lengths"), currentRuns());
  }
  if (view === "compile") renderCompileForm($("compile-form-box"), state);
  if (!embedMode) saveHashSoon();
}

async function renderTraining(finished = false) {
  await renderCurves($("train-curves"), $("train-status"));
  await renderLengths($("train-lengths"), currentRuns());
  if (finished) renderOverlay($("train-overlay"), compiledAttentionFor(state.doc));
}

export async function startTraining(ablate) {
  try {
    await startRuns(state, { ablate }, (finished) => renderTraining(finished));
  } catch (e) {
    toast(e.message);
  }
}
