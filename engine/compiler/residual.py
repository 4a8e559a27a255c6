"""Pass 5, allocate the residual stream: give every block its dimensions.

Order: `one` (1 everywhere), `bos` (1 at the BOS position only), the token and position one-hots,
then every other block in the order of the sublayer that writes it.
"""
from __future__ import annotations

from .plan import Block, Plan, sublayer_name

FIRST = {"one": 0, "bos": 1, "tokens": 2, "indices": 3}


def allocate_residual(plan: Plan) -> int:
    """Set each block's `start`; order plan.blocks by position; return the residual width."""
    def rank(b: Block):
        return (FIRST.get(b.name, 4), b.written, b.order)

    plan.blocks.sort(key=rank)
    start = 0
    for b in plan.blocks:
        b.start = start
        start += b.size
    return start


def layout(plan: Plan, offset: int, live: dict | None = None, n_layers: int = 0) -> list[dict]:
    """The residual layout as JSON: each block's dimensions, encoding, labels and writer; for a block whose
    dimensions are later given to another block (reuse.py), the MLP that erases it (`erased_by`)."""
    out = []
    for b in plan.blocks:
        entry = {"name": b.name, "kind": b.kind, "start": b.start, "size": b.size,
                 "written_by": sublayer_name(b.written, offset)}
        if b.dim_list is not None:   # dimensions given up by dead blocks (reuse.py), not contiguous
            entry["dims"] = [int(j) for j in b.dim_list]
        erased = (live or {}).get(b.name, (0, 2 * n_layers + 2))[1]
        if erased <= 2 * n_layers:
            entry["erased_by"] = f"layer {(erased - 1) // 2 + 1} MLP"
        if b.kind == "categorical":
            entry["values"] = b.labels()
        elif b.kind == "numerical":
            entry["encoding"] = b.note or "the value itself"
        out.append(entry)
    return out
