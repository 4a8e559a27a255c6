// The program editor: CodeMirror 6 with a RASP mode and the server's diagnostics as squiggles.
// If the CodeMirror bundle cannot load, a plain textarea with the same interface takes its place.

import { language } from "./api.js";

// The words to highlight come from the engine (GET /api/v1/language: the grammar's keywords, the
// built-ins, the library's names): the page keeps no list of its own.
const NO_WORDS = { keywords: [], builtins: [], inputs: [], atoms: [], library: [] };

function raspMode(words) {
  const kw = new Set(words.keywords), bi = new Set([...words.builtins, ...words.inputs]), lib = new Set(words.library);
  const atoms = new Set(words.atoms);
  return {
    name: "rasp",
    token(stream) {
      if (stream.eatSpace()) return null;
      if (stream.peek() === "#") { stream.skipToEnd(); return "comment"; }
      const quote = stream.peek();
      if (quote === '"' || quote === "'") {
        stream.next();
        while (!stream.eol()) { if (stream.next() === quote) break; }
        return "string";
      }
      if (stream.match(/^(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?/)) return "number";
      if (stream.match(/^[A-Za-z_][A-Za-z0-9_]*/)) {
        const w = stream.current();
        if (kw.has(w)) return "keyword";
        if (atoms.has(w)) return "atom";
        if (bi.has(w)) return "builtin";
        if (lib.has(w)) return "variable-2";
        return "variable";
      }
      if (stream.match(/^(==|!=|<=|>=|[-+*/%^<>=])/)) return "operator";
      stream.next();
      return null;
    },
    languageData: { commentTokens: { line: "#" } },
  };
}

function offsetOf(doc, line, col) {
  const l = doc.line(Math.min(Math.max(line, 1), doc.lines));
  return Math.min(l.from + Math.max(col - 1, 0), l.to);
}

export function toCodeMirrorDiagnostics(doc, diagnostics) {
  return diagnostics.filter((d) => d.line).map((d) => {
    const from = offsetOf(doc, d.line, d.col);
    let to = d.end_line ? offsetOf(doc, d.end_line, d.end_col) : from + 1;
    if (to <= from) to = Math.min(from + 1, doc.length);
    return { from, to, severity: d.severity === "info" ? "info" : d.severity, message: d.message, source: d.kind };
  });
}

// The name around `pos` in its line, as {from, to, word}, or null (the pointer is not on a name).
function nameAt(doc, pos) {
  const line = doc.lineAt(pos);
  let start = pos, end = pos;
  while (start > line.from && /\w/.test(line.text[start - line.from - 1])) start--;
  while (end < line.to && /\w/.test(line.text[end - line.from])) end++;
  return start < end ? { from: start, to: end, word: line.text.slice(start - line.from, end - line.from) } : null;
}

async function codeMirrorEditor(parent, { initial, onChange, onRun, readOnly, tooltipFor }) {
  // the vocabulary is asked for while the bundle loads; without it the editor still works, unhighlighted
  const [cm, words] = await Promise.all([import("../vendor/codemirror.bundle.js"),
    language().catch((e) => { console.warn("the language's vocabulary did not load", e); return NO_WORDS; })]);
  const { EditorView, EditorState, basicSetup, keymap, StreamLanguage, HighlightStyle, syntaxHighlighting, tags,
    lintGutter, setDiagnostics, indentWithTab, autocompletion, completeFromList, Decoration, StateEffect, StateField,
    RangeSetBuilder, hoverTooltip } = cm;
  // the pointer resting on a built-in or library name shows its entry of the language reference (reference.js)
  const reference = hoverTooltip(async (view, pos) => {
    const at = nameAt(view.state.doc, pos);
    const dom = at && tooltipFor ? await tooltipFor(at.word) : null;
    return dom ? { pos: at.from, end: at.to, above: true, create: () => ({ dom }) } : null;
  });
  // lines marked as a group (presenter mode: the stepped layer's definitions)
  const setMarked = StateEffect.define();
  const marked = StateField.define({
    create: () => Decoration.none,
    update(deco, tr) {
      deco = deco.map(tr.changes);
      for (const effect of tr.effects) {
        if (!effect.is(setMarked)) continue;
        const builder = new RangeSetBuilder();
        for (const n of effect.value) {
          const line = tr.state.doc.line(n);
          builder.add(line.from, line.from, Decoration.line({ class: "cm-marked-line" }));
        }
        deco = builder.finish();
      }
      return deco;
    },
    provide: (field) => EditorView.decorations.from(field),
  });
  const highlight = HighlightStyle.define([
    { tag: tags.keyword, color: "#0b3d8c", fontWeight: "600" },
    { tag: tags.string, color: "#9a4c00" },
    { tag: tags.number, color: "#007a5e" },
    { tag: tags.comment, color: "#5b6775", fontStyle: "italic" },
    { tag: tags.atom, color: "#007a5e" },
    { tag: tags.standard(tags.variableName), color: "#8a3ffc" },
    { tag: tags.special(tags.variableName), color: "#0072B2" },
    { tag: tags.operator, color: "#444" },
  ]);
  const completions = [
    ...words.keywords.map((label) => ({ label, type: "keyword" })),
    ...words.library.map((label) => ({ label, type: "function" })),
    ...[...words.builtins, ...words.inputs, ...words.atoms].map((label) => ({ label, type: "variable" })),
  ];
  const rasp = StreamLanguage.define(raspMode(words));
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: initial,
      extensions: [
        keymap.of([
          { key: "Mod-Enter", run: () => { onRun(); return true; } },
          indentWithTab,
        ]),
        basicSetup,
        rasp,
        rasp.data.of({ autocomplete: completeFromList(completions) }),
        autocompletion(),
        syntaxHighlighting(highlight),
        lintGutter(),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        EditorView.contentAttributes.of({ "aria-label": "RASP program" }),
        EditorView.lineWrapping,
        marked,
        reference,
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u.state.doc.toString()); }),
      ],
    }),
  });
  return {
    kind: "codemirror",
    getValue: () => view.state.doc.toString(),
    setValue(text) { view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } }); },
    setDiagnostics(diagnostics) {
      view.dispatch(setDiagnostics(view.state, toCodeMirrorDiagnostics(view.state.doc, diagnostics)));
    },
    goTo(line, col) {
      const pos = offsetOf(view.state.doc, line, col);
      view.dispatch({ selection: { anchor: pos }, scrollIntoView: true });
      view.focus();
    },
    // scroll so that `line` is at the top (without moving the cursor or the focus)
    showLine(line) {
      const pos = offsetOf(view.state.doc, line, 1);
      view.dispatch({ effects: EditorView.scrollIntoView(pos, { y: "start" }) });
    },
    // mark these lines (1-based; none: clear) and scroll the first into view
    markLines(lines) {
      const n = view.state.doc.lines;
      const valid = [...new Set(lines)].filter((l) => l >= 1 && l <= n).sort((a, b) => a - b);
      const effects = [setMarked.of(valid)];
      if (valid.length) effects.push(EditorView.scrollIntoView(view.state.doc.line(valid[0]).from, { y: "start", yMargin: 8 }));
      view.dispatch({ effects });
    },
    focus: () => view.focus(),
  };
}

