"""engine/provenance.py: the cells one value read, checked against hand-computed cases and an independent
walk (the /api/v1/provenance route over HTTP: tests/api/test_api_provenance.py)."""
from __future__ import annotations

from rasplay.engine.provenance import provenance
from support.provenance_reference import PROGRAM


def by_name(doc, key):
    return {entry["name"]: entry for entry in doc[key]}


def test_hand_computed_case():
    # input [3, 1, 3]: w = [2, 1, 2]; s at query 2 averages w over keys 0 and 1 (indices < 2);
    # w at 0 counted the keys holding 3 (0 and 2), w at 1 the key holding 1 (1)
    doc = provenance(PROGRAM, [3, 1, 3], 2, name="total")["provenance"]
    assert doc["position"] == 2 and doc["name"] == "total"
    heads = by_name(doc, "heads")
    assert heads["s"]["reads"] == [{"query": 2, "keys": [0, 1]}]
    assert heads["w"]["reads"] == [{"query": 0, "keys": [0, 2]}, {"query": 1, "keys": [1]}]
    assert heads["s"]["layer"] == 2 and heads["w"]["layer"] == 1
    sops = by_name(doc, "sops")
    assert sops["total"]["positions"] == [2]
    assert sops["s"]["positions"] == [2]
    assert sops["w"]["positions"] == [0, 1]
    assert sops["tokens"]["positions"] == [0, 1, 2]      # 2 for total itself; 0, 1, 2 compared by `same`
    assert sops["indices"]["positions"] == [0, 1, 2]     # query 2 and keys 0, 1 of `before`
    # per layer of the reader: layer 2 (the MLP of `total`) read tokens at 2; layer 1 (`same`) all three
    assert sops["tokens"]["reads"] == [{"layer": 2, "positions": [2]}, {"layer": 1, "positions": [0, 1, 2]}]
    assert sops["w"]["reads"] == [{"layer": 2, "positions": [0, 1]}]
    cells = {e["node"]: e["cells"] for e in doc["selectors"]}
    assert cells[heads["s"]["selector"]] == [[2, 0], [2, 1]]
    assert cells[heads["w"]["selector"]] == [[0, 0], [0, 2], [1, 1]]
    assert doc["mlps"] == [2]


def test_empty_row_reads_nothing_and_or_passes_only_selecting_parts():
    source = """
a = select(indices, indices, <);
b = select(tokens, tokens, ==);
either = a or b;
x = aggregate(either, tokens);
y = aggregate(a, tokens);
"""
    # input [5, 6, 5], query 2: `a` selects keys 0, 1 (indices < 2); `b` keys 0, 2 (tokens == 5);
    # `either` keys 0, 1, 2
    doc = provenance(source, [5, 6, 5], 2, name="x")["provenance"]
    heads = by_name(doc, "heads")
    assert heads["x"]["reads"] == [{"query": 2, "keys": [0, 1, 2]}]
    cells = {e["node"]: e["cells"] for e in doc["selectors"]}
    names = {e["name"]: e["node"] for e in doc["sops"]}
    assert names.keys() == {"x", "tokens", "indices"}
    # the parts of `or` are charged only with the cells they selected
    cell_sets = sorted(cells.values())
    assert [[2, 0], [2, 1]] in cell_sets            # a
    assert [[2, 0], [2, 2]] in cell_sets            # b
    assert [[2, 0], [2, 1], [2, 2]] in cell_sets    # either
    # query 0 of `a` selects nothing: y there is the default and read no key
    empty = provenance(source, [5, 6, 5], 0, name="y")["provenance"]
    assert by_name(empty, "heads")["y"]["reads"] == [{"query": 0, "keys": []}]
    assert {e["name"] for e in empty["sops"]} == {"y"}


def test_errors_are_reasons():
    assert provenance(PROGRAM, [3, 1, 3], 7, name="total")["error"]["kind"] == "position"
    assert provenance(PROGRAM, [3, 1, 3], 0, name="nope")["error"]["kind"] == "name"


# ------------------------------------------------------------------ against an independent walk, on any input

from pathlib import Path  # noqa: E402

from hypothesis import given, strategies as st  # noqa: E402

from support.provenance_reference import reference_provenance  # noqa: E402
from rasplay import engine  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROGRAMS = {name: (EXAMPLES / f"{name}.rasp").read_text() for name in ("dyck2", "sort_unique", "most_frequent")}
ALPHABETS = {"dyck2": "(){}", "sort_unique": "abcdefgh", "most_frequent": "abc"}


@given(data=st.data(), name=st.sampled_from(sorted(PROGRAMS)))
def test_engine_provenance_equals_the_reference_walk(data, name):
    source = PROGRAMS[name]
    alphabet = ALPHABETS[name]
    text = data.draw(st.text(alphabet, min_size=1, max_size=8), label="input")
    if name == "sort_unique":   # its tokens must be distinct
        text = "".join(dict.fromkeys(text))
    doc = engine.evaluate(source, [text], trace=0)
    nodes = {n["id"]: n for n in doc["analysis"]["graph"]["nodes"]}
    sops = [n for n in doc["results"] if doc["results"][n]["kind"] == "sop" and doc["results"][n]["errors"] == [None]]
    target = data.draw(st.sampled_from(sops), label="s-op")
    position = data.draw(st.integers(0, len(text) - 1), label="position")
    answer = provenance(source, text, position, name=target)["provenance"]
    cells, used = reference_provenance(doc, answer["node"], position)
    engine_cells = {(s["node"], p) for s in answer["sops"] for p in s["positions"]}
    assert engine_cells == {(n, p) for n, p in cells if nodes[n]["kind"] != "constant"}
    engine_used = {(s["node"], q, k) for s in answer["selectors"] for q, k in s["cells"]}
    assert engine_used == used
