// The Compile view's flow: compile the program, run the compiled model on the input shown at the chosen
// attention (hard, or softmax at β), the soft-attention study, and forgetting a model when the program changes.

import { agreementAt, compileProgram, compiled, coverageProblem, forgetCompiled, renderAttention, renderCompileForm,
  renderResidual, renderStudy, renderSummary, runCompiled } from "./compile.js";
import { $, embedMode, page, setStatus } from "./page.js";
import { saveHashSoon, state } from "./state.js";
import { el } from "./values.js";

export function currentBeta() {
  return $("compile-hard").checked ? null : 10 ** Number($("compile-beta").value);
}

export async function refreshCompiled() {
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

export function formatBeta(beta) {
  return beta >= 100 ? beta.toFixed(0) : beta >= 10 ? beta.toFixed(1) : beta.toFixed(2);
}

export function resetCompiled() {
  forgetCompiled();
  renderSummary($("compile-summary"), $("compile-layout"));
  $("compile-attention").replaceChildren();
  $("compile-residual").replaceChildren();
  $("compile-coverage").hidden = true;
  $("compile-study").disabled = true;
  $("compile-finetune").disabled = true;
}

export async function compileNow() {
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
      page.editor.setDiagnostics([...(state.doc ? state.doc.diagnostics : []), squiggle]);
      page.editor.goTo(e.line, e.col || 1);
    }
  } finally {
    $("compile-start").disabled = false;
  }
}

// The Compile view in the view registry (views.js): its form follows the program and its inputs (forms.js),
// a compiled model runs on the input shown now, and a link says whether the program was compiled.
export const compileView = {
  id: "compile",
  label: "Compile",
  show: () => renderCompileForm($("compile-form-box"), state),
  render() {
    renderCompileForm($("compile-form-box"), state);
    if (compiled.id && !page.compileRequested) refreshCompiled();   // the compiled heads on the input shown now
  },
  share: {
    save(out) { if (state.compiled) out.compiled = true; },
    load(obj) { state.compiled = obj.compiled === true; },
  },
};
