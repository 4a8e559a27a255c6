// The REST API (/api/v1). Every failure becomes an ApiError with the server's message.

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `request failed (${status})`);
    this.status = status;
    this.kind = err.kind || "network";
    this.line = err.line;
    this.col = err.col;
  }
}

async function call(method, path, body) {
  let response;
  try {
    response = await fetch(`/api/v1${path}`, {
      method,
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (e) {
    throw new ApiError(0, { error: { kind: "network", message: "the rasplay server cannot be reached" } });
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const evaluate = (source, inputs, trace) => call("POST", "/evaluate", { source, inputs, trace });
export const examples = () => call("GET", "/examples");
export const health = () => call("GET", "/health");
export const language = () => call("GET", "/language");
export const languageReference = () => call("GET", "/language/reference");
export const limits = () => call("GET", "/limits");
export const example = (id) => call("GET", `/examples/${encodeURIComponent(id)}`);
export const share = (state) => call("POST", "/share", { state });
export const train = (request) => call("POST", "/train", request);
export const trainJob = (id) => call("GET", `/train/${encodeURIComponent(id)}`);
export const cancelTrain = (id) => call("DELETE", `/train/${encodeURIComponent(id)}`);
export const compile = (request) => call("POST", "/compile", request);
export const runModel = (id, inputs, options) => call("POST", `/models/${encodeURIComponent(id)}/run`, { inputs, ...options });
export const softStudy = (id, options) => call("POST", `/models/${encodeURIComponent(id)}/soft`, options);
export const overlay = (request) => call("POST", "/overlay", request);
export const provenance = (request) => call("POST", "/provenance", request);
export const analyze = (source, output) => call("POST", "/analyze", { source, output });
export const exercises = () => call("GET", "/exercises");
export const exercise = (id) => call("GET", `/exercises/${encodeURIComponent(id)}`);
export const checkExercise = (id, source) => call("POST", `/exercises/${encodeURIComponent(id)}/check`, { source });
export const checkLearned = (request) => call("POST", "/learned/check", request);
export const importLearned = (program, weights) => call("POST", "/learned/import", { program, weights });
