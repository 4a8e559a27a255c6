"""The language's vocabulary comes from the engine alone (issue 24): the grammar's keywords, the
interpreter's built-in names, the library's names and the graph's node kinds, checked here against the
files that define them (read independently, as text); the evaluation document carries the `# title:`
header and each graph node's role, so the page parses no header and keeps no list of kinds or words."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rasplay import engine
from rasplay.engine import program
from rasplay.engine.vocabulary import vocabulary

ROOT = Path(__file__).resolve().parents[2]
GRAMMAR = (ROOT / "engine" / "lang" / "grammar.lark").read_text()
LIBRARY = (ROOT / "engine" / "library.rasp").read_text()


def test_keywords_are_the_grammars_quoted_words():
    quoted = set(re.findall(r'"([A-Za-z_]\w*)"', re.sub(r"//[^\n]*", "", GRAMMAR)))
    assert vocabulary()["keywords"] == sorted(quoted)
    assert {"def", "select", "for", "load", "not"} <= quoted


def test_library_names_are_the_names_library_rasp_defines():
    defined = set(re.findall(r"^def\s+([A-Za-z]\w*)", LIBRARY, re.M)) | set(
        re.findall(r"^([A-Za-z]\w*)\s*=", LIBRARY, re.M))
    assert vocabulary()["library"] == sorted(defined)
    assert "select_next_identical" in defined and "length" in defined


def test_builtins_inputs_and_atoms_are_the_interpreters_reserved_names():
    v = vocabulary()
    assert v["builtins"] == sorted(["aggregate", "selector_width", "round", "indicator", "range", "zip", "len",
                                    "aggregate_sum"])
    assert v["inputs"] == sorted(["tokens", "indices", "tokens_str", "tokens_int", "tokens_float", "tokens_bool",
                                  "tokens_asis"])
    assert v["atoms"] == ["False", "True"]
    for name in v["builtins"] + v["inputs"] + v["atoms"] + v["library"]:   # each one the interpreter reserves
        if name == "tokens":      # reassignable, as in the original
            continue
        diags = engine.evaluate(f"{name} = 1;", ["ab"])["diagnostics"]
        assert any("reserved" in d["message"] for d in diags), name


def test_every_node_kind_has_one_role_and_the_kinds_list_them_by_role():
    kinds = {cls.kind for cls in vars(program).values()
             if isinstance(cls, type) and issubclass(cls, program.Node) and "kind" in vars(cls)} - {"node"}
    assert kinds == set(program.ROLES)
    by_role = vocabulary()["kinds"]
    assert sorted(k for ks in by_role.values() for k in ks) == sorted(kinds)
    assert by_role["selector"] == ["select", "select_and", "select_or", "select_not", "select_closest"]
    assert by_role["attention"] == ["aggregate", "selector_width", "aggregate_sum"]


def test_graph_nodes_carry_their_role():
    doc = engine.evaluate("s = select(indices, indices, ==) and not select(tokens, tokens, <);\n"
                          "x = aggregate(s, indices + 1);\nw = selector_width(s);", ["ab"])
    roles = {n["kind"]: n["role"] for n in doc["analysis"]["graph"]["nodes"]}
    assert roles == {"tokens": "input", "indices": "input", "select": "selector", "select_and": "selector",
                     "select_not": "selector", "map": "elementwise", "aggregate": "attention",
                     "selector_width": "attention"}


@pytest.mark.parametrize("source, title", [
    ("# title: Reverse a word\n# output: r\nr = tokens;", "Reverse a word"),
    ("#title:   spaced  \nr = tokens;", "spaced"),
    ("r = tokens;\n# title: not a header\n", None),           # below the first statement: a comment
    ("r = tokens;", None),
])
def test_the_evaluation_document_carries_the_header_title(source, title):
    assert engine.evaluate(source, ["ab"])["title"] == title


def test_the_page_keeps_no_copy_of_the_vocabulary():
    """No word list, kind list or header regex of the language in the page's own modules."""
    page = {p.name: p.read_text() for p in (ROOT / "web" / "js").glob("*.js")}
    for name, text in page.items():
        for word in ["select_next_identical", "load_from_location", "mark_first_instance", "tokens_float",
                     "select_and", "sequencemap"]:
            assert f'"{word}"' not in text, (name, word)
        assert "\\s*title" not in text, name        # the header regex the page had (`/^#\s*title:.../`)
