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


def layout(plan: Plan, offset: int) -> list[dict]:
    """The residual layout as JSON: each block's dimensions, encoding, labels and writer."""
    out = []
    for b in plan.blocks:
        entry = {"name": b.name, "kind": b.kind, "start": b.start, "size": b.size,
                 "written_by": sublayer_name(b.written, offset)}
        if b.kind == "categorical":
            entry["values"] = b.labels()
        elif b.kind == "numerical":
            entry["encoding"] = b.note or "the value itself"
        out.append(entry)
    return out
