// The Train view: its form, the runs it starts (with an ablation one layer fewer), their curves and, when
// they finish, the trained attention over the selectors. Registered in the view registry (views.js).

import { compiledAttentionFor } from "./compile.js";
import { $, toast } from "./page.js";
import { renderLengths } from "./lengths.js";
import { state } from "./state.js";
import { currentRuns, renderCurves, renderOverlay, renderTrainForm, startRuns } from "./train.js";

async function renderTraining(finished = false) {
  await renderCurves($("train-curves"), $("train-status"));
  await renderLengths($("train-lengths"), currentRuns());   // accuracy by length, when the runs test longer inputs
  if (finished) renderOverlay($("train-overlay"), compiledAttentionFor(state.doc));
}

export async function startTraining(ablate) {
  try {
    await startRuns(state, { ablate }, (finished) => renderTraining(finished));
  } catch (e) {
    toast(e.message);
  }
}

const renderForm = () => renderTrainForm($("train-form-box"), state);

export const trainView = {
  id: "train",
  label: "Train",
  show() {
    renderForm();
    renderLengths($("train-lengths"), currentRuns());
  },
  render: renderForm,   // the form follows the program and its inputs (forms.js)
};
