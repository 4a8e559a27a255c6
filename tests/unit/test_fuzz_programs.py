"""Fuzzing over program text: random token soups and random edits of every example never make the
engine raise, and never make the API answer 5xx. Every diagnostic is well formed."""
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rasplay import engine

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.rasp"))
SOURCES = [p.read_text() for p in EXAMPLES]
LIMITS = engine.Limits(eval_seconds=2.0, max_nodes=5000, max_iterations=20_000)

TOKENS = [
    "x", "y", "f", "tokens", "indices", "length", "tokens_int", "select", "aggregate", "selector_width",
    "def", "return", "for", "in", "if", "else", "and", "or", "not", "load", "draw", "True", "range", "out",
    "0", "1", "-1", "2.5", "99999999999999999999", '"a"', "'b'", '"', "==", "!=", "<", ">=", "+", "-", "*",
    "/", "%", "^", "=", ",", ";", ":", "(", ")", "[", "]", "{", "}", "#", "\n", " ", "@", "\\", "set example",
    "sort", "count", "shift", "mark_first_instance", "e", "é", "\t",
]

token_soups = st.lists(st.sampled_from(TOKENS), max_size=40).map(" ".join)


@st.composite
def edited_examples(draw):
    text = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        j = draw(st.integers(i, min(len(text), i + 30)))
        edit = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if edit == "delete":
            text = text[:i] + text[j:]
        elif edit == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif edit == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
    return text


programs = st.one_of(token_soups, edited_examples())


def check_document(doc: dict):
    assert set(doc) >= {"inputs", "results", "analysis", "diagnostics"}
    for d in doc["diagnostics"]:
        assert d["severity"] in ("error", "warning", "info") and isinstance(d["message"], str) and d["message"]
        if d.get("kind") == "syntax":
            assert d["line"] >= 1 and d["col"] >= 1
    for res in doc["results"].values():
        assert len(res["values"]) == len(res["errors"]) == len(doc["inputs"])


def test_the_fuzzing_covers_every_example():
    assert len(SOURCES) >= 10


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs)
def test_evaluate_and_analyze_never_raise(source):
    check_document(engine.evaluate(source, ["ab", "aab"], limits=LIMITS))
    analysis = engine.analyze(source, limits=LIMITS)
    assert "diagnostics" in analysis and "layers" in analysis


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(source=programs)
def test_the_api_never_answers_5xx(live_server, source):
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        r = client.post("/api/v1/evaluate", json={"source": source, "inputs": ["ab"]})
        assert r.status_code < 500, r.text
        if r.status_code == 200:
            check_document(r.json())
        r = client.post("/api/v1/analyze", json={"source": source})
        assert r.status_code < 500, r.text


@pytest.mark.parametrize("source", [
    "x = indices;\n}\ny = tokens;", "x = tokens;\n)", "def f(a) { return a; }\n}", "return=4;",
    "x = " + "9" * 5000 + ";",
])
def test_the_api_answers_the_issue_programs(api, source):
    r = api.post("/api/v1/evaluate", json={"source": source, "inputs": ["ab"]})
    assert r.status_code == 200, r.text
    assert any(d["severity"] == "error" and d.get("line") for d in r.json()["diagnostics"])
    assert api.post("/api/v1/analyze", json={"source": source}).status_code == 200
