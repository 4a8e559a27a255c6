// rasplay's browser app: wires the editor, inputs, values, diagram, heatmap, gallery, sharing,
// embed and presenter modes around one state object and the REST API. No RASP logic lives here.
// One module a job: page.js (shared parts, messages), run.js (run and render flow), programview.js,
// compileview.js, trainview.js, learned.js, views.js (the view registry: tabs, render, clear, link parts), presenter.js, navigation.js (which program, the address bar),
// exportnames.js, wiring.js (controls); main.js starts them in order.

import { compileView, resetCompiled } from "./compileview.js";
import { createEditor, firstCodeLine } from "./editor.js";
import { enterExercise, exerciseIdFromHash, exerciseLink, initExercises } from "./exercises.js";
import { initLearned, learnedView } from "./learned.js";
import { initialState, leaveToDraft, loadExample, openExercise } from "./navigation.js";
import { $, embedMode, page, setStatus, solveMode, toast } from "./page.js";
import { stepLayer } from "./presenter.js";
import { programView, renderInputs, select } from "./programview.js";
import { serverLimits } from "./limits.js";
import { initProvenance } from "./provenance.js";
import { initReference, tooltipFor } from "./reference.js";
import { runNow, scheduleRun } from "./run.js";
import { linkFor, loadDraft, shareable, state } from "./state.js";
import { initTour, offerTour } from "./tour.js";
import { checkTrainingAvailable } from "./train.js";
import { trainView } from "./trainview.js";
import { registerViews, showView, viewIds } from "./views.js";
import { wire } from "./wiring.js";

page.run = runNow;
page.scheduleRun = scheduleRun;

async function main() {
  registerViews([programView, compileView, trainView, learnedView]);   // the tabs, in this order (views.js)
  if (embedMode) {
    document.body.classList.add("embed");
    document.body.classList.toggle("solve", solveMode);
    $("embed-bar").hidden = false;
  }
  initExercises({ editor: () => page.editor, runNow, toast, embedMode: embedMode && !(solveMode && exerciseIdFromHash()),
    openExercise, leave: leaveToDraft });
  const firstVisit = !embedMode && !location.hash && !loadDraft();   // no link, no draft: offer the tour
  const exerciseId = exerciseIdFromHash();
  let exerciseOpened = false;
  if (exerciseId) {
    try { await enterExercise(exerciseId); exerciseOpened = true; } catch (e) { toast(`No exercise '${exerciseId}': ${e.message}`); }
  }
  if (!exerciseOpened) await initialState();
  page.editor = await createEditor($("editor"), {
    initial: state.source, readOnly: embedMode && !(solveMode && state.exercise),
    onChange: (text) => {
      state.source = text;
      if (state.compiled) { state.compiled = false; resetCompiled(); }
      scheduleRun();
    },
    onRun: runNow,
    tooltipFor,
  });
  document.body.dataset.editor = page.editor.kind;
  wire();
  initLearned();
  initReference(loadExample);
  initTour();
  initProvenance({ openSelector: (selId) => select(`#${selId}`, selId), toast,
    showLayer: (layer) => { if (page.presentLayer !== null && layer >= 1) { page.presentLayer = layer; stepLayer(0); } } });
  renderInputs();
  page.compileRequested = state.compiled;
  await runNow();
  if (state.view !== viewIds()[0]) showView(state.view);
  if (embedMode) {
    $("open-in-rasplay").href = state.exercise ? exerciseLink(state.exercise.id) : await linkFor(shareable(), "/");
    page.editor.showLine(firstCodeLine(state.source));   // a small frame opens on the code, the header comments scrolled past
  }
  serverLimits().catch(() => null);   // the Compile and Train forms' bounds, from this server
  if (!embedMode) checkTrainingAvailable().catch(() => null);   // the Train tab says so when this server cannot train
  if (firstVisit) offerTour(toast);
  document.body.dataset.ready = "1";
  // hooks for tests and the curious: the state and the run timings
  window.rasplay = { state, timings: page.timings, runNow, select };
}

main().catch((e) => {
  console.error(e);
  setStatus(`rasplay failed to start: ${e.message}`);
});
