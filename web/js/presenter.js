// Presenter mode: large type, one layer at a time (its head's heatmap, its values row, its lines marked in
// the editor), stepped with the arrow keys.

import { firstCodeLine } from "./editor.js";
import { graphIndex } from "./docmodel.js";
import { $, page } from "./page.js";
import { renderAll } from "./programview.js";
import { state } from "./state.js";
import { showView } from "./views.js";

export function setPresenting(on) {
  document.body.classList.toggle("presenting", on);
  $("present-btn").setAttribute("aria-pressed", String(on));
  $("present-bar").hidden = !on;
  page.presentLayer = on ? 1 : null;
  if (on) {
    showView("program");
    page.editor.showLine(Math.max(1, firstCodeLine(state.source) - 1));   // the code, not only the header
    stepLayer(0);
  } else {
    page.editor.markLines([]);
    renderAll();
  }
}

export function stepLayer(delta) {
  const layers = state.doc ? state.doc.analysis.layers : 0;
  if (!layers) return;
  page.presentLayer = Math.min(Math.max((page.presentLayer || 1) + delta, 1), layers);
  $("layer-label").textContent = `Layer ${page.presentLayer} of ${layers}`;
  const head = state.doc.analysis.heads[page.presentLayer - 1][0];
  if (head) state.selection = graphIndex(state.doc).nodes.get(head.selector).names[0] || `#${head.selector}`;
  renderAll();
  // the stepped layer's values row and the heatmap in view
  const row = $("values").querySelector("tr.hot");
  if (row) row.scrollIntoView({ block: "nearest" });
  $("heatmap-title").scrollIntoView({ block: "nearest" });
  page.editor.markLines(layerLines(page.presentLayer));   // and the layer's definitions, marked, in the page.editor
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
