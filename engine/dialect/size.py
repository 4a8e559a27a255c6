"""The program-size measure the length-generalisation predictions report beside each fragment.

Zhou et al. conjecture that tasks with *short* RASP-L programs length-generalise but give no count; Huang et
al.'s guarantee has no size term. rasplay measures a program by its operations: the number of distinct RASP
operations the output depends on (select, the selector combinators and/or/not, aggregate, selector_width,
map, sequencemap, and the learned-program constructs select_closest and aggregate_sum), each counted once
however often it is used, library code counted by the operations it expands to, and tokens, indices and
constants not counted. The learned-program constructs count like their analogues: select_closest, which
keeps one key of a selector, like not (a selector made from a selector); aggregate_sum like aggregate, an
attention operation. A learned program's tables are maps and its classifier maps and sequencemaps. Two programs that build the same graph have the
same size; the measure does not depend on names, lines or comments.
"""
from __future__ import annotations

# The kinds counted, in the order the document lists them (graph kind -> the name the document uses).
KINDS = {
    "select": "select",
    "select_and": "and",
    "select_or": "or",
    "select_not": "not",
    "aggregate": "aggregate",
    "selector_width": "selector_width",
    "map": "map",
    "sequencemap": "sequencemap",
    "select_closest": "select_closest",
    "aggregate_sum": "aggregate_sum",
}

MEASURE = ("the number of distinct RASP operations the output depends on (select, and/or/not of selectors, "
           "aggregate, selector_width, map, sequencemap, and the learned-program constructs select_closest and "
           "aggregate_sum), each counted once, library code by what it expands to; tokens, indices and constants "
           "are not counted")


def program_size(nodes: list) -> dict:
    """The size of the program made of `nodes` (the output and everything it needs)."""
    by_kind = {name: 0 for name in KINDS.values()}
    for n in nodes:
        if n.kind in KINDS:
            by_kind[KINDS[n.kind]] += 1
    return {"operations": sum(by_kind.values()), "by_kind": by_kind,
            "attention": by_kind["aggregate"] + by_kind["selector_width"] + by_kind["aggregate_sum"],
            "measure": MEASURE}
