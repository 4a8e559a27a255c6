// The example gallery: every example with its title, description and tags; choosing one loads its
// program and input and runs it.

import * as api from "./api.js";
import { el } from "./values.js";

let cache = null;

export async function openGallery(dialog, list, onChoose) {
  if (!cache) cache = await api.examples();
  list.replaceChildren(...cache.map((ex) => el("li", {},
    el("button", { type: "button", "data-example": ex.id, onclick: async () => {
      dialog.close();
      onChoose(await api.example(ex.id));
    } },
    el("span", { class: "title" }, ex.title),
    el("span", { class: "desc" }, ex.description),
    el("span", { class: "tags" }, ex.tags.join(" · "))))));
  dialog.showModal();
  const first = list.querySelector("button");
  if (first) first.focus();
}
