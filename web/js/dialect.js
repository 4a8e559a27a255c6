// The dialect line under the diagram's totals: one short line in plain words ("Runs at any length when
// compiled: yes", or "no guarantee from this program (line 12)"), from the engine's summary of its dialect
// check (POST /analyze, engine/dialect_summary.py); the fragment, its theorem, why the program is not in
// the next smaller fragment and what the length-generalisation results predict open on demand (a disclosure). In an
// exercise the line is hidden unless the exercise asks for a fragment (its `fragment` field): a correct solution is
// not a complaint; one that asks says whether the program is in that fragment ("In C-RASP, as this exercise asks:
// yes"). Text only.

import * as api from "./api.js";
import { state } from "./state.js";

let seq = 0;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function box() {
  let node = document.getElementById("dialect");
  if (!node) {
    node = el("details", "dialect-note");
    node.id = "dialect";
    node.hidden = true;
    const totals = document.getElementById("diagram-totals");
    const row = totals && totals.closest(".panel-title");
    if (row) row.after(node);
    else document.body.append(node);
  }
  return node;
}

// What the length-generalisation results say of the program (engine/dialect/prediction.py, docs/dialects.md):
// the engine's one line, then each fragment's statement, with the line that keeps the program out.
function lengthGeneralization(lg) {
  const part = el("div", "dialect-lengthgen");
  part.append(el("p", "", lg.summary));
  const list = el("ul");
  for (const f of lg.fragments) {
    const item = el("li");
    item.append(el("strong", "", f.name), `: ${f.statement}`);
    if (!f.member && f.reason) item.append(el("span", "dialect-reason", ` ${f.reason}`));
    list.append(item);
  }
  part.append(list);
  return part;
}

// In an exercise that asks for a fragment: whether the program is in it, from the dialect document's entry
// for that fragment ({headline, member, reason}); null otherwise.
function askedFragment(d) {
  const id = state.exercise && state.exercise.fragment;
  const entry = id && (d.fragments || []).find((f) => f.id === id);
  if (!entry) return null;
  const where = entry.line ? ` (line ${entry.line})` : "";
  return {
    member: entry.member,
    headline: `In ${entry.name}, as this exercise asks: ${entry.member ? "yes" : `no${where}`}`,
    reason: entry.member ? "" : `Not ${entry.name}${where}: ${entry.reason || "outside it"}.`,
  };
}

// Ask the engine which fragment `source` is in and show it; a failed request hides the line.
export async function showDialect(source) {
  const mine = ++seq;
  const node = box();
  if (state.exercise && !state.exercise.fragment) {   // an exercise that asks for no fragment: no line
    node.hidden = true;
    node.dataset.fragment = "";
    return;
  }
  try {
    const doc = await api.analyze(source);
    if (mine !== seq) return;
    const d = doc.dialect;
    if (!d || !d.summary) { node.hidden = true; return; }
    const s = d.summary;
    const asked = askedFragment(d);
    const summary = el("summary", "dialect-headline", asked ? asked.headline : s.headline);
    const body = el("div", "dialect-details");
    if (asked && asked.reason) body.append(el("p", "dialect-reason", asked.reason));
    const fragment = el("p");
    fragment.append(el("strong", "", s.fragment), `: ${s.theorem}`);
    body.append(fragment);
    if (s.why) body.append(el("p", "dialect-reason", s.why));
    if (d.length_generalization) body.append(lengthGeneralization(d.length_generalization));
    const open = node.open;   // a re-run keeps it as the student left it
    node.replaceChildren(summary, body);
    node.open = open;
    Object.assign(node.dataset, { fragment: d.smallest, anyLength: String(s.any_length), headline: summary.textContent,
      asked: asked ? String(asked.member) : "" });
    node.hidden = false;
  } catch (e) {
    if (mine === seq) node.hidden = true;
  }
}
