// The playground state and the URL hash that holds it.
// Link format (DESIGN section 8): `#v1=` + base64url (no padding) of raw-deflate of UTF-8 JSON
// {"source", "inputs", "view", "selection"}; only source is required, unknown keys are ignored.

export const state = {
  source: "",
  inputs: ["hello"],   // strings as typed: a JSON list when it starts with "["
  current: 0,          // index of the input the values table and heatmaps show
  view: "program",
  selection: null,     // a result name, or "#<node id>" for an unnamed selector
  doc: null,           // the last evaluation document
  exercise: null,      // the exercise being solved (GET /exercises/{id}), or null
  check: null,         // its last check result, with the source it checked
};

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
  const raw = await pipe(fromBase64Url(text), new DecompressionStream("deflate-raw"));
  const obj = JSON.parse(new TextDecoder().decode(raw));
  if (!obj || typeof obj.source !== "string") throw new Error("the link has no program");
  return obj;
}

// The shareable part of the state, with inputs as the link format wants them (strings or lists).
export function shareable() {
  const out = { source: state.source, inputs: state.inputs.map(parseInputText).map((x) => x.value), view: state.view };
  if (state.selection) out.selection = state.selection;
  return out;
}

export function applyShared(obj) {
  state.source = obj.source;
  if (Array.isArray(obj.inputs) && obj.inputs.length) {
    state.inputs = obj.inputs.map((x) => (typeof x === "string" ? x : JSON.stringify(x)));
  }
  if (typeof obj.view === "string") state.view = obj.view;
  state.selection = typeof obj.selection === "string" ? obj.selection : null;
  state.current = 0;
}

export async function linkFor(obj, path = "/") {
  return `${location.origin}${path}#v1=${await encodeState(obj)}`;
}

export async function readHash() {
  const m = location.hash.match(/^#v1=([A-Za-z0-9_-]+)$/);
  if (!m) return null;
  return decodeState(m[1]);
}

let hashTimer = null;
export function saveHashSoon() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(async () => {
    const fragment = state.exercise ? `#x=${state.exercise.id}` : `#v1=${await encodeState(shareable())}`;
    if (location.hash !== fragment) history.replaceState(null, "", location.pathname + fragment);
  }, 300);
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