function textareaEditor(parent, { initial, onChange, onRun, readOnly }) {
  const area = document.createElement("textarea");
  area.className = "fallback";
  area.value = initial;
  area.readOnly = readOnly;
  area.spellcheck = false;
  area.setAttribute("aria-label", "RASP program");
  area.addEventListener("input", () => onChange(area.value));
  area.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") { e.preventDefault(); onRun(); }
  });
  parent.replaceChildren(area);
  return {
    kind: "textarea",
    getValue: () => area.value,
    setValue(text) { area.value = text; },
    setDiagnostics() {},  // the problems list under the editor shows them
    goTo(line, col) {
      const lines = area.value.split("\n");
      let pos = 0;
      for (let i = 0; i < line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
      area.focus();
      area.setSelectionRange(pos + col - 1, pos + col - 1);
    },
    showLine(line) {
      area.scrollTop = (line - 1) * parseFloat(getComputedStyle(area).lineHeight || "20");
    },
    markLines(lines) { if (lines.length) this.showLine(Math.min(...lines)); },
    focus: () => area.focus(),
  };
}

// The first line of a program that is not a comment or blank (examples open with a header).
export function firstCodeLine(source) {
  const lines = source.split("\n");
  const i = lines.findIndex((l) => l.trim() && !l.trim().startsWith("#"));
  return i < 0 ? 1 : i + 1;
}

export async function createEditor(parent, options) {
  try {
    return await codeMirrorEditor(parent, options);
  } catch (e) {
    console.warn("CodeMirror did not load; using a plain text area", e);
    return textareaEditor(parent, options);
  }
}
