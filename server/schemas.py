"""Pydantic request and response models: the JSON formats of docs/api.md."""
from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

Token = Union[bool, int, float, str]


class ErrorBody(BaseModel):
    kind: str = Field(description="bad_request, validation, too_large, limit, timeout, not_found or busy")
    message: str = Field(description="what went wrong, for people")
    line: Optional[int] = Field(None, description="1-based line in the program, when the error has a place")
    col: Optional[int] = Field(None, description="1-based column")
    details: Optional[list[dict[str, Any]]] = Field(None, description="per-field problems of a malformed request")


class ErrorResponse(BaseModel):
    error: ErrorBody


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Malformed request (for example invalid JSON)"},
    413: {"model": ErrorResponse, "description": "Request body over the size limit"},
    422: {"model": ErrorResponse, "description": "Invalid request, over a limit, or over the time limit"},
}


class EvaluateRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);",
         "inputs": ["hello"]}]})

    source: str = Field(description="the RASP program")
    inputs: list[Union[str, list[Token]]] = Field(
        default_factory=list,
        description="inputs: strings (one token per character) or lists of tokens; with input_format "
                    "'json', strings holding JSON lists. Empty: the program's `set example`.")
    input_format: Optional[Literal["str", "json"]] = Field(
        None, description="how to read string inputs: 'str' (characters, the default) or 'json'")
    names: Optional[list[str]] = Field(None, description="only these s-ops and selectors (default: all)")
    trace: Optional[int] = Field(None, ge=0, description="also return every graph node's values (named or not) "
                                                         "on input number `trace` (0-based), as `trace`")


class AnalyzeRequest(BaseModel):
    source: str = Field(description="the RASP program")
    output: Optional[str] = Field(None, description="analyse only this s-op and what it needs")


class Diagnostic(BaseModel):
    severity: Literal["error", "warning", "info"]
    message: str
    kind: Optional[str] = None
    line: Optional[int] = None
    col: Optional[int] = None
    end_line: Optional[int] = None
    end_col: Optional[int] = Field(None, description="exclusive")


class Result(BaseModel):
    kind: Literal["sop", "selector"]
    type: Optional[str] = Field(None, description="s-ops: int, float, str, bool, or mixed (values of several "
                                                  "types, as the original RASP allows)")
    layer: int
    head: Optional[int] = Field(None, description="selectors: the head slot in their layer")
    values: list[Any] = Field(description="per input: a list of values (s-op) or a query x key 0/1 matrix "
                                          "(selector); null where that input failed")
    errors: list[Optional[str]] = Field(description="per input: null, or why it failed")


class GraphNode(BaseModel):
    id: int
    kind: str
    role: Literal["selector", "attention", "input", "elementwise"] = Field(
        description="what the node is: a selector, an attention op that reads one in a head (aggregate, "
                    "selector_width), an input or constant, or an elementwise op (an MLP's)")
    name: str
    names: list[str]
    label: str
    layer: int
    head: Optional[int]
    part_of: Optional[str] = Field(None, description="for a node the program does not name (an aggregate inside "
                                   "an expression), the name of the nearest named node built on it; else null")
    span: Optional[dict[str, int]]
    source: Optional[str]


class GraphEdge(BaseModel):
    source: int
    target: int
    role: str


class Graph(BaseModel):
    nodes: list[GraphNode]
    edges: list[GraphEdge]


class Head(BaseModel):
    layer: int
    slot: int
    selector: int = Field(description="graph node id of the selector")
    name: str
    display: str = Field(description="the text the diagram shows for this head: its selector's name or a short generated one, never the same as another head's")
    label: str
    expression: str = Field(description="the selector's full source text (label may be shortened)")
    ops: list[int] = Field(description="graph node ids of the aggregates / selector_widths using this head")


class Analysis(BaseModel):
    layers: int
    heads_per_layer: list[int]
    heads: list[list[Head]] = Field(description="per layer (1..layers), its heads")
    mlps: list[list[int]] = Field(description="per layer 0..layers, the elementwise ops of its MLP (0: from the input alone)")
    graph: Graph


