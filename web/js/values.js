// The values table: every named s-op on the current input, one row per name, one column per
// position, the tokens as the header, each row tagged with its layer (the REPL's full display, live).

// Whitespace tokens get a visible symbol (a space would be a blank label).
const WHITESPACE = { " ": "␣", "\t": "⇥", "\n": "↵", "\r": "␍" };

export function formatValue(v) {
  if (v === null || v === undefined) return "·";
  if (v === "") return '""';   // an empty string: a visible mark, not a blank cell
  if (typeof v === "string" && v !== "" && v.trim() === "") return [...v].map((c) => WHITESPACE[c] || "·").join("");
  if (typeof v === "boolean") return v ? "T" : "F";
  if (typeof v === "number" && !Number.isInteger(v)) return String(Math.round(v * 1000) / 1000);
  return String(v);
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}
export { el };

// opensHeatmap(name) says whether clicking the name can show attention (aggregates, selector widths).
export function renderValues(container, doc, current, { onSelect, opensHeatmap, selection, presentLayer }) {
  container.replaceChildren();
  if (!doc) return;
  const tokens = doc.inputs[current] || [];
  const rows = Object.entries(doc.results).filter(([, r]) => r.kind === "sop");
  if (!rows.length) {
    container.append(el("p", { class: "empty" }, "The program defines no s-ops yet."));
    return;
  }
  const table = el("table", { class: "values-table", "aria-label": "Values of every s-op" });
  const head = el("tr", {}, el("th", { class: "name", scope: "col" }, "name"));
  tokens.forEach((t, i) => head.append(el("th", { scope: "col", title: `position ${i}` }, formatValue(t))));
  head.append(el("th", { class: "layer", scope: "col" }, "layer"));
  table.append(el("thead", {}, head));
  const body = el("tbody");
  for (const [name, r] of rows) {
    const values = r.values[current];
    const error = r.errors[current];
    const nameCell = el("th", { class: "name", scope: "row" });
    if (opensHeatmap(name)) {
      nameCell.append(el("button", { type: "button", onclick: () => onSelect(name), title: `show the attention of ${name}` }, name));
    } else {
      nameCell.append(el("span", { class: "plain" }, name));
    }
    const tr = el("tr", { "data-name": name, "data-layer": String(r.layer) }, nameCell);
    if (error) {
      tr.classList.add("row-error");
      tr.append(el("td", { class: "err", colspan: String(Math.max(tokens.length, 1)) }, error));
    } else {
      values.forEach((v) => tr.append(el("td", {}, formatValue(v))));
    }
    tr.append(el("td", { class: "layer" }, `L${r.layer}`));
    if (name === selection) tr.classList.add("selected");
    if (presentLayer !== null && presentLayer !== undefined) {
      tr.classList.add(r.layer === presentLayer ? "hot" : r.layer > presentLayer ? "dim" : "past");
    }
    body.append(tr);
  }
  table.append(body);
  container.append(table);
}
