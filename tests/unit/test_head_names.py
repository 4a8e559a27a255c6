"""The analysis gives every head a `display` text (issue 22): the selector's own name, else one generated
from its parts' names, else `selector of <name>` after what the head computes (issue 32), else
`L<layer> head <slot>`; two heads never show the same text; `expression` is the
selector's full source text."""
from __future__ import annotations

from pathlib import Path

import pytest

from rasplay import engine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def heads(source: str) -> list[dict]:
    return [h for row in engine.evaluate(source, ["abca"])["analysis"]["heads"] for h in row]


def test_named_generated_and_fallback_texts():
    source = """
flip = select(indices, length - indices - 1, ==);
r = aggregate(flip, tokens);
same = selector_width(select(tokens, tokens, ==));
odd = aggregate(select(indices, (indices + 1) * 2 - length, ==), tokens);
"""
    shown = {h["display"]: h for h in heads(source)}
    assert "flip" in shown                              # its own name
    assert "tokens == tokens" in shown                  # generated from its parts' names
    assert "full_s" in shown                            # the library's length
    # parts without short names (it needs length: layer 2): named after what the head computes
    assert not [d for d in shown if d.startswith("L")]
    assert shown["selector of odd"]["expression"] == "select(indices, (indices + 1) * 2 - length, ==)"


def test_unnamed_parts_are_named_after_what_is_built_on_them():
    source = """
prefix = select(indices, indices, <=);
depth = round(aggregate(prefix, indicator(tokens == "(")) * (indices + 1));
w = selector_width(select(depth, depth + indices * 2, ==) and select(indices, indices, <));
"""
    analysis = engine.evaluate(source, ["(()"])["analysis"]
    assert [h["display"] for row in analysis["heads"] for h in row] == ["prefix", "selector of w"]
    nodes = {n["name"]: n for n in analysis["graph"]["nodes"]}
    assert nodes['indicator(tokens == "(")']["part_of"] == "depth"
    assert nodes["indices + 1"]["part_of"] == "depth"
    assert nodes["select(indices, indices, <)"]["part_of"] == "w"
    assert nodes["depth"]["part_of"] is None and nodes["tokens"]["part_of"] is None   # named; an input
    # with nothing named built on it, a head keeps its place as its text
    alone = engine.evaluate("x = aggregate(select(indices, (indices + 1) * 2 - length, ==), tokens) == 1;\n", ["ab"])
    assert [h["display"] for row in alone["analysis"]["heads"] for h in row][-1] == "selector of x"


def test_two_heads_never_show_the_same_text():
    # the same local name in two calls of a function, and the same selector in two layers
    source = """
def pick(k) { s = select(k, k, ==); return aggregate(s, tokens); }
a = pick(indices);
b = pick(tokens);
c = aggregate(select(indices, indices, ==), a);
d = aggregate(select(indices, indices, ==), c);
"""
    shown = [h["display"] for h in heads(source)]
    assert len(shown) == len(set(shown)), shown
    assert any(d.startswith("s ") for d in shown)       # the local name kept, told apart by layer or id


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.rasp")), ids=lambda p: p.stem)
def test_every_example_has_distinct_head_texts(path):
    shown = [h["display"] for h in heads(path.read_text())]
    assert len(shown) == len(set(shown)), shown
    assert all(text and "…" not in text for text in shown), shown


def test_stable_sort_heads_are_told_apart():
    # the library's sort uses one unnamed selector in two calls (issue 20, item 9)
    doc = engine.evaluate((EXAMPLES / "sort_stable.rasp").read_text(), ["banana"])
    shown = [h["display"] for layer in doc["analysis"]["heads"] for h in layer]
    assert len(shown) == len(set(shown)), shown


def test_named_heads_keep_their_names():
    doc = engine.evaluate((EXAMPLES / "reverse.rasp").read_text(), ["hello"])
    assert [h["display"] for layer in doc["analysis"]["heads"] for h in layer] == ["full_s", "flip"]
