// The page's controls wired to what they do: buttons, the β slider, sharing and embedding, export,
// presenter keys, Back / Forward (the tabs are the view registry's, views.js).

import { compileInitSpec, compiledAttentionFor, renderStudy, studySoft } from "./compile.js";
import { compileNow, currentBeta, formatBeta, refreshCompiled } from "./compileview.js";
import { exerciseLink } from "./exercises.js";
import { exportDiagram, exportHeatmap } from "./export.js";
import { exportName, exportTitle } from "./exportnames.js";
import { openGallery } from "./gallery.js";
import { initLengthFree } from "./lengthfree.js";
import { loadExample, openFromAddress } from "./navigation.js";
import { $, toast } from "./page.js";
import { setPresenting, stepLayer } from "./presenter.js";
import { renderHeatmap, setZoom } from "./programview.js";
import { runNow } from "./run.js";
import { copyText, embedLink, shareLink, shortLink } from "./share.js";
import { state } from "./state.js";
import { cancelRuns, importMaps, preferImported, renderOverlay, setInitModel } from "./train.js";
import { startTraining } from "./trainview.js";
import { showView } from "./views.js";

export function wire() {
  $("run-btn").addEventListener("click", runNow);
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
    // a page opened as a local file (file://) has no origin a server can allow to frame it (frame-ancestors)
    const local = " The frame shows on a page served over http or https; a page opened from a file (file://) " +
      "cannot frame it (serve that page, e.g. `python -m http.server`).";
    toast(`${(await copyText(snippet)) ? "Embed code copied; the embed link" : "Embed link"}${solve}:`, link, null, local);
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
