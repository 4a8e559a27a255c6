// Small helpers shared by the Compile and Train forms.

import { parseInputText } from "./state.js";

// The distinct tokens of the inputs: "ehlo" for characters, a JSON list when an input is a list.
export function vocabOf(inputs) {
  const seen = [];
  let json = false;
  for (const text of inputs) {
    const { value } = parseInputText(text);
    if (Array.isArray(value)) json = true;
    for (const t of (Array.isArray(value) ? value : [...value])) if (!seen.includes(t)) seen.push(t);
  }
  seen.sort();
  return json ? JSON.stringify(seen) : seen.join("");
}

// A vocab field's text as the API wants it: a string of characters or a list.
export function vocabValue(text) {
  return text.startsWith("[") ? parseInputText(text).value : text;
}

// The longest input, in tokens.
export function longestInput(inputs) {
  return Math.max(1, ...inputs.map((t) => { const { value } = parseInputText(t); return Array.isArray(value) ? value.length : [...value].length; }));
}

// The Compile and Train forms follow the program on screen and its inputs (vocab, lengths, output),
// except the fields the user edited for this program: those keep their value while the program is
// edited and re-run, and are forgotten when another program is loaded (example, exercise, link, Back).
const edited = new Map();   // field id -> the value the user gave it

export function forgetEdits() { edited.clear(); }

function valueOf(node) { return node.type === "checkbox" ? node.checked : node.value; }

export function markEdited(node) { if (node) edited.set(node.id, valueOf(node)); }

export function isEdited(id) { return edited.has(id); }

// Put the user's edits back into a freshly rendered form, and watch its fields for new edits.
export function followEdits(form) {
  for (const node of form.querySelectorAll("input, select")) {
    if (edited.has(node.id)) {
      const v = edited.get(node.id);
      if (node.type === "checkbox") node.checked = v;
      else if (node.tagName !== "SELECT" || [...node.options].some((o) => o.value === v)) node.value = v;
    }
    node.addEventListener(node.tagName === "SELECT" || node.type === "checkbox" ? "change" : "input", () => markEdited(node));
  }
}
