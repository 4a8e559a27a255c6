// The playground state and the URL hash that holds it.
// Link format (docs/api.md, "Links"): `#v1=` + base64url (no padding) of raw-deflate of UTF-8 JSON
// {"source", "inputs", "view", "selection", "current", "compiled", "exercise"}; only source is required,
// unknown keys are ignored; `exercise` (an exercise id) opens the program as an attempt at that exercise.
// The same object is kept in localStorage as the draft, so a reload never loses work.

export const state = {
  source: "",
  inputs: ["hello"],   // strings as typed: a JSON list when it starts with "["
  current: 0,          // index of the input the values table and heatmaps show
  view: "program",
  selection: null,     // a result name, or "#<node id>" for an unnamed selector
  compiled: false,     // the Compile tab has compiled this program (a link re-compiles it)
  doc: null,           // the last evaluation document
  exercise: null,      // the exercise being solved (GET /exercises/{id}), or null
  check: null,         // its last check result, with the source it checked
};

// A link that cannot be opened: `message` says why, for the page.
export class LinkError extends Error {}

function toBase64Url(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(b64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

export async function encodeState(obj) {
  const json = new TextEncoder().encode(JSON.stringify(obj));
  return toBase64Url(await pipe(json, new CompressionStream("deflate-raw")));
}

export async function decodeState(text) {
  let obj;
  try {
    const raw = await pipe(fromBase64Url(text), new DecompressionStream("deflate-raw"));
    obj = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(raw));
  } catch (e) {
    throw new LinkError("this link is incomplete or damaged (perhaps cut off when it was copied)");
  }
  if (!obj || typeof obj.source !== "string") throw new LinkError("this link holds no program");
  return obj;
}

// The parts of a link that belong to a view ({save(out), load(obj)}: the Program view's `selection`, the
// Compile view's `compiled`), handed in by the view registry (views.js); and the exercise's `exercise`
// (exercises.js: save only, since entering an exercise asks the server, navigation.js does it).
const shareParts = [];
export function addSharePart(part) { shareParts.push(part); }

// The shareable part of the state, with inputs as the link format wants them (strings or lists).
export function shareable() {
  const out = { source: state.source, inputs: state.inputs.map(parseInputText).map((x) => x.value), view: state.view };
  if (state.current) out.current = state.current;
  for (const part of shareParts) part.save(out);
  return out;
}

export function applyShared(obj) {
  state.source = obj.source;
  if (Array.isArray(obj.inputs) && obj.inputs.length) {
    state.inputs = obj.inputs.map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
  }
  if (typeof obj.view === "string") state.view = obj.view;
  const current = Number.isInteger(obj.current) ? obj.current : 0;
  state.current = Math.max(0, Math.min(current, state.inputs.length - 1));
  for (const part of shareParts) if (part.load) part.load(obj);
}

export async function linkFor(obj, path = "/") {
  return `${location.origin}${path}#v1=${await encodeState(obj)}`;
}

// The state in the address bar's hash: null when there is none, a LinkError when it cannot be read.
export async function readHash() {
  const hash = location.hash;
  if (!hash || hash === "#") return null;
  const m = hash.match(/^#v(\d+)=(.*)$/s);
  if (!m) return null;   // some other fragment: not ours
  if (m[1] !== "1") throw new LinkError(`this link is in a format (v${m[1]}) made by a newer rasplay`);
  if (!m[2]) throw new LinkError("this link is empty after #v1= (perhaps cut off when it was copied)");
  if (!/^[A-Za-z0-9_-]+$/.test(m[2])) {
    throw new LinkError("this link is damaged: it holds characters a rasplay link never has");
  }
  return decodeState(m[2]);
}

// While a broken link is shown, the address bar keeps it (so it can be copied into a bug report)
// until the user changes something.
let addressLocked = false;
export function lockAddress(on) { addressLocked = on; }

let hashTimer = null;

// The address of what is on screen: an exercise's link, or the program's state.
async function addressFragment() {
  return state.exercise ? `#x=${state.exercise.id}` : `#v1=${await encodeState(shareable())}`;
}

// How many delayed address writes have settled (kept or written): `data-address-writes` on <body>, so a
// test waits for the write itself rather than for a time longer than its delay.
let addressWrites = 0;

async function writeAddress() {
  saveDraft();
  if (!addressLocked) {
    const fragment = await addressFragment();
    if (location.hash !== fragment) history.replaceState(null, "", location.pathname + fragment);
  }
  document.body.dataset.addressWrites = String(++addressWrites);
}

export function saveHashSoon() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(writeAddress, 300);
}

// The address changed under us (Back, Forward, a typed link): a pending write of the state shown
// until now must not land in the entry the browser moved to.
export function cancelAddressWrite() {
  clearTimeout(hashTimer);
}

// Write the state on screen into the current history entry now (not in 300 ms), so that Back to
// this entry returns to it: called before a new program replaces it.
export async function settleAddress() {
  clearTimeout(hashTimer);
  await writeAddress();
}

// A new history entry for a new program (an example loaded): Back returns to the previous one.
export async function pushState() {
  clearTimeout(hashTimer);
  addressLocked = false;
  saveDraft();
  const fragment = await addressFragment();
  if (location.hash !== fragment) history.pushState(null, "", location.pathname + fragment);
}

// ------------------------------------------------------------------ the local draft

const DRAFT_KEY = "rasplay.draft.v1";

export function saveDraft() {
  if (state.exercise) return;   // an exercise keeps its own draft (exercises.js), apart from this one
  try {
    localStorage.setItem(DRAFT_KEY, JSON.stringify({ ...shareable(), saved: Date.now() }));
  } catch (e) { /* storage full or disabled (private window): the hash still holds the state */ }
}

export function loadDraft() {
  try {
    const obj = JSON.parse(localStorage.getItem(DRAFT_KEY) || "null");
    return obj && typeof obj.source === "string" ? obj : null;
  } catch (e) {
    return null;
  }
}

// An input as typed: "[1, 2]" is a JSON list of tokens, anything else a string of characters.
export function parseInputText(text) {
  const t = text.trim();
  if (t.startsWith("[")) {
    try {
      const value = JSON.parse(t);
      if (Array.isArray(value)) return { value, error: null };
    } catch (e) {
      return { value: text, error: `not a JSON list (${e.message}); read as characters` };
    }
  }
  return { value: text, error: null };
}
