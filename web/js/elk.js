// The layout kernel (elkjs, vendored in web/vendor; see web/vendor/elk-build): one indirection, so that
// layout.js loads it on first use by a sibling name (the notebook widget links sibling modules by name).
export { default } from "../vendor/elk.bundle.js";
