"""Length-free models and the dialect check over HTTP."""
from pathlib import Path

from rasplay.engine.examples import find_example

PROGRAMS = Path(__file__).resolve().parents[1] / "length_free_programs"


def test_compile_length_free_and_run_long_inputs(api):
    source = (PROGRAMS / "dyck1.rasp").read_text()
    r = api.post("/api/v1/compile", json={"source": source, "vocab": "()", "length_free": True})
    assert r.status_code == 200, r.text
    body = r.json()
    s = body["summary"]
    assert s["length_free"] and s["max_len"] is None and s["dialect"]["smallest"] == "c-rasp"
    bounded = api.post("/api/v1/compile", json={"source": source, "vocab": "()", "max_len": 8}).json()
    assert bounded["id"] != body["id"]
    long = "(" * 32 + ")" * 32          # the server's run limit is 64 tokens (engine tests go to 4,096)
    run = api.post(f"/api/v1/models/{body['id']}/run", json={"inputs": [long, "())("]}).json()
    assert run["agree"] == [True, True] and run["outputs"][0][-1] == "T" and run["outputs"][1] == list("PTFF")


def test_compile_length_free_refused_with_line(api):
    r = api.post("/api/v1/compile", json={"source": find_example("parity").source, "vocab": "01",
                                          "length_free": True})
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["kind"] == "compile" and err["line"] == 9 and "MOD" in err["message"]
    r = api.post("/api/v1/compile", json={"source": find_example("parity").source, "vocab": "01"})
    assert r.status_code == 422 and "max_len" in r.json()["error"]["message"]


def test_analyze_has_the_dialect(api):
    r = api.post("/api/v1/analyze", json={"source": (PROGRAMS / "parity.rasp").read_text()})
    assert r.status_code == 200, r.text
    d = r.json()["dialect"]
    assert d["smallest"] == "length-free" and d["causal"]["member"] is False
    assert [f["id"] for f in d["fragments"]] == ["b-rasp", "c-rasp", "tl-count", "length-free", "rasp"]


def test_length_free_soft_study_and_no_fine_tuning(api):
    source = (PROGRAMS / "majority.rasp").read_text()
    model_id = api.post("/api/v1/compile", json={"source": source, "vocab": "01", "length_free": True}).json()["id"]
    study = api.post(f"/api/v1/models/{model_id}/soft", json={}).json()
    assert study["length_free"] and study["scaled"] == study["hard"] == [1.0] * len(study["lengths"])
    r = api.post("/api/v1/train", json={"source": source, "vocab": "01", "init_model": model_id})
    assert r.status_code == 422 and "length-free model" in r.json()["error"]["message"], r.text
