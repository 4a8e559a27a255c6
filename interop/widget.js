// rasplay in a notebook: an anywidget front-end module that renders the page's own views (web/js/*.js,
// unchanged) from data computed in Python. The page modules come in the widget's state as text; each is
// linked here as a blob: module with its "./x.js" imports pointed at the others. The one module the
// page has that talks to the server, api.js, is replaced by a module answering from the widget's data
// (compile summary and run, overlay of trained attention), so nothing here needs a server or a network.
// Text reaches the DOM only through the page modules and textContent.

const IMPORT = /(\bfrom\s*|\bimport\s*\(?\s*)(["'])\.\/([\w.-]+\.js)\2/g;   // static and import("./x.js")

function apiModule(data) {
  const literal = JSON.stringify(JSON.stringify({ compiled: data.compiled || null, overlay: data.overlay || null }));
  return `const DATA = JSON.parse(${literal});
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error.message : String(status));
    this.status = status;
    this.body = body;
  }
}
const offline = (what) => async () => { throw new ApiError(0, { error: { kind: "offline",
  message: what + " needs the rasplay server; in a notebook, give it to rasplay.show" } }); };
export const evaluate = offline("evaluating");
export const examples = offline("the gallery");
export const example = offline("the gallery");
export const share = offline("sharing");
export const train = offline("training");
export const trainJob = offline("training");
export const cancelTrain = offline("training");
export const softStudy = offline("the soft-attention study");
export const compile = async () => ({ id: "notebook", summary: DATA.compiled.summary });
export const runModel = async () => DATA.compiled.run;
export const overlay = async () => DATA.overlay;
`;
}

function link(sources) {
  const urls = {};
  const visiting = new Set();
  const visit = (name) => {
    if (urls[name]) return urls[name];
    if (!(name in sources)) throw new Error(`rasplay widget: no module ${name}`);
    if (visiting.has(name)) throw new Error(`rasplay widget: import cycle through ${name}`);
    visiting.add(name);
    const text = sources[name].replace(IMPORT, (_, kw, q, dep) => `${kw}${q}${visit(dep)}${q}`);
    visiting.delete(name);
    urls[name] = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    return urls[name];
  };
  for (const name of Object.keys(sources)) visit(name);
  return urls;
}

function runPlotly(text) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
    script.onload = () => resolve();
    script.onerror = () => reject(new Error("plotly.js did not load"));
    document.head.append(script);
  });
}

// plotly.js and the layout engine (elkjs) once per notebook page: in no widget's state (a saved notebook
// would carry a copy per widget); the first widget asks its kernel for each and every other widget of the
// page waits for that copy. plotly.js only where a view needs it: the compiled and trained attention (the
// selector heatmap is the page's own SVG), so a notebook of plain views never asks for it. (A host that has them in the state, as the self-contained HTML file does, gives
// them directly.)
function shared(model, kind) {
  window.rasplayShared = window.rasplayShared || {};
  if (!window.rasplayShared[kind]) {
    const given = model.get(kind);
    const asked = given ? Promise.resolve(given) : new Promise((resolve) => {
      const answer = (msg) => {
        if (!msg || msg.kind !== kind) return;
        model.off("msg:custom", answer);
        resolve(msg.source);
      };
      model.on("msg:custom", answer);
      model.send({ kind });
    });
    window.rasplayShared[kind] = asked;
  }
  return window.rasplayShared[kind];
}

function loadPlotly(model) {
  if (window.Plotly) return Promise.resolve();
  if (!window.rasplayPlotly) {
    window.rasplayPlotly = shared(model, "plotly").then(runPlotly);
    window.rasplayPlotly.catch(() => { window.rasplayPlotly = null; });
  }
  return window.rasplayPlotly;
}

function node(tag, className, text) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (text !== undefined) n.textContent = text;
  return n;
}

function section(root, title, name) {
  const box = node("section", "rw-section");
  box.dataset.view = name;
  box.append(node("h2", "", title));
  root.append(box);
  return box;
}

