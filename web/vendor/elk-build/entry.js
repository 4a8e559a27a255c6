// Entry point for web/vendor/elk.bundle.js (see README.md): elkjs's bundled build (the layout kernel and
// its in-page "fake worker"), re-exported as an ES module. No worker URL is ever given, so the layout runs
// in the page itself, from our origin, with no eval (the page's CSP allows neither).
import ELK from "elkjs/lib/elk.bundled.js";

export default ELK;
