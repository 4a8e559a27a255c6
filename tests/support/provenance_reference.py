"""An independent reference for provenance (issue 22), used by tests/unit/test_provenance.py and tests/browser/test_diagram.py:
a plain recursive walk over an evaluation document (graph edges, the trace's selector matrices), one position
at a time. It shares nothing with engine/provenance.py."""
from __future__ import annotations

# a program whose provenance the tests computed by hand (tests/unit/test_provenance.py, tests/api/test_api_provenance.py)
PROGRAM = """
same = select(tokens, tokens, ==);
w = selector_width(same);
before = select(indices, indices, <);
s = aggregate(before, w);
total = s + tokens;
"""


def reference_provenance(doc: dict, target: int, position: int):
    """An independent walk over the evaluation document (graph edges, the trace's selector matrices):
    the (node, position) cells and (selector, query, key) cells one value read. One position at a time,
    plain recursion: nothing shared with engine/provenance.py."""
    kinds = {n["id"]: n["kind"] for n in doc["analysis"]["graph"]["nodes"]}
    inputs: dict[int, dict[str, int]] = {}
    for e in doc["analysis"]["graph"]["edges"]:
        inputs.setdefault(e["target"], {})[e["role"]] = e["source"]
    matrix = {int(k): v["values"] for k, v in doc["trace"]["nodes"].items()}
    cells, used = set(), set()

    def visit(node, p):
        if (node, p) in cells:
            return
        cells.add((node, p))
        kind, parts = kinds[node], inputs.get(node, {})
        if kind in ("map", "sequencemap"):
            for child in parts.values():
                visit(child, p)
        elif kind in ("aggregate", "selector_width"):
            for k, on in enumerate(matrix[parts["selector"]][p]):
                if on:
                    use(parts["selector"], p, k)
                    if kind == "aggregate":
                        visit(parts["sop"], k)

    def use(sel, q, k):
        used.add((sel, q, k))
        kind, parts = kinds[sel], inputs[sel]
        if kind == "select":
            visit(parts["queries"], q)
            visit(parts["keys"], k)
        elif kind == "select_or":
            for part in (parts["left"], parts["right"]):
                if matrix[part][q][k]:
                    use(part, q, k)
        else:
            for part in parts.values():
                use(part, q, k)

    visit(target, position)
    return cells, used
