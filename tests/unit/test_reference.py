"""rasplay against the values the original RASP REPL gives (../shared/reference beside the project, or
the folder named by RASPLAY_REFERENCE). Without it the comparison is skipped on a developer's machine,
and fails in CI (CI=true), where it must be present."""
import json
import math
import os
from pathlib import Path

import pytest

from rasplay import engine

REFERENCE = Path(os.environ.get("RASPLAY_REFERENCE") or Path(__file__).resolve().parents[3] / "shared" / "reference")
CASES = json.loads((REFERENCE / "expected.json").read_text())["cases"] if REFERENCE.is_dir() else []
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def test_the_reference_values_are_there_in_ci():
    if not IN_CI and not CASES:
        pytest.skip(f"{REFERENCE} is missing (outside CI the comparison is skipped)")
    assert CASES, (f"{REFERENCE} is missing: CI must compare rasplay with the original RASP "
                   "(put shared/reference beside the project or set RASPLAY_REFERENCE)")


def same(expected, got) -> bool:
    if isinstance(expected, list):
        return isinstance(got, list) and len(expected) == len(got) and all(map(same, expected, got))
    if isinstance(expected, bool) or isinstance(got, bool):
        return type(expected) is type(got) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(expected, got, rel_tol=1e-9, abs_tol=1e-9)
    return expected == got


@pytest.mark.skipif(not CASES, reason=f"{REFERENCE} is missing (outside CI the comparison is skipped)")
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
