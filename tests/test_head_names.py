"""Every head of a program has a name of its own (issue 20, item 9): an unnamed selector used twice (inside
the library's `sort`, say) is told apart by what it computes."""
from pathlib import Path

from rasplay import engine

ROOT = Path(__file__).resolve().parents[1]


def test_stable_sort_heads_have_distinct_names():
    doc = engine.evaluate((ROOT / "examples" / "sort_stable.rasp").read_text(), ["banana"])
    names = [h["name"] for layer in doc["analysis"]["heads"] for h in layer]
    assert len(set(names)) == len(names), names
    assert "select(target_pos, indices, ==) (for sorted_desc)" in names


def test_named_heads_keep_their_names():
    doc = engine.evaluate((ROOT / "examples" / "reverse.rasp").read_text(), ["hello"])
    assert [h["name"] for layer in doc["analysis"]["heads"] for h in layer] == ["full_s", "flip"]
