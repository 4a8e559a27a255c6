"""The dialect document: which fragments a program's output belongs to, each with the reason (and line) it
is not in a smaller one, the causal check and the theorem of the smallest fragment."""
from __future__ import annotations

from ..lang.errors import RaspError, Span
from ..program import Node
from .b_rasp import B_RASP
from .c_rasp import C_RASP
from .length_free import LENGTH_FREE
from .prediction import length_generalization
from .rasp import RASP
from .sorts import Dialect, span_of
from .tl_count import TL_COUNT
from .walk import type_program

# The fragments of the length-free ladder, smallest first.
LADDER = [B_RASP, C_RASP, TL_COUNT, LENGTH_FREE, RASP]

FRAGMENTS = [(f.id, f.name) for f in LADDER]

THEOREMS = {f.id: f.theorem for f in LADDER}

# Which features each fragment lacks (in order of the reason given first).
_EXCLUDES = {f.id: list(f.excludes) for f in LADDER if f.id != "rasp"}


def _place(node: Node | None) -> dict:
    span = span_of(node) if node is not None else None
    return {"line": span.line, "col": span.col, "end_line": span.end_line, "end_col": span.end_col} if span else {}


def check_dialect(source: str | None = None, output: str | None = None, *, interp=None, limits=None,
                  load_dirs=None) -> dict:
    """Which fragments the program (its `output`, default: the program's default output) belongs to, each
    with the reason it is not in a smaller one, naming the line."""
    from ..header import default_output
    from ..interpret import interpret
    from ..limits import DEFAULT_LIMITS

    if interp is None:
        interp = interpret(source, limits or DEFAULT_LIMITS, load_dirs)
    errors = [d for d in interp.diagnostics if d["severity"] == "error"]
    if errors:
        d = errors[0]
        raise RaspError(d["message"], Span(d["line"], d["col"], d.get("end_line", d["line"]),
                                           d.get("end_col", d["col"] + 1)) if "line" in d else None,
                        d.get("kind", "value"))
    name = output if output is not None else default_output(interp)
    found = [d for d in interp.definitions if d.name == name] if name else []
    if not found:
        raise RaspError(f"the program defines no s-op named '{name}'" if name else
                        "the program defines no s-op to check", None, "name")
    from ..program import SOp
    if not isinstance(found[-1].value, SOp):
        raise RaspError(f"'{name}' is a selector; the dialect check reads an s-op", found[-1].span, "type")
    d = type_program(interp, found[-1].value)
    doc = dialect_document(interp, name, d)
    doc["length_generalization"] = length_generalization(interp, found[-1].value, d)
    return doc


def dialect_document(interp, name: str, d: Dialect) -> dict:
    fragments = []
    smallest = None
    for fid, fname in FRAGMENTS:
        if fid == "rasp":
            member, reason, node = True, None, None
        elif d.outside is not None:
            member, reason, node = False, d.outside.message, d.outside.node
        else:
            hit = next((d.features[f] for f in _EXCLUDES[fid] if f in d.features), None)
            member = hit is None
            node, reason = hit if hit else (None, None)
        entry = {"id": fid, "name": fname, "member": member, "reason": reason}
        entry.update(_place(node))
        fragments.append(entry)
        if member and smallest is None:
            smallest = fid
    causal_node, causal_reason = d.causal_reason if d.causal_reason else (None, None)
    if d.outside is not None and causal_reason is None:
        causal = {"member": None, "reason": "the program is outside the fragments; run the compiler's causal "
                                            "check (compile with causal) for its selectors"}
    else:
        causal = {"member": causal_reason is None, "reason": causal_reason}
        causal.update(_place(causal_node))
    name_of = dict(FRAGMENTS)
    return {
        "output": name,
        "fragments": fragments,
        "smallest": smallest,
        "smallest_name": name_of[smallest],
        "length_free": d.outside is None,
        "causal": causal,
        "theorem": THEOREMS[smallest],
    }
