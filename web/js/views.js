// The view registry: the one place the page learns of its views (the tabs Program, Compile, Train).
//
// A view declares itself once, as a plain object its own module exports, and main.js registers it
// (registerViews([...]), in tab order):
//
//   export const compileView = {
//     id: "compile",          // its panel is <div id="view-compile" role="tabpanel"> in index.html; its tab
//     label: "Compile",       //   (<button id="tab-compile" role="tab">, with this label) is made here
//     show() {},              // optional: its tab was opened (render what only it shows, e.g. a form)
//     render() {},            // optional: a new evaluation document is in state.doc (a promise is awaited)
//     clear(message) {},      // optional: nothing valid can be shown (a server error): empty what it shows
//     share: {                // optional: its part of a share link, the draft and a short link (state.js)
//       save(out) {},         //   add its keys to the link object (only those that differ from the default)
//       load(obj) {},         //   read them back into the state (absent keys: the default)
//     },
//   };
//
// So adding a view touches two places: its module (the object above and what it renders) and its panel
// in index.html (the markup inside <div id="view-ID">). The registry makes the tab, switches the panels
// (arrow keys move between tabs), keeps the open view in the link (`view`), renders every view on each
// new evaluation (run.js: renderViews), clears them (clearViews) and hands each view's share part to
// state.js. A link naming a view this page does not have opens the first one.

import { $, embedMode } from "./page.js";
import { addSharePart, saveHashSoon, state } from "./state.js";

const registered = [];

export function registerViews(views) {
  for (const view of views) {
    if (!view.id || !view.label) throw new Error("a view needs an id and a label");
    if (registered.some((v) => v.id === view.id)) throw new Error(`the view '${view.id}' is registered twice`);
    if (!$(`view-${view.id}`)) throw new Error(`the view '${view.id}' has no panel #view-${view.id} in index.html`);
    registered.push(view);
    if (view.share) addSharePart(view.share);
  }
  makeTabs();
}

export const viewIds = () => registered.map((v) => v.id);

function makeTabs() {
  const bar = document.querySelector("nav.tabs[role='tablist']");
  bar.replaceChildren(...registered.map((view) => {
    const tab = document.createElement("button");
    Object.assign(tab, { type: "button", id: `tab-${view.id}`, textContent: view.label });
    tab.setAttribute("role", "tab");
    tab.dataset.view = view.id;
    tab.setAttribute("aria-controls", `view-${view.id}`);
    $(`view-${view.id}`).setAttribute("aria-labelledby", tab.id);
    tab.addEventListener("click", () => showView(view.id));
    tab.addEventListener("keydown", (e) => {
      const step = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
      if (!step) return;
      e.preventDefault();
      const next = registered[(registered.indexOf(view) + step + registered.length) % registered.length];
      $(`tab-${next.id}`).focus();
      showView(next.id);
    });
    return tab;
  }));
  const shown = registered.find((v) => v.id === state.view) || registered[0];
  setSelected(shown.id);
}

function setSelected(id) {
  for (const view of registered) {
    const on = view.id === id;
    const tab = $(`tab-${view.id}`);
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`view-${view.id}`).hidden = !on;
  }
}

export function showView(id) {
  const view = registered.find((v) => v.id === id) || registered[0];
  state.view = view.id;
  setSelected(view.id);
  if (view.show) view.show();
  if (!embedMode) saveHashSoon();
}

// A new evaluation document is in state.doc: every view renders what it shows of it.
export async function renderViews() {
  await Promise.all(registered.filter((v) => v.render).map((v) => v.render()));
}

// Nothing valid to show for these inputs: every view empties what it shows, saying why.
export function clearViews(message) {
  for (const view of registered) if (view.clear) view.clear(message);
}
