// Reading an evaluation document: graph nodes, their inputs, traced values, heads and layers.

export function graphIndex(doc) {
  if (doc._index) return doc._index;
  const nodes = new Map(doc.analysis.graph.nodes.map((n) => [n.id, n]));
  const inputs = new Map();   // node id -> {role: child id}
  const users = new Map();    // node id -> [parent ids]
  for (const e of doc.analysis.graph.edges) {
    if (!inputs.has(e.target)) inputs.set(e.target, {});
    inputs.get(e.target)[e.role] = e.source;
    if (!users.has(e.source)) users.set(e.source, []);
    users.get(e.source).push(e.target);
  }
  const byName = new Map();
  for (const n of nodes.values()) for (const name of n.names) byName.set(name, n.id);
  doc._index = { nodes, inputs, users, byName };
  return doc._index;
}

// What a graph node is comes with it from the engine (its `role`): the page keeps no list of kinds.
export const isSelector = (node) => Boolean(node) && node.role === "selector";
export const isAttention = (node) => Boolean(node) && node.role === "attention";

// "name" or "#id" -> node id
export function resolve(doc, selection) {
  if (!doc || !selection) return null;
  if (selection.startsWith("#")) return Number(selection.slice(1));
  const id = graphIndex(doc).byName.get(selection);
  return id === undefined ? null : id;
}

// The selector to show for a node: itself, or the selector an aggregate / selector_width uses.
export function selectorOf(doc, id) {
  const { nodes, inputs } = graphIndex(doc);
  const node = nodes.get(id);
  if (!node) return null;
  if (isSelector(node)) return id;
  if (isAttention(node)) return inputs.get(id).selector;
  return null;
}

export function traced(doc, id) {
  const t = doc.trace && doc.trace.nodes[String(id)];
  return t && t.values ? t.values : null;
}

export function displayName(doc, id) {
  const n = graphIndex(doc).nodes.get(id);
  return n ? n.name : `#${id}`;
}

// aggregates / selector_widths that read this selector
export function usersOfSelector(doc, selectorId) {
  const { nodes, users } = graphIndex(doc);
  return (users.get(selectorId) || []).map((id) => nodes.get(id)).filter(isAttention);
}

// The default thing to show: the selector of the last named aggregate, else the first named selector.
export function defaultSelection(doc) {
  const names = Object.keys(doc.results);
  for (const name of [...names].reverse()) {
    const id = resolve(doc, name);
    if (id !== null && selectorOf(doc, id) !== null && isAttention(graphIndex(doc).nodes.get(id))) return name;
  }
  for (const name of names) if (doc.results[name].kind === "selector") return name;
  const head = doc.analysis.heads.flat()[0];
  return head ? `#${head.selector}` : null;
}
