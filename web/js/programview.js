// The Program view: problems list, inputs, values table, layer x head diagram, selector chips and heatmap,
// rendered from the evaluation document (state.doc); selecting a name or a head shows its selector.

import { renderDiagram } from "./diagram.js";
import { defaultSelection, graphIndex, isAttention, isSelector, resolve, selectorOf } from "./docmodel.js";
import { decorateValues } from "./exercises.js";
import { heatmapView, showSelector } from "./heatmap.js";
import { renderHeadGrid } from "./headgrid.js";
import { $, embedMode, page } from "./page.js";
import { applyProvenance } from "./provenance.js";
import { lockAddress, parseInputText, saveHashSoon, state } from "./state.js";
import { el, renderValues } from "./values.js";

export function showProblems(diagnostics) {
  const list = $("problems");
  list.replaceChildren(...diagnostics.map((d) => {
    const where = d.line ? `${d.line}:${d.col} ` : "";
    const li = el("li", { class: d.severity, tabindex: "0" }, `${where}${d.severity}: ${d.message}`);
    if (d.line) {
      const go = () => page.editor.goTo(d.line, d.col);
      li.addEventListener("click", go);
      li.addEventListener("keydown", (e) => { if (e.key === "Enter") go(); });
    }
    return li;
  }));
}

function opensHeatmap(name) {
  const id = resolve(state.doc, name);
  if (id === null) return false;
  const node = graphIndex(state.doc).nodes.get(id);
  return isAttention(node) || isSelector(node);
}

function currentSelector() {
  const doc = state.doc;
  let id = resolve(doc, state.selection);
  if (id === null || selectorOf(doc, id) === null) {
    state.selection = defaultSelection(doc);
    id = resolve(doc, state.selection);
  }
  return id === null ? null : selectorOf(doc, id);
}

// The room the fitted heatmap may take: the panel's width, and the height left in its column.
function heatmapBox() {
  const scroller = $("heatmap-scroll");
  const width = scroller.clientWidth || 500;
  const presenting = document.body.classList.contains("presenting");
  // two columns: down to the window's bottom edge (the heatmap shows without scrolling), else 70% of it
  const column = scroller.closest(".right");
  const top = scroller.getBoundingClientRect().top + (column ? column.scrollTop : 0);
  const onScreen = window.innerWidth > 980 ? window.innerHeight - top - 16 : window.innerHeight * 0.7;
  const height = presenting ? scroller.clientHeight : Math.max(200, Math.min(width, onScreen));
  // presenter mode: labels readable from the back of a room (24 px at 1920 wide, scaled below)
  const font = presenting ? Math.round(Math.max(16, Math.min(24, window.innerWidth / 80))) : null;
  return { width, height: Math.max(height, 160), tight: presenting, font };
}

export function setZoom(on) {
  heatmapView.zoom = on;
  $("heatmap-fit").setAttribute("aria-checked", String(!on));
  $("heatmap-zoom").setAttribute("aria-checked", String(on));
  if (state.doc) renderHeatmap();
}

export function renderHeatmap() {
  const id = resolve(state.doc, state.selection);
  return showSelector(state.doc, id === null ? -1 : id, {
    plot: $("heatmap-plot"), title: $("heatmap-title"), note: $("heatmap-note"), below: $("heatmap-below"),
    scroller: $("heatmap-scroll"), readout: $("heatmap-cell"), box: heatmapBox, onZoom: () => setZoom(true),
    list: $("heatmap-list"),
  });
}

// Every named selector and every head, as buttons above the heatmap.
function renderChips(selectorId) {
  const doc = state.doc;
  const { nodes } = graphIndex(doc);
  const seen = new Set();
  const chips = [];
  const add = (id, label) => {
    if (seen.has(id)) return;
    seen.add(id);
    const node = nodes.get(id);
    const where = node.head !== null && node.head !== undefined ? `L${node.layer} h${node.head}` : `L${node.layer}`;
    const button = el("button", { type: "button", "aria-pressed": String(id === selectorId), "data-selector": String(id),
      onclick: () => select(node.names[0] || `#${id}`, id) }, label, el("span", { class: "where" }, where));
    chips.push(button);
  };
  for (const [name, r] of Object.entries(doc.results)) if (r.kind === "selector") add(resolve(doc, name), name);
  for (const head of doc.analysis.heads.flat()) add(head.selector, head.display || head.name);
  $("selector-chips").replaceChildren(...chips);
}

export function renderAll() {
  const doc = state.doc;
  if (!doc) return;
  page.editor.setDiagnostics(doc.diagnostics);
  showProblems(doc.diagnostics);
  renderInputs();
  const selectorId = currentSelector();
  renderValues($("values"), doc, state.current, {
    onSelect: select, opensHeatmap, selection: state.selection, presentLayer: page.presentLayer,
  });
  decorateValues($("values"));
  const laidOut = renderDiagram($("diagram"), $("diagram-totals"), doc, {
    onSelectHead: (selId) => select(`#${selId}`, selId), selectedSelector: selectorId, presentLayer: page.presentLayer,
    rerender: () => renderAll(),   // presenter mode's "Whole diagram" changes the heatmap's room too
  });
  renderChips(selectorId);
  renderHeatmap();
  renderHeadGrid(doc, { openSelector: (selId) => select(`#${selId}`, selId), selectedSelector: selectorId });
  applyProvenance();
  // the diagram's layout (elkjs) arrives after the render: label it for assistive technology then, and fit
  // the heatmap again when the laid-out diagram moved it (the heatmap takes the room left below it)
  const top = $("heatmap-scroll").getBoundingClientRect().top;
  return Promise.resolve(laidOut).then(() => {
    labelDiagram($("diagram"));
    if (state.doc === doc && Math.abs($("heatmap-scroll").getBoundingClientRect().top - top) > 8) {
      renderHeatmap();
      applyProvenance();
    }
  });
}

