"""POST /api/v1/analyze carries the length-generalisation predictions (the command line's
`rasplay dialect`: tests/cli/test_cli_dialect_prediction.py)."""
from pathlib import Path

LG = Path(__file__).resolve().parents[1] / "length_generalization_programs"


def test_analyze_over_http_carries_the_predictions(api):
    r = api.post("/api/v1/analyze", json={"source": (LG / "majority_whole.rasp").read_text()})
    assert r.status_code == 200, r.text
    part = r.json()["dialect"]["length_generalization"]
    c, rl = part["fragments"]
    assert c["id"] == "c-rasp-periodic-local" and not c["member"] and c["line"] == 4 and c["col"] == 8
    assert rl["id"] == "rasp-l" and not rl["member"] and "causal" in rl["reason"]
    assert part["summary"].startswith("Length generalisation: no guarantee from this program")
