"""The options of a training run (JSON-able, torch-free, so a server can validate a request without torch)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from .errors import TrainError

DEFAULT_STEPS = 2000

# upper bounds that keep one CPU job bounded
LIMITS = {"max_len": 512, "layers": 12, "heads": 16, "d_model": 1024, "batch_size": 4096,
          "n_train": 200_000, "n_test": 20_000, "steps": 1_000_000, "time_budget": 3600.0,
          "threads": 64, "warmup": 1_000_000, "eval_every": 1_000_000, "d_mlp": 4096, "match_examples": 20_000}


@dataclass
class TrainConfig:
    # the task
    vocab: list
    output: str | None = None          # the s-op to learn (default: the `# output:` header, else the last s-op)
    min_len: int = 1
    max_len: int = 16
    bos: bool = True                   # prepend a BOS token (a position every head can rest on)
    kind: str = "auto"                 # auto | categorical | numerical
    n_train: int = 20_000
    n_test: int = 1_000
    # the model (layers / heads: None = the RASP analysis of the output)
    layers: int | None = None
    heads: int | None = None
    d_model: int = 64
    d_mlp: int | None = None           # default 4 * d_model
    layer_norm: bool = True
    # the loop
    steps: int | None = None           # step budget (default DEFAULT_STEPS when no time budget either)
    time_budget: float | None = None   # seconds of training
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: int = 100                  # steps of linear lr warm-up
    decay: bool = True                 # cosine decay to lr / 10 over the step budget (needs `steps`)
    eval_every: int = 50               # held-out evaluation (and curve point) every this many steps
    stop_at: float | None = None       # stop once held-out per-sequence accuracy reaches this
    tolerance: float = 0.01            # numerical outputs: |prediction - label| <= tolerance is correct
    seed: int = 0
    threads: int = 1                   # torch CPU threads
    # selector supervision
    supervise: bool = False
    supervise_weight: float = 1.0
    supervise_pairs: list | None = None  # [{"layer": 1, "head": 0, "selector": id}], default: in order per layer
    # reporting
    example: list | str | None = None  # the input whose attention maps the result shows
    match_examples: int = 500          # held-out inputs used to score heads against selectors

    @classmethod
    def from_dict(cls, d: dict) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise TrainError(f"unknown training option(s): {', '.join(unknown)}")
        if "vocab" not in d:
            raise TrainError("the training options need a vocab")
        return cls(**d).validated()

    def to_dict(self) -> dict:
        return asdict(self)

    def validated(self) -> "TrainConfig":
        if isinstance(self.vocab, str):
            self.vocab = list(self.vocab)
        ints = {"min_len": 1, "max_len": 1, "n_train": 1, "n_test": 1, "d_model": 1, "batch_size": 1,
                "warmup": 0, "eval_every": 1, "seed": 0, "threads": 1, "match_examples": 1}
        optional_ints = {"layers": 0, "heads": 1, "d_mlp": 1, "steps": 1}
        for name, low in list(ints.items()) + list(optional_ints.items()):
            v = getattr(self, name)
            if v is None and name in optional_ints:
                continue
            if not isinstance(v, int) or isinstance(v, bool) or v < low:
                raise TrainError(f"{name} must be an integer >= {low} (got {v!r})")
        for name, limit in LIMITS.items():
            v = getattr(self, name)
            if v is not None and v > limit:
                raise TrainError(f"{name} {v} is above the limit of {limit}")
        if self.min_len > self.max_len:
            raise TrainError(f"min_len ({self.min_len}) is larger than max_len ({self.max_len})")
        for name in ("lr", "weight_decay", "tolerance", "supervise_weight"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise TrainError(f"{name} must be a non-negative number (got {v!r})")
        if self.time_budget is not None and (not isinstance(self.time_budget, (int, float)) or self.time_budget <= 0):
            raise TrainError(f"time_budget must be a positive number of seconds (got {self.time_budget!r})")
        if self.stop_at is not None and not 0 < self.stop_at <= 1:
            raise TrainError(f"stop_at must be in (0, 1] (got {self.stop_at!r})")
        if self.kind not in ("auto", "categorical", "numerical"):
            raise TrainError(f"kind must be auto, categorical or numerical (got {self.kind!r})")
        if self.steps is None and self.time_budget is None:
            self.steps = DEFAULT_STEPS
        return self
