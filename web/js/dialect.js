// The dialect line under the diagram's totals: one short line in plain words ("Runs at any length when
// compiled: yes", or "no guarantee from this program (line 12)"), from the engine's summary of its dialect
// check (POST /analyze, engine/dialect_summary.py); the fragment, its theorem and why the program is not in
// the next smaller fragment open on demand (a disclosure). In an exercise the line is hidden unless the
// exercise asks for a fragment (its `fragment` field): a correct solution is not a complaint. Text only.

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
    const summary = el("summary", "dialect-headline", s.headline);
    const body = el("div", "dialect-details");
    const fragment = el("p");
    fragment.append(el("strong", "", s.fragment), `: ${s.theorem}`);
    body.append(fragment);
    if (s.why) body.append(el("p", "dialect-reason", s.why));
    const open = node.open;   // a re-run keeps it as the student left it
    node.replaceChildren(summary, body);
    node.open = open;
    Object.assign(node.dataset, { fragment: d.smallest, anyLength: String(s.any_length), headline: s.headline });
    node.hidden = false;
  } catch (e) {
    if (mine === seq) node.hidden = true;
  }
}
