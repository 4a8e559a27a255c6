// The language reference on the page: every built-in and library name with its signature, its meaning in
// one line and a small example that opens in the editor (Help > Language reference, searchable), and the
// same entry as a tooltip when the pointer rests on a name in the editor. The entries are the engine's
// (GET /api/v1/language/reference, engine/reference.py): the page keeps no copy. Text only (textContent).

import * as api from "./api.js";
import { el } from "./values.js";

const $ = (id) => document.getElementById(id);
let entries = null;     // a promise of the entries, asked for once
let onOpen = null;      // (example) => opens it in the editor (navigation.js's loadExample)

function load() {
  if (!entries) entries = api.languageReference().then((r) => r.entries).catch((e) => { entries = null; throw e; });
  return entries;
}

// The entry of a name, or null (not a built-in or library name, or the reference could not be loaded).
export async function entryFor(name) {
  try {
    return (await load()).find((e) => e.name === name) || null;
  } catch (e) {
    return null;
  }
}

const inputText = (input) => (typeof input === "string" ? input : JSON.stringify(input));

// An entry as DOM nodes: the signature, the meaning, the example (and, in the dialog, the button that opens it).
export function entryNodes(entry, withButton) {
  const nodes = [
    el("div", { class: "ref-head" }, el("code", { class: "ref-signature" }, entry.signature),
      el("span", { class: "ref-kind" }, entry.kind)),
    el("p", { class: "ref-meaning" }, entry.meaning),
    el("pre", { class: "ref-example" }, entry.example),
    el("p", { class: "ref-input" }, `on the input ${inputText(entry.input)}`),
  ];
  if (withButton) {
    nodes.push(el("button", { type: "button", class: "small", "data-open-example": entry.name,
      "aria-label": `Open in the editor: the example of ${entry.name}`, onclick: () => openExample(entry) }, "Open in the editor"));
  }
  return nodes;
}

function openExample(entry) {
  $("reference").close();
  const source = `# The reference's example of ${entry.name}: ${entry.signature}\n${entry.example}\n`;
  onOpen({ title: `${entry.name} (reference)`, source, input: inputText(entry.input), output: null });
}

function matches(entry, words) {
  const text = `${entry.name} ${entry.signature} ${entry.meaning} ${entry.kind}`.toLowerCase();
  return words.every((w) => text.includes(w));
}

function renderList(all) {
  const words = $("reference-search").value.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = all.filter((e) => matches(e, words));
  $("reference-list").replaceChildren(...shown.map((e) => el("li", { "data-entry": e.name }, ...entryNodes(e, true))));
  $("reference-count").textContent = words.length ? `${shown.length} of ${all.length}` : `${all.length} names`;
}

export function initReference(open) {
  onOpen = open;
  $("reference-search").addEventListener("input", async () => renderList(await load()));
  $("reference-btn").addEventListener("click", () => {
    $("keys").close();
    openReference().catch((e) => { $("reference-count").textContent = e.message; });
  });
}

// Open the reference, searched for `query` (a name from the editor, or nothing).
export async function openReference(query = "") {
  $("reference-search").value = query;
  if (!$("reference").open) $("reference").showModal();
  renderList(await load());
  $("reference-search").focus();
}

// The editor's tooltip for a name: its entry (no button: the tooltip goes when the pointer leaves), or null.
export async function tooltipFor(name) {
  const entry = await entryFor(name);
  if (!entry) return null;
  return el("div", { class: "ref-tooltip", "data-entry": entry.name }, ...entryNodes(entry, false));
}
