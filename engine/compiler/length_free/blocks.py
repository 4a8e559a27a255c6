"""What the length-free builder (build.py) writes into the residual stream and hands on: finite values as
one-hot blocks (`Fin`), counts as count / D (`Cnt`), means of counted values (`Rat`), the built sublayers
(`Built`), its limits, and the refusal every part of it raises."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...dialect import span_of
from ...lang.errors import RaspError
from ...program import Node

MAX_COMBOS = 4096        # hidden units of one table MLP / values of one joint block
MAX_SCALE = 2 ** 20      # |den * linear form / D| at most this: float64 error stays far below the 1/(2D) margin
PERIODIC_PROBE = 256     # positions over which a position encoding's values are listed


def refuse(node: Node, message: str) -> RaspError:
    return RaspError(f"length-free compilation: {message}", span_of(node), "compile")


@dataclass
class Fin:
    block: str
    values: list


@dataclass
class Cnt:
    block: str          # count / D (width 1)
    beta: str           # a counting head's output block: its last column is 1 / D
    den: int            # den * count is an integer
    bound: float = 1.0  # |count / D| is at most this


@dataclass
class Rat:
    num: str            # sum of selected values / D
    wid: str            # number of selected keys / D
    beta: str
    den: int            # den * sum is an integer
    default: object
    bound: float = 1.0  # |sum / D| is at most this


@dataclass
class Built:
    ops: list = field(default_factory=list)
    layer_of: list = field(default_factory=list)       # per op: the analysis layer it belongs to
    info: dict = field(default_factory=dict)            # node id -> Fin | Cnt | Rat | ("idx", offset)
    periodic: dict = field(default_factory=dict)
    periodic_form: dict = field(default_factory=dict)   # name -> (start, period, table), or the s-op's name when there is none (position_form.py)
    heads: list = field(default_factory=list)           # descriptions
    notes: list = field(default_factory=list)
    analysis_layers: int = 0