// The diagram for assistive technology: a group (its head boxes are buttons, so not one image); a head
// box is named by the text it shows first (so speech input can say what it sees), then by what the
// diagram says of it (layer, head, full expression).
function labelDiagram(box) {
  const svg = box.querySelector("svg");
  if (svg) svg.setAttribute("role", "group");
  for (const g of box.querySelectorAll(".head-box")) {
    if (g.dataset.labelled) continue;
    // a trailing space ends each line (SVG does not draw it), so the lines read as words, not run together
    const texts = [...g.querySelectorAll("text")];
    texts.forEach((t) => { t.textContent = `${t.textContent.trimEnd()} `; });
    const shown = texts.map((t) => t.textContent).join("").trim();
    const said = g.getAttribute("aria-label");
    g.setAttribute("aria-label", said ? `${shown} (${said})` : `${shown}, layer ${g.dataset.layer}`);
    g.dataset.labelled = "1";
  }
}

export function select(selection, selectorId = null) {
  state.selection = selection;
  const doc = state.doc;
  if (selectorId === null) {
    const id = resolve(doc, selection);
    selectorId = id === null ? null : selectorOf(doc, id);
  }
  // prefer the selector's own name when it has one
  if (selectorId !== null) {
    const node = graphIndex(doc).nodes.get(selectorId);
    if (selection.startsWith("#") && node.names.length) state.selection = node.names[0];
  }
  lockAddress(false);
  renderAll();
  heatmapIntoView();
  if (!embedMode) saveHashSoon();
}

// A click changed the heatmap: bring it into view when its top is off screen or too low to see
// (a 3-4 layer diagram pushes it below the fold at 1366x768, the exercise panel further).
function heatmapIntoView() {
  const panel = $("heatmap-title").closest(".panel");
  if (!panel || document.body.classList.contains("presenting")) return;
  const r = panel.getBoundingClientRect(), plot = $("heatmap-plot").getBoundingClientRect();
  if (r.top < 0 || plot.top + Math.min(plot.height, 240) > window.innerHeight) panel.scrollIntoView({ block: "start" });
}

export function renderInputs() {
  const box = $("inputs");
  const focused = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.index : null;
  box.replaceChildren(...state.inputs.map((text, i) => {
    const parsed = parseInputText(text);
    const row = el("div", { class: `input-row${i === state.current ? " current" : ""}` });
    const radio = el("input", { type: "radio", name: "current-input", "aria-label": `show input ${i + 1}` });
    radio.checked = i === state.current;
    radio.addEventListener("change", () => { state.current = i; lockAddress(false); page.run(); });
    const field = el("input", { type: "text", value: text, "data-index": String(i), spellcheck: "false",
      "aria-label": `input ${i + 1}`, autocomplete: "off" });
    field.value = text;
    field.addEventListener("input", () => { state.inputs[i] = field.value; state.current = i; page.scheduleRun(); });
    field.addEventListener("keydown", (e) => { if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); page.run(); } });
    row.append(radio, field);
    if (state.inputs.length > 1 && !embedMode) {   // the embed is read-only: its inputs stay
      row.append(el("button", { type: "button", class: "small", "aria-label": `remove input ${i + 1}`, onclick: () => {
        state.inputs.splice(i, 1);
        state.current = Math.min(state.current, state.inputs.length - 1);
        lockAddress(false);
        page.run();
      } }, "✕"));
    }
    if (parsed.error) row.append(el("span", { class: "input-error" }, parsed.error));
    return row;
  }));
  if (focused !== null && focused !== undefined) {
    const field = box.querySelector(`input[data-index="${focused}"]`);
    if (field) { field.focus(); field.setSelectionRange(field.value.length, field.value.length); }
  }
}

// Nothing valid to show for these inputs (an input over a limit, a server error): clear the views.
function clearProgram(message) {
  $("values").replaceChildren(el("p", { class: "empty error" }, message));
  $("diagram").replaceChildren();
  $("diagram-totals").textContent = "";
  $("selector-chips").replaceChildren();
  $("heatmap-plot").hidden = true;
  $("heatmap-below").replaceChildren();
  $("heatmap-note").textContent = message;
  $("heatmap-title").textContent = "Selector";
}

// The Program view in the view registry (views.js): its part of a link is the selection (the heatmap's).
export const programView = {
  id: "program",
  label: "Program",
  render: renderAll,
  clear: clearProgram,
  share: {
    save(out) { if (state.selection) out.selection = state.selection; },
    load(obj) { state.selection = typeof obj.selection === "string" ? obj.selection : null; },
  },
};
