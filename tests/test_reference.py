"""rasplay against the values the original RASP REPL gives (../shared/reference)."""
import json
import math
from pathlib import Path

import pytest

from rasplay import engine

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
CASES = json.loads((REFERENCE / "expected.json").read_text())["cases"] if REFERENCE.is_dir() else []


def same(expected, got) -> bool:
    if isinstance(expected, list):
        return isinstance(got, list) and len(expected) == len(got) and all(map(same, expected, got))
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-9)
    return expected == got


@pytest.mark.skipif(not CASES, reason="../shared/reference is not beside the project")
@pytest.mark.parametrize("case", CASES, ids=[c["program"] for c in CASES])
def test_matches_the_original_rasp(case):
    source = (REFERENCE / case["program"]).read_text()
    doc = engine.evaluate(source, case["inputs"], input_format=case["input_format"])
    assert [d for d in doc["diagnostics"] if d["severity"] == "error"] == []
    for name, expected in case["expected"].items():
        got = doc["results"][name]
        assert got["kind"] == expected["kind"], name
        assert same(expected["values"], got["values"]), (name, expected["values"], got["values"])
        if expected.get("layer") is not None:
            assert got["layer"] == expected["layer"], name
