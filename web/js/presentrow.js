// Presenter mode's view of the layer x head diagram: the stepped layer's boxes (its heads, then its MLP) as
// large cards that wrap to the panel's width, in the diagram's own words (diagram.js' model), each head a
// button that opens its heatmap beside; the whole diagram, fitted to the panel, is one click away
// ("Whole diagram") and back. Text only (textContent), no drawing of its own.

let whole = false;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "onclick") node.addEventListener("click", v);
    else node.setAttribute(k, v);
  }
  node.append(...children);
  return node;
}

function row(diagram) {
  let box = document.getElementById("present-row");
  if (!box) {
    box = el("div", { id: "present-row", class: "present-row", role: "group" });
    diagram.before(box);   // the page's #diagram, or a notebook widget's own diagram box
  }
  return box;
}

function toggle(diagram, rerender) {
  const button = el("button", { type: "button", class: "small whole-toggle", "aria-pressed": String(whole),
    "data-whole": whole ? "1" : "0" }, whole ? "Back to the layer" : "Whole diagram");
  button.addEventListener("click", () => { whole = !whole; rerender(); });
  return button;
}

function card(unit, { onSelectHead, selectedSelector }) {
  const lines = unit.lines.map((line, i) => el("span", { class: `card-line${i ? " small" : " card-name"}` }, line.text));
  if (unit.kind !== "head") return el("div", { class: "present-card mlp", "data-unit": unit.id }, ...lines);
  const { head } = unit;
  return el("button", { type: "button", class: "present-card head", "data-unit": unit.id,
    "data-selector": String(head.selector), "aria-pressed": String(head.selector === selectedSelector),
    title: unit.title, onclick: () => onSelectHead(head.selector) }, ...lines);
}

// Shows layer `layer`'s units as cards (presenter mode), or nothing when `layer` is null.
export function renderPresentRow(diagram, units, layer, layers, hooks, rerender) {
  const box = row(diagram);
  const presenting = layer !== null && layer !== undefined && layer >= 1 && layer <= layers;
  box.hidden = !presenting;
  diagram.classList.toggle("collapsed", presenting && !whole);
  diagram.dataset.fitHeight = presenting && whole ? "1" : "0";
  diagram.closest(".panel")?.classList.toggle("whole", presenting && whole);   // (a widget has no .panel)
  if (!presenting) { box.replaceChildren(); return; }
  const mine = units.filter((u) => u.row === layer && u.kind !== "embed");
  box.setAttribute("aria-label", `Layer ${layer} of ${layers}: its heads and MLP`);
  box.dataset.layer = String(layer);
  const cards = whole ? [] : mine.map((u) => card(u, hooks));
  box.replaceChildren(el("div", { class: "present-row-head" },
    el("span", { class: "present-row-title" }, whole ? `All ${layers} layers` : `Layer ${layer}`), toggle(diagram, rerender)),
  el("div", { class: "present-cards" }, ...cards));
}
