"""POST /api/v1/provenance over HTTP: the engine's answer (engine/provenance.py, tests/unit/test_provenance.py),
and a bad position or input a clear 422."""
from rasplay.engine.provenance import provenance
from support.provenance_reference import PROGRAM


def test_provenance_route(api):
    r = api.post("/api/v1/provenance", json={"source": PROGRAM, "input": [3, 1, 3], "name": "total", "position": 2})
    assert r.status_code == 200, r.text
    assert r.json() == provenance(PROGRAM, [3, 1, 3], 2, name="total")
    bad = api.post("/api/v1/provenance", json={"source": PROGRAM, "input": [3, 1, 3], "name": "total", "position": 5})
    assert bad.status_code == 422 and bad.json()["error"]["kind"] == "position"
    both = api.post("/api/v1/provenance", json={"source": PROGRAM, "input": "ab", "position": 0})
    assert both.status_code == 422 and both.json()["error"]["kind"] == "validation"
