"""From program text to the model's Program: interpret it, find the target s-op, and read its fragment
(causal B-RASP or causal C-RASP, by the dialect check) and its selector shapes."""
from __future__ import annotations

from dataclasses import dataclass

from ..dialect import check_dialect, type_program
from ..interpret import interpret
from ..lang.errors import RaspError
from ..limits import DEFAULT_LIMITS
from .model import Program, Unsupported

FRAGMENT_NAMES = {"b-rasp": "causal B-RASP", "c-rasp": "causal C-RASP"}


@dataclass
class Built:
    program: Program | None
    fragment: str | None         # b-rasp | c-rasp | None (outside both, or causal fails)
    reason: str | None           # why not, when program is None


def build(source: str, target: str, alphabet: tuple, tag: str, limits=DEFAULT_LIMITS) -> Built:
    """The program's model, or the reason there is none (outside the fragments, or a construct the
    model does not represent)."""
    interp = interpret(source, limits)
    try:
        doc = check_dialect(interp=interp, output=target)
    except RaspError as e:
        return Built(None, None, e.message if hasattr(e, "message") else str(e))
    members = {f["id"]: f for f in doc["fragments"]}
    fragment = next((f for f in ("b-rasp", "c-rasp") if members[f]["member"]), None)
    if fragment is None:
        return Built(None, None, f"it is outside B-RASP and C-RASP ({members['c-rasp']['reason']})")
    if not doc["causal"]["member"]:
        return Built(None, None, f"it is not causal ({doc['causal']['reason']})")
    node = next(d.value for d in reversed(interp.definitions) if d.name == target)
    dialect = type_program(interp, node)
    try:
        return Built(Program(tag, interp, node, dialect, tuple(alphabet)), fragment, None)
    except Unsupported as e:
        return Built(None, fragment, f"the proof's model does not represent {e}")
