// The compile and training bounds this server enforces (GET /api/v1/limits), asked for once and set on
// the forms' number fields: the page repeats no limit the server knows (a request outside them is a 422).

import * as api from "./api.js";
import { isEdited } from "./forms.js";

let asked = null;
let known = null;

export function serverLimits() {
  asked ||= api.limits().then((limits) => { known = limits; return limits; });
  return asked;
}

// The limits if they have come, else null (the forms then set them when they come).
export const limitsNow = () => known;

// Set min and max on number inputs: `fields` maps an input's id to the name of a POST /train field.
export function boundTrainInputs(limits, fields) {
  for (const [id, name] of Object.entries(fields)) {
    const input = document.getElementById(id);
    const bounds = limits.train.fields[name];
    if (!input || !bounds) continue;
    // an exclusive minimum (above 0) keeps the field's own min: HTML's min is inclusive
    if (bounds.min !== null && !bounds.exclusive_min) input.min = String(bounds.min);
    // a job's time budget is capped by the server's time limit of a job too
    const max = name === "time_budget" ? Math.min(bounds.max ?? Infinity, limits.train.seconds) : bounds.max;
    if (max !== null && Number.isFinite(max)) input.max = String(max);
  }
}

// The compile form's max_len: at most the server's --compile-max-len (its value too, unless edited).
export function boundCompileMaxLen(limits, input) {
  input.max = String(limits.compile.max_len);
  if (!isEdited(input.id) && Number(input.value) > limits.compile.max_len) input.value = String(limits.compile.max_len);
}
