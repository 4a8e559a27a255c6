"""Fuzzing over program text against the API: random token soups and random edits of every example never
make it answer 5xx, and the programs of the issue are answered 200 with their diagnostics (the engine alone:
tests/unit/test_fuzz_programs.py)."""
import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from support.program_fuzz import check_document, programs


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
