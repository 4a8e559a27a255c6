"""Training data for a program's task: random inputs labelled by the evaluator (numpy only, no torch).

Inputs are sampled uniformly: a length in [min_len, max_len], then tokens from the vocabulary. They are
evaluated in bulk, one `run_graph` call per length (every length is a (B, n) batch), for the output
s-op and for the selectors of the program's heads (used by supervision and matching). Inputs on
which the program fails are dropped and counted. Arrays are in *model coordinates*: with a BOS
token, position 0 is BOS and program position i is model position i + 1; rows are padded to the
longest input with token id 0 and a mask.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..elementwise import array_from_values
from ..interpret import Interpretation, interpret
from ..mixed_types import refuse_mixed
from ..lang.errors import RaspError
from ..limits import DEFAULT_LIMITS, Limits
from ..graph_runner import run_graph
from ..header import default_output
from ..analysis import analyze_nodes
from ..program import SOp
from .errors import TrainError

BOS_TOKEN = "<bos>"
MAX_CLASSES = 1024


# ------------------------------------------------------------------ the task

@dataclass
class Task:
    """A program, the s-op to learn, and the heads (selectors) the analysis allocates for it."""
    interp: Interpretation
    output: str
    node: SOp
    nodes: list                 # the output's ancestors, topologically ordered
    layers: int
    heads_per_layer: list[int]
    heads: list[list[dict]]     # per layer: {"selector": id, "name", "label", "layer", "slot"}

    @property
    def selector_ids(self) -> list[int]:
        return [h["selector"] for layer in self.heads for h in layer]


def load_task(source: str, output: str | None = None, load_dirs=None, limits: Limits | None = None) -> Task:
    """Interpret a program and pick the s-op to learn; TrainError for a program that does not run."""
    limits = limits or DEFAULT_LIMITS
    interp = interpret(source, limits, load_dirs)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        d = errors[0]
        where = f" (line {d['line']}, col {d['col']})" if "line" in d else ""
        raise TrainError(f"the program has an error: {d['message']}{where}")
    name = output or default_output(interp)
    if name is None:
        raise TrainError("the program defines no s-op to learn")
    found = [d.value for d in interp.definitions if d.name == name]
    if not found:
        sops = ", ".join(d.name for d in interp.definitions if isinstance(d.value, SOp)) or "none"
        raise TrainError(f"the program defines no s-op named '{name}' (its s-ops: {sops})")
    node = found[-1]
    if not isinstance(node, SOp):
        raise TrainError(f"'{name}' is a selector; training needs an s-op (one value per position)")
    try:
        refuse_mixed(interp, interp.graph.ancestors([node]), "training")
    except RaspError as e:
        raise TrainError(e.message) from None
    analysis = analyze_nodes(interp, [node])
    heads = [[{"selector": h["selector"], "name": h["name"], "label": h["label"], "layer": h["layer"],
               "slot": h["slot"]} for h in layer] for layer in analysis["heads"]]
    return Task(interp, name, node, interp.graph.ancestors([node]), analysis["layers"],
                analysis["heads_per_layer"], heads)


# ------------------------------------------------------------------ datasets

@dataclass
class Split:
    """Examples in model coordinates. ids/targets/loss_mask: (N, T); selectors: id -> (N, T, T) bool."""
    ids: np.ndarray
    lengths: np.ndarray         # model positions used (BOS included)
    targets: np.ndarray         # class ids (int64) or values (float32); 0 where loss_mask is False
    loss_mask: np.ndarray       # positions with a label (not BOS, not padding)
    selectors: dict[int, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows) -> "Split":
        """The examples `rows`, trimmed to their longest length."""
        lengths = self.lengths[rows]
        T = int(lengths.max()) if len(lengths) else 0
        return Split(self.ids[rows, :T], lengths, self.targets[rows, :T], self.loss_mask[rows, :T],
                     {k: v[rows, :T, :T] for k, v in self.selectors.items()})


@dataclass
class TaskData:
    train: Split
    test: Split
    vocab: list                 # the model's tokens: token id = index; vocab[bos_id] is BOS
    bos_id: int | None
    max_len: int                # model positions (BOS included)
    kind: str                   # "categorical" | "numerical"
    classes: list | None        # categorical: the value of each class id
    dropped: int = 0            # sampled inputs on which the program failed
    drop_reason: str | None = None

    @property
    def offset(self) -> int:
        return 0 if self.bos_id is None else 1

    def output_config(self) -> dict:
        if self.kind == "numerical":
            return {"kind": "numerical"}
        return {"kind": "categorical", "classes": self.classes}


def _key(token):
    return (type(token).__name__ if not isinstance(token, (int, float)) or isinstance(token, bool) else "num", token)


def _sort_key(v):
    return ({"bool": 0, "int": 1, "float": 1, "str": 2}.get(type(v).__name__, 3), v)


def check_vocab(vocab) -> list:
    vocab = list(vocab)
    if not vocab:
        raise TrainError("the vocabulary is empty; give at least one token (e.g. --vocab abc)")
    if len({_key(t) for t in vocab}) != len(vocab):
        raise TrainError("the vocabulary has a repeated token")
    try:
        array_from_values(vocab, "the vocabulary")
    except RaspError as e:
        raise TrainError(e.message) from None
    return vocab


def sample_inputs(n_tokens: int, min_len: int, max_len: int, count: int, rng: np.random.Generator,
                  blocks: int | None = None):
    """(count, max_len) token indices (padding: -1) and lengths, uniform lengths then uniform tokens; with `blocks`,
    each input is instead 1..blocks runs of one token (see sample_blocks)."""
    lengths = rng.integers(min_len, max_len + 1, size=count)
    if blocks is None:
        toks = rng.integers(0, n_tokens, size=(count, max_len))
    else:
        toks = sample_blocks(n_tokens, lengths, max_len, blocks, rng)
    toks[np.arange(max_len)[None, :] >= lengths[:, None]] = -1
    return toks, lengths


def sample_blocks(n_tokens: int, lengths: np.ndarray, width: int, blocks: int, rng: np.random.Generator) -> np.ndarray:
    """Inputs made of runs, as Yang, Cadilhac and Chiang's data for L_k (a+b+a+...): each row is r runs, r uniform in
    1..min(blocks, length); the r - 1 run boundaries fall at distinct random positions; the first run's token is
    uniform and each next run's token uniform among the others (so neighbouring runs differ)."""
    count = len(lengths)
    runs = rng.integers(1, np.minimum(blocks, lengths) + 1)
    pos = np.arange(width)[None, :]
    keys = rng.random((count, width))
    keys[(pos == 0) | (pos >= lengths[:, None])] = np.inf      # boundaries only inside the input, never at 0
    rank = np.argsort(np.argsort(keys, axis=1), axis=1)
    run_of = np.cumsum(rank < (runs - 1)[:, None], axis=1)     # which run each position is in
    first = rng.integers(0, n_tokens, size=(count, 1))
    steps = rng.integers(1, max(n_tokens, 2), size=(count, blocks - 1)) if n_tokens > 1 else np.zeros((count, blocks - 1), int)
    run_tokens = (np.concatenate([first, first + np.cumsum(steps, axis=1)], axis=1) % n_tokens).astype(np.int64)
    return np.take_along_axis(run_tokens, np.minimum(run_of, blocks - 1), axis=1)


