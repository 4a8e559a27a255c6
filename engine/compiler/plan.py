"""What the "choose encodings" pass decides and the later passes build: residual blocks, heads,
MLP targets, the output. Also `Availability`: which block holds a value at a given point of the
forward pass (sublayers are numbered -1 embedding, 2l-1 attention of layer l, 2m MLP of layer m,
2L+1 the unembedding; the pre-attention MLP, when there is one, is 0).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..program import Node
from .fused import Fused, Key, depends_on

EMBEDDING = -1


def attn(layer: int) -> int:
    return 2 * layer - 1


def mlp(layer: int) -> int:
    return 2 * layer


def sublayer_name(s: int, offset: int = 0) -> str:
    """'embedding', 'layer 2 attention', 'layer 1 MLP' (model layer numbers, 1-based)."""
    if s < 0:
        return "embedding"
    if s % 2:
        return f"layer {(s + 1) // 2 + offset} attention"
    return f"layer {s // 2 + offset} MLP"


@dataclass(eq=False)
class Block:
    """A named group of residual dimensions.

    categorical: one dimension per value (`values[i]` is dimension i), one-hot.
    numerical: one dimension holding a number: `phys[i]` when the value is `values[i]` (phys None:
    the value itself). `values` may be None for a numerical block whose possible values are too
    many to list (then nothing may tabulate it).
    provides: the keys whose value this block determines, each as an array aligned with `values`.
    """
    name: str
    kind: str                          # "one" | "bos" | "categorical" | "numerical"
    values: object                     # np.ndarray, list of tuples (joint), or None
    provides: dict
    written: int                       # the sublayer that writes it
    phys: np.ndarray | None = None
    key: Key = None                    # the main key it holds
    note: str = ""
    start: int = -1                    # first residual dimension (set by the residual pass)
    codes: np.ndarray | None = None    # joint blocks: component value codes per dimension
    order: int = 0                     # creation order (ties in the layout)
    dim_list: np.ndarray | None = None # its dimensions when not start .. start+size-1 (reuse.py)

    @property
    def size(self) -> int:
        return len(self.values) if self.kind == "categorical" else 1

    @property
    def dims(self) -> np.ndarray:
        if self.dim_list is not None:
            return self.dim_list
        return np.arange(self.start, self.start + self.size)

    @property
    def identity(self) -> bool:
        return self.kind == "numerical" and self.phys is None

    def phys_values(self) -> np.ndarray:
        """The number stored for each of `values` (numerical blocks)."""
        if self.phys is not None:
            return self.phys
        return np.asarray(self.values).astype(np.float64)

    def labels(self) -> list[str]:
        if self.kind == "categorical":
            return [_label(v) for v in self.values]
        return [self.name]


def _label(v) -> str:
    if isinstance(v, tuple):
        return "(" + ", ".join(_label(x) for x in v) + ")"
    if isinstance(v, (np.generic,)):
        v = v.item()
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return str(v)


@dataclass
class Reader:
    """How a value is read linearly from the residual: from one categorical block (its value for
    each dimension), from a numerical block (value = a * x + b), or as a constant (block None)."""
    block: Block | None
    values: np.ndarray                 # per dimension of block (categorical), or [constant]
    bad: np.ndarray                    # where reading fails (the evaluator errors there)
    affine: tuple | None = None        # numerical block: (a, b)
    terms: list | None = None          # the unembedding only: [(numerical block, a_i)], value = sum a_i x_i + b
                                       # with b = affine[1] (a linear numerical output needs no MLP)


@dataclass
class GroupTable:
    """One additive term of a head's score: table[query value, key value] in {0, 1}."""
    query: Block | None                # None: the `one` dimension (a constant side)
    key: Block | None
    table: np.ndarray                  # bool, (query size, key size)


@dataclass
class ValueRead:
    """One aggregate served by an aggregate head: read `reader` into block `out`; BOS gives `default`."""
    key: Key
    out: Block
    reader: Reader
    default: object
    default_ok: bool                   # False: the default cannot be represented (the evaluator errors)


@dataclass
class HeadPlan:
    layer: int                         # analysis layer
    selector: Node
    mode: str                          # "aggregate" (BOS scored just below a match) | "width" (BOS = a match)
    tables: list[GroupTable]
    reads: list[ValueRead] = field(default_factory=list)
    out: Block | None = None           # width mode: the block receiving the BOS weight 1/(w+1)
    part: tuple | None = None          # (j, k): part j of a selector split over k heads
    serves: list = field(default_factory=list)     # display names of what it computes

    @property
    def bos_level(self) -> float:
        m = len(self.tables)
        return float(m) if self.mode == "width" else m - 0.5


@dataclass
class Target:
    """An MLP output: the value of `key` (or of the tuple of `components`) written into `block`."""
    key: Key
    block: Block
    layer: int                         # analysis MLP layer (0: the pre-attention MLP)
    node: Node | None = None
    components: tuple | None = None    # joint blocks: the nodes of the tuple


@dataclass
class OutputPlan:
    node: Node
    encoding: str
    classes: np.ndarray | None         # categorical: the class of each logit
    reader: Reader


@dataclass
class Plan:
    blocks: list[Block]
    heads: list[HeadPlan]
    targets: list[Target]
    output: OutputPlan
    virtual: dict
    constraints: list
    layers: int                        # the analysis' layer count
    pre_mlp: bool                      # an MLP sublayer before the first attention is needed
    notes: list[str]
    availability: "Availability"
    name_of: object = None             # key -> display name
    joints: list = field(default_factory=list)   # (keys, rows): values some numerical blocks take together


class Availability:
    """Which block holds a key's value at a point of the forward pass."""

    RANK = {"categorical": 0, "numerical": 1}

    def __init__(self, virtual: dict):
        self.virtual = virtual
        self.by_key: dict = {}
        self.count = 0

    def register(self, block: Block):
        self.count += 1
        block.order = self.count
        for k in block.provides:
            self.by_key.setdefault(k, []).append(block)

    def best(self, key, before: int, kind: str | None = None) -> Block | None:
        """The best block holding `key` written before sublayer `before`: a categorical block of its
        own first, then a numerical one storing the value itself, then others, then joint blocks."""
        cands = [b for b in self.by_key.get(key, []) if b.written < before and (kind is None or b.kind == kind)]
        if not cands:
            return None
        return min(cands, key=lambda b: (len(b.provides) > 1, self.RANK.get(b.kind, 2), not b.identity,
                                         b.written))

    def sources(self, node, before: int) -> list[Block] | None:
        """The blocks `node` is computed from (through elementwise ops), None if not computable."""
        keys = depends_on(node, lambda k: self.best(k, before) is not None, self.virtual)
        if keys is None:
            return None
        blocks = []
        for k in sorted(keys, key=repr):
            b = self.best(k, before)
            if all(b is not x for x in blocks):
                blocks.append(b)
        return sorted(blocks, key=lambda b: b.order)

    def read(self, node, block: Block) -> tuple[np.ndarray, np.ndarray]:
        """The value of `node` for each value of `block` (which must determine it)."""
        env = {k: np.asarray(v) for k, v in block.provides.items()}
        return Fused(env, len(block.values), self.virtual).value(node)
