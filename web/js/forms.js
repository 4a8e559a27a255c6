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
