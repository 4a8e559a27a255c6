"""Layer and head allocation (docs/language.md, "Layers and heads") and the dependency graph."""
from rasplay import engine
from rasplay.engine.examples import find_example


def analysis_of(example_id: str, output=None):
    return engine.analyze(find_example(example_id).source, output=output)


def test_expected_layer_and_head_counts():
    assert (analysis_of("reverse")["layers"], analysis_of("reverse")["heads_per_layer"]) == (2, [1, 1])
    assert (analysis_of("histogram_bos")["layers"], analysis_of("histogram_bos")["heads_per_layer"]) == (1, [1])
    assert analysis_of("histogram")["heads_per_layer"] == [1]
    assert analysis_of("sort_unique")["layers"] == 2
    assert analysis_of("dyck1")["layers"] == 2
    assert analysis_of("sort_by_frequency", "by_frequency")["layers"] == 3


def test_identical_selectors_share_one_head():
    a = engine.analyze("x = aggregate(select(indices, 0, ==), tokens); y = aggregate(select(indices, 0, ==), indices);")
    assert a["heads_per_layer"] == [1]
    assert len(a["heads"][0][0]["ops"]) == 2
    b = engine.analyze("n = length; m = average(indices);")  # both use the library's full_s
    assert b["heads_per_layer"] == [1]


def test_depth_rules():
    a = engine.analyze("""
    s = select(tokens, tokens, ==);          # depth 1
    w = selector_width(s);                   # 1
    m = w + 1;                               # 1 (MLP of layer 1)
    s2 = select(m, indices, ==);             # 2
    agg = aggregate(s2, tokens);             # 2
    late = aggregate(s, m);                  # value at depth 1 -> 2
    """)
    layer = a["names"]
    assert (layer["s"], layer["w"], layer["m"], layer["s2"], layer["agg"], layer["late"]) == (1, 1, 1, 2, 2, 2)
    assert a["heads_per_layer"] == [1, 2]   # layer 2: s2 and s (aggregated late) are two heads


def test_mlps_per_layer():
    a = engine.analyze("x = indices + 1; y = length - x; z = aggregate(select(y, indices, ==), tokens);")
    kinds = {n["id"]: n for n in a["graph"]["nodes"]}
    names = [[kinds[i]["name"] for i in layer] for layer in a["mlps"]]
    assert names[0] == ["x"] and names[1] == ["y"] and names[2] == []


def test_graph_nodes_and_edges_for_diagrams():
    a = analysis_of("reverse")
    nodes = {n["name"]: n for n in a["graph"]["nodes"]}
    flip, rev = nodes["flip"], nodes["reverse"]
    assert flip["kind"] == "select" and flip["layer"] == 2 and flip["head"] == 0
    assert flip["span"] == {"line": 10, "col": 8, "end_line": 10, "end_col": 38}
    assert rev["kind"] == "aggregate"
    edges = {(e["source"], e["target"], e["role"]) for e in a["graph"]["edges"]}
    assert (flip["id"], rev["id"], "selector") in edges
    assert (nodes["opp_index"]["id"], flip["id"], "queries") in edges
    assert nodes["length"]["source"] == "<library>"


def test_evaluation_document_carries_layers():
    doc = engine.evaluate(find_example("reverse").source, ["abc"])
    assert doc["analysis"]["layers"] == 2 and doc["analysis"]["heads_per_layer"] == [1, 1]
    assert doc["results"]["reverse"]["layer"] == 2 and doc["results"]["opp_index"]["layer"] == 1
    assert set(doc) == {"inputs", "output", "title", "results", "analysis", "diagnostics"}
