// Entry point for web/vendor/codemirror.bundle.js (see README.md).
// Everything is re-exported from one bundle so the app shares a single copy
// of @codemirror/state and @codemirror/view (instanceof checks depend on it).
export { basicSetup, minimalSetup, EditorView } from "codemirror";
export { EditorState, Compartment, StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
export { keymap, Decoration, ViewPlugin, hoverTooltip, lineNumbers, placeholder } from "@codemirror/view";
export {
  StreamLanguage, HighlightStyle, syntaxHighlighting, LanguageSupport, indentUnit, bracketMatching,
} from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { linter, setDiagnostics, lintGutter, forceLinting } from "@codemirror/lint";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { autocompletion, completeFromList } from "@codemirror/autocomplete";
