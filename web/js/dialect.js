// The dialect line beside the layer count: the smallest fragment the program's output belongs to (B-RASP,
// C-RASP, TL[#], length-free or RASP, from the engine's dialect check in POST /analyze), the theorem it
// invokes in one sentence, and why it is not in the next smaller fragment (with the line). Text only.

import * as api from "./api.js";

let seq = 0;

function box() {
  let node = document.getElementById("dialect");
  if (!node) {
    node = document.createElement("p");
    node.id = "dialect";
    node.className = "dialect-note";
    node.setAttribute("aria-live", "polite");
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
  try {
    const doc = await api.analyze(source);
    if (mine !== seq) return;
    const d = doc.dialect;
    if (!d) { node.hidden = true; return; }
    const smaller = d.fragments.filter((f) => !f.member);
    const why = smaller.length ? smaller[smaller.length - 1] : null;
    const name = document.createElement("strong");
    name.textContent = `${d.smallest_name}${d.causal.member ? ", causal" : ""}`;
    const theorem = document.createElement("span");
    theorem.textContent = `: ${d.theorem}`;
    const parts = [name, theorem];
    if (why) {
      const reason = document.createElement("span");
      reason.className = "dialect-reason";
      reason.textContent = ` Not ${why.name}${why.line ? ` (line ${why.line})` : ""}: ${why.reason}.`;
      parts.push(reason);
    }
    node.replaceChildren(...parts);
    node.dataset.fragment = d.smallest;
    node.hidden = false;
  } catch (e) {
    if (mine === seq) node.hidden = true;
  }
}
