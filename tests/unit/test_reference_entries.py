"""The language reference (engine/reference.py, issue 32 item 4): every built-in function, built-in s-op
and library name the engine defines has one entry, no entry names anything the engine lacks, and every
example runs through the evaluator on its input without an error, defining what it shows."""
from __future__ import annotations

import pytest

from rasplay.engine.evaluate import evaluate
from rasplay.engine.reference import reference
from rasplay.engine.vocabulary import vocabulary

ENTRIES = {e["name"]: e for e in reference()}


def test_every_builtin_input_and_library_name_has_exactly_one_entry():
    words = vocabulary()
    defined = set(words["builtins"]) | set(words["inputs"]) | set(words["library"]) | {"select", "select_closest"}
    names = [e["name"] for e in reference()]
    assert len(names) == len(set(names)), "a name has two entries"
    assert set(names) == defined


def test_each_entry_is_of_its_kind_and_has_a_signature_naming_it_and_a_one_line_meaning():
    words = vocabulary()
    kind_of = {**{n: "built-in" for n in [*words["builtins"], "select", "select_closest"]}, **{n: "input" for n in words["inputs"]},
               **{n: "library" for n in words["library"]}}
    for name, e in ENTRIES.items():
        assert e["kind"] == kind_of[name], name
        assert e["signature"].startswith(name), name
        assert e["meaning"] and "\n" not in e["meaning"] and e["meaning"][-1] in ".?", name


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_the_example_runs_without_error_and_uses_its_name(name):
    e = ENTRIES[name]
    assert name in e["example"]
    doc = evaluate(e["example"], [e["input"]])
    problems = [d for d in doc["diagnostics"] if d["severity"] != "info"]
    assert problems == [], f"{name}: {problems}"
    assert doc["results"], f"{name}: the example defines nothing the page can show"
    for result_name, result in doc["results"].items():
        assert result["errors"] == [None], f"{name}: {result_name} fails on {e['input']!r}"


def test_examples_show_what_their_meaning_says():
    def values(name):
        e = ENTRIES[name]
        results = evaluate(e["example"], [e["input"]])["results"]
        return list(results.values())[-1]["values"][0]
    assert values("aggregate") == ["c", "b", "a"]
    assert values("round") == [0, 0, 1, 2, 2]   # 0.5 and 1.5 -> 0 and 2 (halves to even), 2.0 -> 2
    assert values("shift") == ["_", "h", "e", "l", "l"]
    assert values("sort") == list("aaabnn")
    assert values("count") == [2] * 5
    assert values("select_next_identical") == [-1, 3, 4, 5, -1, -1]
