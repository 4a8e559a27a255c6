// The guided tour: six short steps over the page itself (editing runs the program, the values, a selector's
// heatmap, the layers x heads diagram, "where did this value come from", the exercises). A card beside each
// part, the part outlined; Next / Back / Skip buttons, the arrow keys and Esc; focus stays in the card and
// goes back where it was when the tour ends. A first visit (the page opened with no link and no draft) is
// offered the tour once, in a message; finishing or skipping it is remembered (localStorage), and Help
// reopens it. Everything is on the page: no request.

const $ = (id) => document.getElementById(id);
const KEY = "rasplay.tour.v1";   // "offered" once offered, "done" once finished or skipped

const STEPS = [
  { target: "editor", title: "Edit, and it runs",
    text: "Write RASP here: the page runs the program as you type (Ctrl+Enter runs it at once). Problems show " +
      "under the editor with their line and column." },
  { target: "values", title: "The values",
    text: "Every named s-op on the current input: one column per token, and the layer it needs. Change the " +
      "input under the editor, or add another with + input." },
  { target: "heatmap-scroll", title: "A selector's heatmap",
    text: "One row per query position, one column per key: a marked cell is a key the query selects (attends " +
      "to); the column on the right counts them. Click a selector's name or a head to show it here." },
  { target: "diagram", title: "Layers × heads",
    text: "How a transformer runs the program: one row per layer, a box per attention head (its selector) and " +
      "the MLP for the work done position by position. Click a head to open its heatmap." },
  { target: "values", title: "Where did this value come from?",
    text: "Click any value in the table: the cells, heads and layers it was read from light up, and the bar " +
      "above the values steps back one layer at a time." },
  { target: "exercises-btn", title: "Exercises",
    text: "Tasks with a budget of layers and heads; Check runs your program against a hidden reference and " +
      "shows a counterexample. Help (?) opens this tour again." },
];

let step = -1;
let returnFocus = null;

function remember(value) {
  try { localStorage.setItem(KEY, value); } catch (e) { /* private mode: not remembered */ }
}

function remembered() {
  try { return localStorage.getItem(KEY); } catch (e) { return "done"; }
}

// The card beside its part: below it, else to its left or right, else above, else over its top.
function place(card, target) {
  const r = target.getBoundingClientRect();
  const w = card.offsetWidth, h = card.offsetHeight, gap = 10, W = window.innerWidth, H = window.innerHeight;
  const clampTop = (t) => Math.min(Math.max(t, 8), H - h - 8);
  const clampLeft = (l) => Math.min(Math.max(l, 8), W - w - 8);
  let top, left;
  if (r.bottom + gap + h <= H - 8) [top, left] = [r.bottom + gap, clampLeft(r.left)];
  else if (r.left - gap - w >= 8) [top, left] = [clampTop(r.top), r.left - gap - w];
  else if (r.right + gap + w <= W - 8) [top, left] = [clampTop(r.top), r.right + gap];
  else if (r.top - gap - h >= 8) [top, left] = [r.top - gap - h, clampLeft(r.left)];
  else [top, left] = [clampTop(r.top + gap), clampLeft(r.left)];
  card.style.top = `${Math.round(top)}px`;
  card.style.left = `${Math.round(left)}px`;
}

function show(i) {
  const card = $("tour");
  document.querySelectorAll(".tour-target").forEach((n) => n.classList.remove("tour-target"));
  step = i;
  const s = STEPS[i];
  const target = $(s.target);
  $("tour-title").textContent = s.title;
  $("tour-text").textContent = s.text;
  $("tour-step").textContent = `${i + 1} of ${STEPS.length}`;
  $("tour-back").disabled = i === 0;
  $("tour-next").textContent = i === STEPS.length - 1 ? "Done" : "Next";
  card.dataset.step = String(i + 1);
  card.hidden = false;
  target.classList.add("tour-target");
  target.scrollIntoView({ block: "nearest" });
  place(card, target);
  $("tour-next").focus();
}

export function endTour() {
  if (step < 0) return;
  step = -1;
  $("tour").hidden = true;
  document.querySelectorAll(".tour-target").forEach((n) => n.classList.remove("tour-target"));
  remember("done");
  if (returnFocus && document.contains(returnFocus)) returnFocus.focus();
}

export function startTour() {
  returnFocus = document.activeElement;
  const program = $("tab-program");   // the steps are in the Program view
  if (program && program.getAttribute("aria-selected") !== "true") program.click();
  show(0);
}

export function initTour() {
  $("tour-next").addEventListener("click", () => (step === STEPS.length - 1 ? endTour() : show(step + 1)));
  $("tour-back").addEventListener("click", () => { if (step > 0) show(step - 1); });
  $("tour-skip").addEventListener("click", endTour);
  $("tour-btn").addEventListener("click", () => { $("keys").close(); startTour(); });
  $("tour").addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); endTour(); }
    else if (e.key === "ArrowRight" && step < STEPS.length - 1) { e.preventDefault(); show(step + 1); }
    else if (e.key === "ArrowLeft" && step > 0) { e.preventDefault(); show(step - 1); }
    else if (e.key === "Tab") {   // focus stays in the card while the tour is open
      const buttons = [...$("tour").querySelectorAll("button:not(:disabled)")];
      const i = buttons.indexOf(document.activeElement);
      const next = e.shiftKey ? (i <= 0 ? buttons.length - 1 : i - 1) : (i + 1) % buttons.length;
      e.preventDefault();
      buttons[next].focus();
    }
  });
  window.addEventListener("resize", () => { if (step >= 0) place($("tour"), $(STEPS[step].target)); });
}

// A first visit: offer the tour once (a message with a button; it never covers the page's controls for long).
export function offerTour(toast) {
  if (remembered()) return;
  remember("offered");
  toast("New here? A one-minute tour shows what this page does.", null, { label: "Take the tour", run: startTour });
}
