"""Pass 2, extract the graph (engine/compiler/extract.py), and the causal check that may follow it
(engine/compiler/causal.py), alone: which nodes the output needs, their layers, their consumers, and
which selectors a causal model refuses."""
from __future__ import annotations

import pytest

from rasplay.engine import RaspError
from rasplay.engine.compiler.causal import check_causal

from support.compiler_stages import extracted, node

PROGRAM = ("unused = tokens == \"b\";\n"
           "flip = select(indices, length - indices - 1, ==);\n"
           "rev = aggregate(flip, tokens);\n"
           "res = rev == \"a\";\n")


def test_only_the_outputs_ancestors_in_topological_order():
    program, graph = extracted(PROGRAM, "res")
    ids = [n.id for n in graph.nodes]
    assert ids == sorted(ids)                                   # children before the nodes that use them
    assert node(program, "unused").id not in graph.by_id
    assert {node(program, n).id for n in ("flip", "rev", "res")} <= set(graph.by_id)


def test_depths_follow_design_section_3():
    """Inputs 0; elementwise ops the max of their inputs; a selector max(keys, queries) + 1; an aggregate
    max(its selector's depth, its value's depth + 1). `length` (a selector_width) is at 1, so flip, which
    reads it, is at 2, and rev, whose value (tokens) is at 0, shares flip's layer: one head in layer 2."""
    program, graph = extracted(PROGRAM, "res")
    depth = {name: graph.depth[node(program, name).id] for name in ("flip", "rev", "res")}
    length = next(n for n in graph.nodes if n.kind == "selector_width")
    assert graph.depth[length.id] == 1
    assert depth == {"flip": 2, "rev": 2, "res": 2}
    assert graph.layers == 2 and graph.heads_per_layer == [1, 1]
    assert [n.id for n in graph.attention_nodes(2)] == [node(program, "rev").id]


def test_consumers_are_the_nodes_that_read_each_node():
    program, graph = extracted(PROGRAM, "res")
    rev, res, flip = (node(program, n) for n in ("rev", "res", "flip"))
    assert graph.consumers[rev.id] == [res] and graph.consumers[flip.id] == [rev]
    assert graph.consumers[res.id] == []


@pytest.mark.parametrize("op", ["<=", "<", "=="])
def test_a_causal_model_accepts_selectors_that_look_back(op):
    program, graph = extracted(f"s = select(indices, indices, {op});\nm = aggregate(s, indices);")
    check_causal(program, graph)


@pytest.mark.parametrize("source, line, word", [
    ("s = select(indices, indices, >);\nm = aggregate(s, indices);", 1, "selects a later position"),
    ("x = 1;\nm = aggregate(select(tokens, tokens, ==), indices);", 2, "may select a later position"),
    ("s = select(indices, indices, <=) or select(indices, indices, >=);\nw = selector_width(s);", 1, "selects"),
])
def test_a_causal_model_refuses_a_selector_that_may_look_ahead(source, line, word):
    program, graph = extracted(source)
    with pytest.raises(RaspError) as info:
        check_causal(program, graph)
    assert word in info.value.message and info.value.span.line == line
