// The names and titles of exported figures: the program's title (its `# title:` header, as the engine
// read it), the selector shown and the input.

import { graphIndex, resolve, selectorOf } from "./docmodel.js";
import { state } from "./state.js";

// The program's `# title:` header (read by the engine), else its last name, for file names and figure titles.
function programTitle() {
  if (state.doc && state.doc.title) return state.doc.title;
  const names = state.doc ? Object.keys(state.doc.results) : [];
  return names.length ? names[names.length - 1] : "program";
}

function selectorName() {
  const id = resolve(state.doc, state.selection);
  const sel = id === null ? null : selectorOf(state.doc, id);
  return sel === null ? state.selection || "selector" : graphIndex(state.doc).nodes.get(sel).name;
}

export function exportName() {
  return `rasplay-${programTitle()}-${selectorName()}`.replace(/[^\w-]+/g, "_").replace(/_+/g, "_").slice(0, 120);
}

export function exportTitle() {
  const tokens = state.doc ? state.doc.inputs[state.current] || [] : [];
  const shown = tokens.map((t) => (typeof t === "string" ? t : JSON.stringify(t))).join(tokens.every((t) => typeof t === "string" && t.length === 1) ? "" : " ");
  return `${programTitle()} — selector ${selectorName()} on “${shown.length > 60 ? `${shown.slice(0, 59)}…` : shown}”`;
}