class TracedNode(BaseModel):
    values: Optional[list[Any]] = Field(description="the node's values (s-op) or 0/1 matrix (selector); null on error")
    type: Optional[str] = None
    error: Optional[str] = None


class Trace(BaseModel):
    input: int
    nodes: dict[str, TracedNode] = Field(description="graph node id -> its values on that input")


class EvaluationDocument(BaseModel):
    inputs: list[list[Token]]
    output: Optional[str] = Field(description="the program's default output: the s-op named by its `# output:` "
                                              "header, else the last s-op it defines (null when it defines none); "
                                              "compile and train use it when no output is given")
    title: Optional[str] = Field(None, description="the program's `# title:` header (null without one), as the "
                                                   "engine's one header parser reads it")
    results: dict[str, Result]
    analysis: Analysis
    diagnostics: list[Diagnostic]
    trace: Optional[Trace] = Field(None, description="only when the request asks for a trace")


class AnalysisDocument(Analysis):
    names: dict[str, int] = Field(description="layer of every name the program defines")
    diagnostics: list[Diagnostic]
    dialect: Optional[dict[str, Any]] = Field(None, description="the dialect check of the output (default: the "
                                              "program's default output): `fragments` (B-RASP, C-RASP, TL[#], "
                                              "length-free, RASP; each with member, reason, line, col), "
                                              "`smallest`, `length_free`, `causal`, `theorem`, and "
                                              "`length_generalization` (C-RASP[periodic, local] and RASP-L, each "
                                              "with member, reason, line, col, basis, prediction, statement; "
                                              "`size`; `summary`); null when the program has errors or no s-op")


class ExampleSummary(BaseModel):
    id: str
    title: str
    description: str
    input: str = Field(description="the default input (a string, or a JSON list when input_format is 'json')")
    input_format: Literal["str", "json"]
    tags: list[str]
    output: Optional[str] = Field(None, description="the example's main s-op")


class Example(ExampleSummary):
    source: str


class ShareRequest(BaseModel):
    state: dict[str, Any] = Field(
        description='the playground state: {"source": ..., "inputs": [...], "view": ..., "selection": ..., '
                    '"learned": {"source", "origin"?, "user_source"?, "check"?}}; only source is required, '
                    "learned (the Learned tab's program and its check settings) is checked, unknown keys are kept "
                    "and ignored")


class ShareResponse(BaseModel):
    id: str
    url: str = Field(description="path of the short link, relative to the server (/s/{id})")


class Live(BaseModel):
    status: Literal["ok"]


class Ready(BaseModel):
    status: Literal["ready", "unavailable"]
    checks: dict[str, dict[str, Any]] = Field(description="per dependency (store, broker, workers, redis, training, "
                                                          "draining): `ok`, and `reason` when not; `required`: false "
                                                          "for those reported only (training, redis)")
    error: dict[str, Any] | None = Field(None, description="when not ready: kind `unavailable` and every reason")


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    workers: int
    limits: dict[str, Any]
    training: dict[str, Any] = Field(description="training jobs running and queued, and their limits; `available`: "
                                                 "whether this server can train (PyTorch installed: the train extra)")
    cache: dict[str, int] = Field(description="the response cache of /evaluate and /analyze: entries, hits, misses")
    pools: dict[str, Any] = Field(description="per worker pool (evaluation, heavy): live workers, each worker's "
                                              "resident memory in bytes, workers replaced (by cause), the share "
                                              "of workers one client may hold, requests in the workers (running "
                                              "or pipelined), requests and clients waiting")
    responses: dict[str, Any] = Field(description="answers being sent; large ones spilled to temporary files "
                                                  "(their count, bytes and clients)")
    assets: dict[str, Any] = Field(description="the app's files: their `version` (in their URLs) and whether all "
                                               "are compressed at the best settings yet (`best_ready`)")


class TrainRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);",
         "output": "reverse", "vocab": "abcdefgh", "max_len": 12, "steps": 300}]})

    source: str = Field(description="the RASP program")
    output: Optional[str] = Field(None, description="the s-op to learn (default: the `# output:` header, else the last s-op)")
    vocab: Union[str, list[Token]] = Field(description="input tokens: a string of characters or a list")
    min_len: int = Field(1, ge=1, le=512)
    max_len: int = Field(16, ge=1, le=512)
    bos: bool = Field(True, description="prepend a BOS token")
    layers: Optional[int] = Field(None, ge=0, le=12, description="default: the RASP analysis of the output")
    heads: Optional[int] = Field(None, ge=1, le=16, description="default: the analysis' largest head count")
    d_model: int = Field(64, ge=4, le=1024)
    steps: Optional[int] = Field(None, ge=1, le=1_000_000)
    time_budget: Optional[float] = Field(None, gt=0, le=3600, description="seconds (capped by the server's job time limit)")
    batch_size: int = Field(64, ge=1, le=4096)
    lr: Optional[float] = Field(None, gt=0, le=1, description="default 1e-3 (1e-5 when fine-tuning a compiled model)")
    supervise: bool = Field(False, description="pull each head's attention towards its selector")
    seed: int = Field(0, ge=0, le=2**31)
    example: Optional[Union[str, list[Token]]] = Field(None, description="the input whose attention the result shows")
    stop_at: Optional[float] = Field(None, gt=0, le=1, description="stop at this held-out per-sequence accuracy")
    test_min_len: Optional[int] = Field(None, ge=2, le=512, description="longer held-out lengths (above max_len): "
                                        "the result and every progress event carry accuracy per length bin")
    test_max_len: Optional[int] = Field(None, ge=2, le=512)
    bin_width: Optional[int] = Field(None, ge=1, le=512, description="lengths per test bin (default: the training "
                                                                    "range's width; at most 32 bins)")
    blocks: Optional[int] = Field(None, ge=1, le=512, description="draw inputs as 1..blocks runs of one token "
                                  "(a+b+a+..., as Yang, Cadilhac and Chiang's L_k data) instead of uniform tokens")
    positional: Literal["learned", "random_offset", "none"] = Field(
        "learned", description="learned positions; random_offset: learned, trained at random offsets so that every "
                               "position up to test_max_len is trained (Huang et al.); none: no positional encoding")
    causal: bool = Field(False, description="a causal (decoder) mask instead of bidirectional attention")
    device: Optional[Literal["cpu", "cuda", "auto"]] = Field(
        None, description="where the job trains (auto: a GPU when the worker has one); default: the server's "
                          "--train-device (cpu unless set)")
    init_model: Optional[str] = Field(None, pattern=r"^m[a-z2-7]{15}$",
                                      description="start from this compiled model's weights (fine-tuning; the learning "
                                                  "rate then defaults to 1e-5, which keeps the exact model exact)")
    mode: Literal["standard", "program"] = Field(
        "standard", description="program: train a constrained transformer and read it back as a RASP program (the "
                                "result's learned_program; docs/learned_programs.md); lr then defaults to 0.05, "
                                "layers <= 4, heads <= 8, max_len <= 39")
    num_heads: Optional[int] = Field(None, ge=0, le=4, description="program mode: counting heads per layer (default 1)")
    mlps: Optional[int] = Field(None, ge=0, le=4, description="program mode: table MLPs per layer (default 1)")
    eos: Optional[bool] = Field(None, description="program mode: an end token </s> after each input")


class TrainJob(BaseModel):
    id: str
    status: Literal["queued", "running", "done", "failed", "cancelled", "timeout"]
    events: int = Field(description="progress events so far (GET .../events streams them)")
    error: Optional[str] = None
    created: float
    started: Optional[float] = None
    finished: Optional[float] = None
    result: Optional[dict[str, Any]] = Field(None, description="accuracies, curves, head-selector matches, attention maps; "
                                                               "mode program: learned_program {source, layers, heads, "
                                                               "analysis}, the emitted RASP and its analysis")
    spec: dict[str, Any]
    warm: bool = Field(False, description="it started in a warm spare process (PyTorch already loaded)")


class OverlayRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);",
         "maps": {"tokens": ["a", "b"], "attention": [[[[0.5, 0.5], [0.5, 0.5]]], [[[0, 1], [1, 0]]]]}}]})

    source: str = Field(description="the RASP program")
    output: Optional[str] = Field(None, description="the s-op whose selectors to compare with (default as for training)")
    maps: dict[str, Any] = Field(description='attention from another tool: {"tokens": [...], "attention": '
                                             'layers x heads x n x n (rows = queries, summing to 1), "bos": false}')


class Overlay(BaseModel):
    output: str = Field(description="the s-op whose selectors were compared")
    layers: int = Field(description="layers of the imported maps")
    heads: int = Field(description="heads per layer of the imported maps")
    program_layers: int
    program_heads_per_layer: list[int]
    values: list[Any] = Field(description="the program's output on the input")
    tokens: list[Any]
    offset: int = Field(description="1 when position 0 is a BOS token")
    attention: list[Any] = Field(description="layers x heads x n x n")
    selectors: list[dict[str, Any]] = Field(description="the program's selectors on the input, in the maps' coordinates")
    matches: list[dict[str, Any]] = Field(description="per selector: scores against every head, the paired head, its score")


class CompileRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);",
         "output": "reverse", "vocab": "abc", "max_len": 6}]})

    source: str = Field(description="the RASP program")
    output: Optional[str] = Field(None, description="the s-op to compute (default: the last one defined)")
    vocab: Union[str, list[Token]] = Field(description="input tokens: a string of characters or a list")
    max_len: Optional[int] = Field(None, ge=1, description="the longest input the model must get right (required "
                                                           "unless length_free)")
    bos: str = Field("<bos>", max_length=32, description="the BOS token (not in vocab)")
    causal: bool = Field(False, description="a causal (autoregressive) model: position i's output is the "
                                            "evaluator's value at i on the prefix of length i + 1; refused "
                                            "(422 naming the selector and its line) when a selector may look ahead")
    length_free: bool = Field(False, description="a model whose weights do not depend on the input length and "
                                                 "that runs at any length (docs/every_length.md); max_len is not "
                                                 "used; a program outside the length-free fragment is a 422 "
                                                 "with the dialect check's reason and line")
    reuse_residual: bool = Field(True, description="give a value's residual dimensions to a value written later "
                                                   "once nothing reads it (narrower, 2 non-zeros more per erased "
                                                   "dimension); false: every value keeps its own dimensions "
                                                   "(docs/compiler.md)")


class CompiledModelSummary(BaseModel):
    id: str = Field(description="the model's id for /models/{id}/...; the same request always gets the same id")
    summary: dict[str, Any] = Field(description="layers and heads (ours and the analysis'), MLP widths, residual "
                                                "width, parameters, the residual layout by block, heads, MLPs, notes")


class RunRequest(BaseModel):
    inputs: list[Union[str, list[Token]]] = Field(description="inputs (without BOS): strings or token lists")
    mode: Literal["hard", "soft"] = Field("hard", description="average-hard attention (exact) or softmax")
    beta: Optional[float] = Field(None, gt=0, le=1e6, description="softmax inverse temperature (soft mode)")


class SoftStudyRequest(BaseModel):
    betas: Optional[list[float]] = Field(None, max_length=64, description="the betas of the curve (default: a log grid)")
    per_length: int = Field(200, ge=1, le=2000, description="inputs sampled per length when not exhaustive")
    exhaustive_limit: int = Field(5000, ge=1, le=50_000, description="all inputs when there are at most this many")


# the exercise routes' models (docs/exercises.md) are in schemas_exercises.py


class ProvenanceRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"source": "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);",
         "input": "hello", "name": "reverse", "position": 0}]})

    source: str = Field(description="the RASP program")
    input: Union[str, list[Token]] = Field(description="one input: a string (one token per character) or a list "
                                                       "of tokens; with input_format 'json', a string holding a "
                                                       "JSON list")
    input_format: Optional[Literal["str", "json"]] = None
    name: Optional[str] = Field(None, description="the s-op whose value is asked about (or give `node`)")
    node: Optional[int] = Field(None, description="a graph node id (from the evaluation document's analysis)")
    position: int = Field(ge=0, description="the position of the value (0-based)")


class ProvenanceRead(BaseModel):
    query: int
    keys: list[int] = Field(description="the keys this query row selected: the cells it read (empty: default)")


class ProvenanceHead(BaseModel):
    node: int = Field(description="the aggregate or selector_width")
    name: str
    layer: int
    head: Optional[int]
    selector: int
    reads: list[ProvenanceRead]


class ProvenanceLayerRead(BaseModel):
    layer: int
    positions: list[int]


class ProvenanceSop(BaseModel):
    node: int
    name: str
    kind: str
    layer: int
    positions: list[int] = Field(description="positions of this s-op on the path")
    reads: list[ProvenanceLayerRead] = Field(description="per layer of the head or MLP that read this s-op "
                                                         "(the value itself: its own layer), the positions read")


class ProvenanceSelector(BaseModel):
    node: int
    layer: int
    cells: list[list[int]] = Field(description="[query, key] cells used")


class Provenance(BaseModel):
    node: int
    name: str
    position: int
    layer: int
    heads: list[ProvenanceHead] = Field(description="attention on the path: which keys each query read")
    sops: list[ProvenanceSop] = Field(description="every s-op cell on the path, the value itself included")
    selectors: list[ProvenanceSelector]
    mlps: list[int] = Field(description="layers whose MLP computed an op on the path (0: from the input alone)")


class ProvenanceDocument(BaseModel):
    provenance: Provenance


class LanguageKinds(BaseModel):
    selector: list[str] = Field(description="node kinds that are selectors (a head's attention pattern)")
    attention: list[str] = Field(description="node kinds that read a selector in a head (aggregate, selector_width)")
    input: list[str] = Field(description="node kinds of inputs and constants")
    elementwise: list[str] = Field(description="node kinds computed position by position (an MLP)")


class ReferenceEntry(BaseModel):
    name: str = Field(description="the name as a program writes it")
    kind: Literal["built-in", "input", "library"] = Field(
        description="built-in: a function of the interpreter (or `select`); input: a built-in s-op; library: "
                    "defined in RASP in the standard library")
    signature: str = Field(description="how it is called, e.g. `aggregate(sel, sop, default=0)`")
    meaning: str = Field(description="what it gives, in one line")
    example: str = Field(description="a small program that uses it (runs without error)")
    input: str | list[Any] = Field(description="the input the example runs on: a string (one token per "
                                               "character) or a list of tokens")


class LanguageReference(BaseModel):
    entries: list[ReferenceEntry] = Field(description="every built-in function, built-in s-op and library name, "
                                                      "built-ins first")

    model_config = ConfigDict(json_schema_extra={"examples": [{"entries": [{
        "name": "selector_width", "kind": "built-in", "signature": "selector_width(sel)",
        "meaning": "How many keys each query selects (one head).",
        "example": "same = selector_width(select(tokens, tokens, ==));", "input": "hello"}]}]})


class Language(BaseModel):
    keywords: list[str] = Field(description="the grammar's words (grammar.lark)")
    builtins: list[str] = Field(description="built-in functions")
    inputs: list[str] = Field(description="built-in s-ops: tokens and its conversions, indices")
    atoms: list[str] = Field(description="constant names (True, False)")
    library: list[str] = Field(description="names the standard library (library.rasp) defines")
    kinds: LanguageKinds = Field(description="the kinds of the evaluation document's graph nodes, by role")

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "keywords": ["and", "def", "select"], "builtins": ["aggregate", "selector_width"],
        "inputs": ["indices", "tokens"], "atoms": ["False", "True"], "library": ["length", "shift"],
        "kinds": {"selector": ["select"], "attention": ["aggregate"], "input": ["tokens"], "elementwise": ["map"]}}]})