async function render({ model, el }) {
  const data = model.get("data");
  const sources = { ...model.get("modules"), "api.js": apiModule(data), "elk.js": await shared(model, "elk") };
  const urls = link(sources);
  if (data.compiled || data.overlay || data.lengths) await loadPlotly(model);
  const [values, diagram, heatmap, docmodel, compile, train] = await Promise.all(
    ["values.js", "diagram.js", "heatmap.js", "docmodel.js", "compile.js", "train.js"].map((m) => import(urls[m])));

  const doc = data.doc;
  const root = node("div", "rasplay-widget");
  el.replaceChildren(root);
  const problems = doc.diagnostics.filter((d) => d.severity === "error");
  if (problems.length) {
    const list = node("ul", "rw-problems");
    for (const d of problems) list.append(node("li", "", `${d.line ? `line ${d.line}:${d.col}: ` : ""}${d.message}`));
    root.append(list);
  }

  const valuesBox = node("div", "values-box");
  section(root, "Values", "values").append(valuesBox);
  const diagramSection = section(root, "Layers × heads", "diagram");
  const totals = node("p", "note");
  const diagramBox = node("div", "diagram");
  diagramSection.append(totals, diagramBox);
  const heatmapSection = section(root, "Selector", "heatmap");
  // the same parts the page gives heatmap.showSelector: the plot inside the box that scrolls, the
  // keyboard cursor's read-out, and the room the fitted heatmap may take
  const scroller = node("div", "heatmap-scroll");
  const parts = { title: node("h3", "heatmap-title"), note: node("p", "note"), plot: node("div", "heatmap-plot"),
    below: node("div", "heatmap-below"), readout: node("p", "heatmap-cell"), scroller,
    box: () => { const width = scroller.clientWidth || 500; return { width, height: Math.max(260, Math.min(width, 560)) }; } };
  scroller.append(parts.plot);
  parts.readout.setAttribute("aria-live", "polite");
  heatmapSection.append(parts.title, parts.note, scroller, parts.readout, parts.below);

  const current = doc.trace ? doc.trace.input : 0;
  let selection = data.selection || docmodel.defaultSelection(doc);
  const opensHeatmap = (name) => {
    const id = docmodel.resolve(doc, name);
    return id !== null && docmodel.selectorOf(doc, id) !== null;
  };
  const draw = () => {
    const id = docmodel.resolve(doc, selection);
    const selectorId = id === null ? null : docmodel.selectorOf(doc, id);
    values.renderValues(valuesBox, doc, current, { onSelect: select, opensHeatmap, selection, presentLayer: null });
    diagram.renderDiagram(diagramBox, totals, doc, { onSelectHead: (selId) => select(`#${selId}`),
      selectedSelector: selectorId, presentLayer: null });
    heatmap.showSelector(doc, id === null ? -1 : id, parts);
  };
  function select(name) { selection = name; draw(); }
  draw();

  if (data.compiled) {
    compile.compiled.id = "notebook";
    compile.compiled.summary = data.compiled.summary;
    compile.compiled.run = data.compiled.run;
    const box = section(root, "Compiled model", "compiled");
    const summary = node("div", "compile-summary"), layout = node("div", "compile-layout");
    const attention = node("div", "compile-attention"), residual = node("div", "compile-residual");
    box.append(summary, layout, node("h3", "", "Compiled attention next to the selectors"), attention,
      node("h3", "", "Residual stream, decoded"), residual);
    compile.renderSummary(summary, layout);
    compile.renderAttention(attention, doc);
    compile.renderResidual(residual);
  }
  if (data.overlay) {
    const box = section(root, "Trained attention over the selectors", "trained");
    const overlay = node("div", "train-overlay");
    box.append(overlay);
    const name = data.overlay_name || "a trained model";
    await train.importMaps({ source: data.source }, { name, text: async () => "{}" });
    train.renderOverlay(overlay, data.compiled ? compile.compiledAttentionFor(doc) : null);
  }
  if (data.lengths) {
    // a training result with test lengths: accuracy by length, and where it breaks (web/js/lengths.js)
    const lengths = await import(urls["lengths.js"]);
    const box = section(root, "Longer inputs", "lengths");
    const chart = node("div", "lengths");
    box.append(chart);
    await lengths.renderLengths(chart, [{ label: "trained", events: [], result: data.lengths }]);
  }
  el.dataset.rendered = "1";
}

export default { render };
