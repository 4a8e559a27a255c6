// Which program is on screen, and the address bar: the first state (a link, the draft, or an example), an
// example or exercise opened in a new history entry with an Undo, and Back / Forward.

import * as api from "./api.js";
import { resetCompiled } from "./compileview.js";
import { enterExercise, exerciseIdFromHash, leaveExercise, sharedExerciseId } from "./exercises.js";
import { forgetEdits } from "./forms.js";
import { $, notice, page, toast } from "./page.js";
import { runNow } from "./run.js";
import { applyShared, cancelAddressWrite, loadDraft, LinkError, lockAddress, pushState, readHash, settleAddress,
  shareable, state } from "./state.js";
import { showView } from "./views.js";

// A link made inside an exercise: enter the exercise with the link's attempt (applyShared has put its
// source and inputs in the state). False when this server has no such exercise (the page says so, and
// the attempt shows as a free program).
async function enterSharedAttempt(obj) {
  const id = sharedExerciseId(obj);
  if (!id) return false;
  try {
    await enterExercise(id, { source: obj.source });
    return true;
  } catch (e) {
    notice(`This link holds an attempt at the exercise '${id}', which this server cannot open (${e.message}); ` +
      "it shows as a free program.");
    return false;
  }
}

// Put a state (from a link, the draft, an undo or Back) on screen.
async function openState(obj) {
  forgetEdits();
  applyShared(obj);
  page.compileRequested = state.compiled;
  resetCompiled();
  if (!(await enterSharedAttempt(obj))) {   // entering an exercise runs its attempt
    page.editor.setValue(state.source);
    await runNow();
  }
  showView(state.view);
}

// An example replaces the program in a new history entry (Back returns), with an undo.
export async function loadExample(ex) {
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
  page.editor.setValue(ex.source);
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
// page.editor's draft is kept (exercises keep drafts of their own, exercises.js).
export async function openExercise(id) {
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

// Leave an exercise: back to the free page.editor's draft, in a new history entry (Back returns to the exercise).
export async function leaveToDraft() {
  await settleAddress();
  leaveExercise(false);
  const draft = loadDraft();
  if (draft) await openState(draft);
  else await runNow();
  await pushState();
}

export async function initialState() {
  let problem = null;
  try {
    const shared = await readHash();
    if (shared) { applyShared(shared); await enterSharedAttempt(shared); return; }
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
export async function openFromAddress() {
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
