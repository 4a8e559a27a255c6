"""The dialect check: one test per fragment boundary (B-RASP < C-RASP < TL[#] < length-free < RASP, and
causal), each asserting the reason and the line it names."""
from pathlib import Path

import pytest

from rasplay.engine import RaspError, analyze, check_dialect, compile
from rasplay.engine.examples import find_example

PROGRAMS = Path(__file__).resolve().parents[1] / "length_free_programs"


def fragments(source, output=None):
    doc = check_dialect(source, output)
    return doc, {f["id"]: f for f in doc["fragments"]}


def test_b_rasp_has_existence_tests_and_rightmost_lookups():
    doc, f = fragments((PROGRAMS / "flipflop.rasp").read_text())
    assert doc["smallest"] == "b-rasp" and f["b-rasp"]["member"] and doc["causal"]["member"] is True
    doc, f = fragments(find_example("first_last").source)       # not has_focus(...): "is there any?"
    assert doc["smallest"] == "b-rasp"


def test_b_rasp_to_c_rasp_counting_comparison():
    doc, f = fragments((PROGRAMS / "dyck1.rasp").read_text())
    assert doc["smallest"] == "c-rasp" and not f["b-rasp"]["member"]
    assert f["b-rasp"]["line"] == 6 and "compares counts linearly" in f["b-rasp"]["reason"]
    assert "Counting like transformers" in doc["theorem"]


def test_c_rasp_to_tl_previous_position_and_tie_breaking_and_whole_string_counts():
    doc, f = fragments("prev = shift(tokens, 1, \"_\");\nsame = prev == tokens;")
    assert doc["smallest"] == "b-rasp" and not f["c-rasp"]["member"] and f["tl-count"]["member"]
    assert f["c-rasp"]["line"] == 1 and "previous-position" in f["c-rasp"]["reason"]
    doc, f = fragments((PROGRAMS / "a_before_b.rasp").read_text())
    assert not f["c-rasp"]["member"] and "tie-breaking" in f["c-rasp"]["reason"] and f["c-rasp"]["line"] == 8
    doc, f = fragments((PROGRAMS / "majority.rasp").read_text())     # counts over the whole string
    assert doc["smallest"] == "tl-count" and not f["c-rasp"]["member"] and f["c-rasp"]["line"] == 3
    assert "not a prefix" in f["c-rasp"]["reason"]


def test_tl_to_length_free_position_encodings():
    doc, f = fragments((PROGRAMS / "parity.rasp").read_text())
    assert doc["smallest"] == "length-free" and not f["tl-count"]["member"] and doc["length_free"]
    assert f["tl-count"]["line"] == 6 and "(-1)^i" in f["tl-count"]["reason"]


def test_length_free_to_rasp_names_the_line():
    doc, f = fragments(find_example("parity").source)            # ones % 2: MOD on a count
    assert doc["smallest"] == "rasp" and not doc["length_free"]
    assert f["length-free"]["line"] == 9 and "MOD" in f["length-free"]["reason"]
    doc, f = fragments(find_example("histogram").source)         # the output is a count
    assert not f["length-free"]["member"] and "grows with the length" in f["length-free"]["reason"].replace(
        "grow with", "grows with")
    doc, f = fragments(find_example("sort_unique").source)       # counts compared at two positions
    assert not f["length-free"]["member"] and "two positions" in f["length-free"]["reason"]
    assert f["rasp"]["member"] and "max_len" in doc["theorem"]


def test_causal_boundary():
    doc, _ = fragments((PROGRAMS / "dyck1.rasp").read_text())
    assert doc["causal"]["member"] is True
    doc, _ = fragments((PROGRAMS / "majority.rasp").read_text())
    assert doc["causal"]["member"] is False and doc["causal"]["line"] == 3
    doc, _ = fragments("x = shift(tokens, -1, \"_\") == \"a\";")   # next position: outside, not causal
    assert not doc["length_free"] and "after the query" in doc["fragments"][3]["reason"]


def test_compile_length_free_refuses_with_the_dialect_reason():
    with pytest.raises(RaspError) as e:
        compile(find_example("parity").source, vocab="01", length_free=True)
    assert e.value.span.line == 9 and "MOD" in e.value.message and e.value.kind == "compile"
    with pytest.raises(RaspError) as e:
        compile((PROGRAMS / "majority.rasp").read_text(), vocab="01", length_free=True, causal=True)
    assert e.value.span.line == 3 and "causal" in e.value.message


def test_analyze_answers_the_dialect():
    doc = analyze((PROGRAMS / "dyck1.rasp").read_text())
    assert doc["dialect"]["smallest"] == "c-rasp" and doc["dialect"]["output"] == "dyck1"
    assert analyze("x = ;")["dialect"] is None
