"""GET /api/v1/limits: the page's compile and training bounds come from the server (its settings and
POST /train's field bounds), and web/js repeats none of them."""
from __future__ import annotations

import re
from pathlib import Path

from fastapi.testclient import TestClient

from rasplay.server.app import create_app
from rasplay.server.schemas import TrainRequest
from rasplay.server.settings import Settings

WEB = Path(__file__).resolve().parent.parent / "web" / "js"


def limits_of(tmp_path, **settings) -> dict:
    client = TestClient(create_app(Settings(data_dir=tmp_path, **settings)))   # (no lifespan: no workers needed)
    r = client.get("/api/v1/limits")
    assert r.status_code == 200, r.text
    return r.json()


def test_the_limits_are_this_servers_settings(tmp_path):
    limits = limits_of(tmp_path, compile_max_len=10, compile_max_vocab=7, compile_seconds=12, train_seconds=90)
    assert limits["compile"] == {"max_len": 10, "max_vocab": 7, "seconds": 12.0}
    assert limits["train"]["seconds"] == 90.0
    assert limits_of(tmp_path)["compile"] == {"max_len": 24, "max_vocab": 32, "seconds": 30.0}


def test_the_training_bounds_are_the_request_models(tmp_path):
    fields = limits_of(tmp_path)["train"]["fields"]
    schema = TrainRequest.model_json_schema()["properties"]
    for name, bounds in fields.items():
        declared = schema[name].get("anyOf", [schema[name]])[0]
        assert bounds["max"] == declared.get("maximum"), name
        assert bounds["min"] == declared.get("minimum", declared.get("exclusiveMinimum")), name
        assert bounds["exclusive_min"] == ("exclusiveMinimum" in declared), name
    assert fields["max_len"] == {"min": 1, "max": 512, "exclusive_min": False}
    assert fields["time_budget"]["exclusive_min"] is True


def test_the_page_hard_codes_no_compile_or_training_bound():
    compile_js, train_js = (WEB / "compile.js").read_text(), (WEB / "train.js").read_text()
    assert not re.search(r'id: "compile-max-len"[^)]*max:', compile_js)
    assert "Math.min(24" not in compile_js
    for field in ("min-len", "max-len", "layers", "heads", "d-model", "steps", "time", "lr"):
        declaration = re.search(r'id: "train-' + field + r'"[^)]*\)', train_js).group(0)
        assert "max:" not in declaration, declaration
    assert 'api.limits()' in (WEB / "limits.js").read_text()
