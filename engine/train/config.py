"""The options of a training run (JSON-able, torch-free, so a server can validate a request without torch)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from .errors import TrainError

DEFAULT_STEPS = 2000

# upper bounds that keep one CPU job bounded
LIMITS = {"blocks": 512, "max_len": 512, "test_max_len": 512, "layers": 12, "heads": 16, "d_model": 1024, "batch_size": 4096,
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
    blocks: int | None = None          # inputs as 1..blocks runs of one token (L_k's a+b+a+...), not uniform tokens
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
    lr: float | None = None            # default 1e-3 (program mode: PROGRAM_LR)
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
    # training for length (docs/length_generalization.md)
    test_min_len: int | None = None    # longer held-out inputs: lengths test_min_len..test_max_len (> max_len)
    test_max_len: int | None = None
    bin_width: int | None = None       # the longer range's bins (default: the training range's width)
    positional: str = "learned"        # learned | random_offset (Huang et al.) | none (no positional encoding)
    causal: bool = False               # a causal (decoder) mask: each position attends to itself and before
    device: str = "cpu"                # cpu | cuda | auto (cuda when present)
    # program mode (docs/learned_programs.md): a constrained model read back as a RASP program
    mode: str = "standard"             # standard | program
    num_heads: int | None = None       # program mode: numerical (counting) heads per layer (default 1)
    mlps: int | None = None            # program mode: categorical MLPs (lookup tables) per layer (default 1)
    eos: bool = False                  # program mode: an end token "</s>" after each input

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
        optional_ints = {"blocks": 1, "layers": 0, "heads": 1, "num_heads": 0, "mlps": 0, "d_mlp": 1, "steps": 1,
                         "test_min_len": 1, "test_max_len": 1,
                         "bin_width": 1}
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
        if self.lr is None:
            self.lr = PROGRAM_LR if self.mode == "program" else STANDARD_LR
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
        self._validate_lengths()
        self._validate_mode()
        if self.steps is None and self.time_budget is None:
            self.steps = DEFAULT_STEPS
        return self

    def _validate_lengths(self) -> None:
        if self.positional not in POSITIONAL:
            raise TrainError(f"positional must be one of {', '.join(POSITIONAL)} (got {self.positional!r})")
        if self.device not in DEVICES:
            raise TrainError(f"device must be one of {', '.join(DEVICES)} (got {self.device!r})")
        if not isinstance(self.causal, bool):
            raise TrainError(f"causal must be true or false (got {self.causal!r})")
        test = (self.test_min_len, self.test_max_len)
        if (test[0] is None) != (test[1] is None):
            raise TrainError("give both test_min_len and test_max_len (the longer held-out lengths), or neither")
        if test[0] is not None:
            if test[0] <= self.max_len:
                raise TrainError(f"the test lengths must be longer than the training lengths: test_min_len "
                                 f"({test[0]}) must be above max_len ({self.max_len})")
            if test[0] > test[1]:
                raise TrainError(f"test_min_len ({test[0]}) is larger than test_max_len ({test[1]})")
            width = self.bin_width or (self.max_len - self.min_len + 1)
            if -(-(test[1] - test[0] + 1) // width) > MAX_BINS:
                raise TrainError(f"the test lengths {test[0]}-{test[1]} in bins of {width} make more than "
                                 f"{MAX_BINS} bins; choose a larger bin_width")
        elif self.bin_width is not None:
            raise TrainError("bin_width needs test lengths (test_min_len and test_max_len)")

    def _validate_mode(self) -> None:
        if self.mode not in MODES:
            raise TrainError(f"mode must be one of {', '.join(MODES)} (got {self.mode!r})")
        if not isinstance(self.eos, bool):
            raise TrainError(f"eos must be true or false (got {self.eos!r})")
        if self.mode == "standard":
            used = [n for n in PROGRAM_ONLY if getattr(self, n) not in (None, False)]
            if used:
                raise TrainError(f"{', '.join(used)} apply to program mode only (add mode program)")
            return
        for name, default in PROGRAM_REFUSES.items():
            if getattr(self, name) != default:
                raise TrainError(f"program mode does not take {name} (it trains its own constrained model on "
                                 "the CPU, for the training lengths only; docs/learned_programs.md)")
        if not all(isinstance(t, str) for t in self.vocab):
            raise TrainError("program mode reads string tokens (a learned program's input holds the beginning "
                             "token <s> beside them); give the vocabulary as characters or a list of strings")
        if any(t in ("<s>", "</s>") for t in self.vocab):
            raise TrainError("the vocabulary holds <s> or </s>, which program mode reserves for the beginning and "
                             "end of each input")
        if self.kind == "numerical":
            raise TrainError("program mode learns categorical outputs only (its classifier picks a class)")
        if not self.bos:
            raise TrainError("program mode always reads a beginning token <s> (leave bos on)")
        layers, heads = self.layers or 0, self.heads or 0
        if layers > PROGRAM_LIMITS["layers"] or heads > PROGRAM_LIMITS["heads"]:
            raise TrainError(f"program mode takes at most {PROGRAM_LIMITS['layers']} layers of "
                             f"{PROGRAM_LIMITS['heads']} heads (got {layers} layers, {heads} heads)")
        for name in ("num_heads", "mlps"):
            v = getattr(self, name)
            if v is not None and v > PROGRAM_LIMITS[name]:
                raise TrainError(f"{name} {v} is above program mode's limit of {PROGRAM_LIMITS[name]}")
        if self.max_len + 1 + self.eos > PROGRAM_LIMITS["positions"]:
            raise TrainError(f"program mode takes inputs of at most {PROGRAM_LIMITS['positions'] - 1 - self.eos} "
                             f"tokens (max_len {self.max_len}): its tables grow with the positions")
        if len(self.vocab) + 1 + self.eos > PROGRAM_LIMITS["positions"]:
            raise TrainError(f"program mode takes at most {PROGRAM_LIMITS['positions'] - 1 - self.eos} "
                             f"vocabulary tokens (got {len(self.vocab)})")

    @property
    def longest(self) -> int:
        """The longest input the model sees (training or test)."""
        return max(self.max_len, self.test_max_len or 0)


POSITIONAL = ("learned", "random_offset", "none")
DEVICES = ("cpu", "cuda", "auto")
MAX_BINS = 32
MODES = ("standard", "program")
STANDARD_LR, PROGRAM_LR = 1e-3, 0.05
PROGRAM_ONLY = ("num_heads", "mlps", "eos")
# options of the standard model that program mode does not take (they must keep their defaults)
PROGRAM_REFUSES = {"supervise": False, "supervise_pairs": None, "test_min_len": None, "test_max_len": None,
                   "bin_width": None, "positional": "learned", "causal": False, "device": "cpu", "example": None}
# program mode's tables are d_var^3 per MLP, d_var = max(positions, tokens): keep them small
PROGRAM_LIMITS = {"layers": 4, "heads": 8, "num_heads": 4, "mlps": 4, "positions": 40}
