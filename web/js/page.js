// The page's shared parts: its elements, its mode (page or embed), the editor, the status line and the
// messages (toasts, notices). The run flow (run.js) sits above the views that start runs: main.js hands
// it in here (page.run, page.scheduleRun), so that no view imports the module that imports it.

import { el } from "./values.js";

export const $ = (id) => document.getElementById(id);
export const embedMode = location.pathname.replace(/\/+$/, "") === "/embed";
// `/embed?solve=1#x=ID`: an exercise embed a student solves in place (editable, with Check)
export const solveMode = embedMode && new URLSearchParams(location.search).has("solve");

export const page = {
  editor: null,             // the program editor (editor.js), once created
  presentLayer: null,       // presenter mode: the layer shown (null: not presenting)
  compileRequested: false,  // a link asked for the compiled view: compile once the program has run
  timings: [],              // each run's milliseconds (window.rasplay.timings)
  run: async () => {},      // run.js's runNow and scheduleRun, handed in by main.js
  scheduleRun: () => {},
};

let toastTimer = null;
// a click anywhere else puts the message away (it never stays over what the user turns to)
document.addEventListener("pointerdown", (e) => { if (!$("toast").contains(e.target)) $("toast").hidden = true; }, true);

export function setStatus(text) { $("status").textContent = text; }

// action: {label, run} adds a button (e.g. "Undo") that runs it and closes the toast; after: text after the link.
export function toast(message, link = null, action = null, after = "") {
  const box = $("toast");
  box.replaceChildren(document.createTextNode(message));
  if (link) box.append(" ", el("a", { href: link, target: "_blank", rel: "noopener" }, link));
  if (after) box.append(el("span", { class: "toast-after" }, after));
  if (action) {
    box.append(" ", el("button", { type: "button", class: "small", "data-action": action.label.toLowerCase(),
      onclick: () => { box.hidden = true; action.run(); } }, action.label));
  }
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, link || action ? 10000 : 5000);
}

// A message on the page itself (a link that could not be opened): stays until closed.
export function notice(message) {
  $("notice-text").textContent = message;
  $("notice").hidden = false;
}
