"""The length-generalisation part of the dialect document: for each fragment a length-generalisation result
speaks about (C-RASP[periodic, local]: Huang et al.'s theorem; RASP-L: Zhou et al.'s conjecture), whether the
program is in it, the reason and line that keep it out, and what that predicts; with the program's size.

Worded as the results allow: inside, the result's statement and its conditions; outside, "no guarantee from
this program" (the fragment is about programs, and another program for the same task might be inside), never
a prediction of failure.
"""
from __future__ import annotations

from .c_rasp_periodic_local import C_RASP_PL, check_c_rasp_pl
from .rasp_l import RASP_L, check_rasp_l
from .size import program_size
from .sorts import Dialect, span_of

PREDICTION_FRAGMENTS = [(C_RASP_PL, "theorem"), (RASP_L, "conjecture")]

NO_GUARANTEE = "no guarantee from this program"


def _place(node) -> dict:
    span = span_of(node) if node is not None else None
    return {"line": span.line, "col": span.col, "end_line": span.end_line, "end_col": span.end_col} if span else {}


def _entry(fragment, basis: str, node, reason) -> dict:
    member = reason is None
    entry = {"id": fragment.id, "name": fragment.name, "member": member, "reason": reason, "basis": basis}
    entry.update(_place(node))
    if member:
        entry["prediction"] = "guaranteed" if basis == "theorem" else "conjectured"
        entry["statement"] = fragment.theorem
    else:
        where = f" (line {entry['line']})" if "line" in entry else ""
        entry["prediction"] = NO_GUARANTEE
        entry["statement"] = (f"No guarantee from this program: as written it is not in {fragment.name}{where}. "
                              f"That does not predict a failure: another program for the same task might be "
                              f"in {fragment.name}.")
    return entry


def _summary(entries: list, size: dict) -> str:
    c, r = entries
    ops = f"{size['operations']} operations"
    if c["member"]:
        return (f"Length generalisation: guaranteed in Huang et al.'s idealised setting "
                f"({c['name']}; {ops}).")
    if r["member"]:
        return f"Length generalisation: predicted by Zhou et al.'s conjecture, not a theorem (RASP-L; {ops})."
    lines = "; ".join(f"not {e['name']}" + (f", line {e['line']}" if "line" in e else "") for e in entries)
    return f"Length generalisation: {NO_GUARANTEE} ({lines}; {ops}); another program for the task might have one."


def length_generalization(interp, output_node, d: Dialect) -> dict:
    """The document's `length_generalization` part for `output_node`, typed as `d` by the shared walk."""
    nodes = interp.graph.ancestors([output_node])
    size = program_size(nodes)
    entries = [_entry(C_RASP_PL, "theorem", *check_c_rasp_pl(d)),
               _entry(RASP_L, "conjecture", *check_rasp_l(interp, nodes, d.shapes))]
    return {"fragments": entries, "size": size, "summary": _summary(entries, size)}