def label(task: Task, values: np.ndarray, toks: np.ndarray, lengths: np.ndarray, limits: Limits,
          seconds: float = 300.0):
    """Evaluate the task on sampled inputs (token indices into `values`), one batch per length.
    Returns per length group (rows, output values (B, n), {selector id: (B, n, n)}) for the rows that
    evaluated, the number of failed rows, and the first failure's message."""
    keep = {task.node.id, *task.selector_ids}
    deadline = time.monotonic() + seconds
    groups, dropped, reason = [], 0, None
    for n in np.unique(lengths):
        rows_n = np.nonzero(lengths == n)[0]
        per = max(1, limits.max_cells // max(int(n) * int(n), 1))
        for start in range(0, len(rows_n), per):
            rows = rows_n[start:start + per]
            batch = values[toks[rows, :n]]
            try:
                vals = run_graph(task.nodes, batch, keep, deadline, limits)
            except RaspError as e:
                raise TrainError(f"labelling the data failed: {e.message}") from None
            bad = np.zeros(len(rows), dtype=bool)
            for k in keep:
                v = vals[k]
                if v.data is None:
                    bad[:] = True
                errs = [i for i, e in enumerate(v.errors) if e is not None]
                bad[errs] = True
                if errs and reason is None:
                    reason = v.errors[errs[0]].message
            dropped += int(bad.sum())
            if bad.all():
                continue
            ok = ~bad
            groups.append((rows[ok], np.asarray(vals[task.node.id].data)[ok],
                           {k: np.asarray(vals[k].data)[ok] for k in task.selector_ids}))
    return groups, dropped, reason


def _classes_and_targets(groups, kind: str, classes: list | None):
    """Resolve the output kind and turn each group's values into class ids or floats."""
    kinds = {g[1].dtype.kind for g in groups}
    if kind == "auto":
        kind = "numerical" if "f" in kinds else "categorical"
    if kind == "numerical":
        if "U" in kinds:
            raise TrainError("the output holds strings; it cannot be learned as a number (use categorical)")
        return kind, None, [g[1].astype(np.float32) for g in groups]
    uniques = [np.unique(g[1], return_inverse=True) for g in groups]
    observed = {_key(v.item()): v.item() for u, _ in uniques for v in u}
    if classes is None:
        classes = sorted(observed.values(), key=_sort_key)
    if len(classes) > MAX_CLASSES:
        raise TrainError(f"the output takes {len(classes)} different values; the limit for classification is "
                         f"{MAX_CLASSES} (learn it as a number instead)")
    index = {_key(c): i for i, c in enumerate(classes)}
    unknown = [v for k, v in observed.items() if k not in index]
    if unknown:
        raise TrainError(f"the output value {unknown[0]!r} is not one of the model's classes")
    targets = [np.array([index[_key(v.item())] for v in u], dtype=np.int64)[inv.reshape(g[1].shape)]
               for (u, inv), g in zip(uniques, groups)]
    return kind, classes, targets


def _assemble(groups, targets, T: int, offset: int, model_ids: np.ndarray, toks: np.ndarray,
              bos_id, kind: str, selector_ids) -> tuple[Split, np.ndarray]:
    """Scatter the labelled groups into padded arrays (model coordinates); returns the split and the
    original row index of each of its examples."""
    rows = np.concatenate([g[0] for g in groups])
    order = np.argsort(rows, kind="stable")
    M = len(rows)
    ids = np.zeros((M, T), dtype=np.int64)
    tgt = np.zeros((M, T), dtype=np.float32 if kind == "numerical" else np.int64)
    mask = np.zeros((M, T), dtype=bool)
    lengths = np.zeros(M, dtype=np.int64)
    sels = {k: np.zeros((M, T, T), dtype=bool) for k in selector_ids}
    where = np.empty(M, dtype=np.int64)
    where[order] = np.arange(M)   # position of each concatenated row in row order
    start = 0
    for (g_rows, _, g_sels), g_tgt in zip(groups, targets):
        n = g_tgt.shape[1]
        dest = where[start:start + len(g_rows)]
        start += len(g_rows)
        src = toks[g_rows, :n]
        ids[dest, offset:offset + n] = model_ids[src]
        if offset:
            ids[dest, 0] = bos_id
        tgt[dest, offset:offset + n] = g_tgt
        mask[dest, offset:offset + n] = True
        lengths[dest] = n + offset
        for k in selector_ids:
            sels[k][dest, offset:offset + n, offset:offset + n] = g_sels[k]
    return Split(ids, lengths, tgt, mask, sels), rows[order]


def make_data(task: Task, vocab: list, min_len: int, max_len: int, *, n_train: int = 20000, n_test: int = 1000,
              seed: int = 0, bos: bool = True, bos_token=BOS_TOKEN, model_vocab: list | None = None,
              bos_id: int | None = None, kind: str = "auto", classes: list | None = None,
              limits: Limits | None = None, blocks: int | None = None) -> TaskData:
    """Sample, label and split the data of a task.

    vocab: the tokens inputs are drawn from. The model's vocabulary is `vocab` followed by the BOS
    token (when `bos`), or `model_vocab` with its `bos_id` (to train a loaded model, e.g. compiled
    weights). kind: "auto" (float outputs are numerical, others categorical), "categorical" or
    "numerical". blocks: draw inputs as runs of one token (sample_blocks) instead of uniform tokens.
    Held-out inputs do not occur in the training split, except at lengths with fewer
    possible inputs than samples (there, both splits draw from all of them).
    """
    limits = limits or DEFAULT_LIMITS
    vocab = check_vocab(vocab)
    if not 1 <= min_len <= max_len:
        raise TrainError(f"lengths must satisfy 1 <= min_len <= max_len (got {min_len}..{max_len})")
    if max_len > 512:
        raise TrainError(f"max_len {max_len} is too long for training on a CPU (the limit is 512)")
    if n_test < 1 or n_train < 1:
        raise TrainError("n_train and n_test must be at least 1")
    if kind not in ("auto", "categorical", "numerical"):
        raise TrainError(f"unknown output kind {kind!r}; use auto, categorical or numerical")
    if model_vocab is None:
        if bos and any(_key(t) == _key(bos_token) for t in vocab):
            raise TrainError(f"the BOS token {bos_token!r} is also in the vocabulary; pick another")
        model_vocab = vocab + ([bos_token] if bos else [])
        bos_id = len(vocab) if bos else None
    index = {_key(t): i for i, t in enumerate(model_vocab)}
    missing = [t for t in vocab if _key(t) not in index or index[_key(t)] == bos_id]
    if missing:
        raise TrainError(f"the token {missing[0]!r} is not in the model's vocabulary")
    model_ids = np.array([index[_key(t)] for t in vocab], dtype=np.int64)
    values = array_from_values(vocab, "the vocabulary")
    offset = 0 if bos_id is None else 1

    rng = np.random.default_rng(seed)
    toks, lengths = sample_inputs(len(vocab), min_len, max_len, n_train + n_test, rng, blocks)
    groups, dropped, reason = label(task, values, toks, lengths, limits)
    if not groups:
        raise TrainError(f"the program failed on every sampled input ({dropped} of {dropped}): {reason}")
    kind, classes, targets = _classes_and_targets(groups, kind, classes)
    T = max_len + offset
    split, rows = _assemble(groups, targets, T, offset, model_ids, toks, bos_id, kind, task.selector_ids)
    is_test = rows < n_test
    # held-out inputs are kept out of training, except at lengths short enough to be enumerated
    enumerable = len(vocab) ** np.minimum(lengths[rows], 64).astype(float) < len(toks)
    test_keys = {toks[r].tobytes() for r in rows[is_test]}
    in_train = ~is_test & (enumerable | np.array([toks[r].tobytes() not in test_keys for r in rows]))
    if not is_test.any() or not in_train.any():
        raise TrainError(f"too few inputs evaluated to form both splits ({dropped} of {len(toks)} failed: {reason})")
    return TaskData(split.take(np.nonzero(in_train)[0]), split.take(np.nonzero(is_test)[0]), list(model_vocab),
                    bos_id, T, kind, classes, dropped, reason)


def program_on(task: Task, tokens: list, offset: int, limits: Limits | None = None):
    """The program on one input (program tokens): its output values (list, or None on error) and its
    head selectors as (n + offset, n + offset) bool matrices in model coordinates."""
    limits = limits or DEFAULT_LIMITS
    try:
        values = array_from_values(list(tokens), "the input tokens")
        vals = run_graph(task.nodes, values[None, :], {task.node.id, *task.selector_ids},
                         time.monotonic() + limits.eval_seconds, limits)
    except RaspError as e:
        raise TrainError(f"the program cannot run on this input: {e.message}") from None
    n = len(tokens)
    sels = {}
    for k in task.selector_ids:
        m = np.zeros((n + offset, n + offset), dtype=bool)
        v = vals[k]
        if v.data is not None and v.errors[0] is None:
            m[offset:, offset:] = v.data[0]
        sels[k] = m
    out = vals[task.node.id]
    output = out.data[0].tolist() if out.data is not None and out.errors[0] is None else None
    return output, sels
