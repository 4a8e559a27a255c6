"""Requests that used to get a 500 (issue 10, item 9), over HTTP: each is a 4xx with a clear message,
or a 200 whose document says what is wrong."""
import json

import httpx
import pytest
from support.needs import need


def error_of(r, status):
    assert r.status_code == status, (r.status_code, r.text[:300])
    return r.json()["error"]


def test_an_integer_literal_of_thousands_of_digits_is_not_a_server_error(api):
    r = api.post("/api/v1/evaluate", json={"source": "x = " + "9" * 5000 + ";\ny = indices;", "inputs": ["ab"]})
    assert r.status_code in (200, 422), r.text[:300]
    text = json.dumps(r.json())
    assert "digits" in text or "too large" in text or "integer" in text


@pytest.mark.parametrize("item, says", [
    ("[" * 5000 + "]" * 5000, "nests too deeply"),
    ("[" + "9" * 5000 + "]", "out of range"),
    ("[1, 1e400]", "1e400 is out of range"),
    ("[NaN]", "NaN is out of range"),
    ("[18446744073709551616]", "out of range"),
])
def test_json_inputs_out_of_range_are_reported_for_that_input(api, item, says):
    r = api.post("/api/v1/evaluate", json={"source": "x = tokens;", "inputs": [item, "[1, 2]"],
                                           "input_format": "json"})
    assert r.status_code == 200, r.text[:300]
    errors = r.json()["results"]["x"]["errors"]
    assert says in errors[0] and "null" not in errors[0] and errors[1] is None


def test_weights_download_names_any_output_safely(api):
    """Content-Disposition per RFC 6266: a quoted ASCII fallback and the UTF-8 name in filename*, so
    quotes, backslashes and non-Latin-1 characters (older stores hold such names) never break it."""
    from rasplay.server.api.compile import attachment

    value = attachment('rasplay-a"b\\c-ø€.npz')
    assert value == ("attachment; filename=\"rasplay-a_b_c-__.npz\"; "
                     "filename*=UTF-8''rasplay-a%22b%5Cc-%C3%B8%E2%82%AC.npz")
    assert value.encode("latin-1")
    r = api.post("/api/v1/compile", json={"source": "y_1 = indices + 1;", "output": "y_1", "vocab": "ab", "max_len": 3})
    model = r.json()["id"]
    r = api.get(f"/api/v1/models/{model}/weights.npz")
    assert r.status_code == 200 and r.content[:2] == b"PK"
    name = f"rasplay-y_1-{model}.npz"
    assert r.headers["content-disposition"] == f"attachment; filename=\"{name}\"; filename*=UTF-8''{name}"


def test_a_chunked_body_over_the_limit_is_413(api, live_server):
    def chunks():
        for _ in range(50):
            yield b'{"source": "' + b"x" * 10_000
    r = api.post("/api/v1/evaluate", content=chunks(), headers={"content-type": "application/json"})
    e = error_of(r, 413)
    assert e["kind"] == "too_large" and "200000" in e["message"]
    # a chunked body under the limit still works
    body = json.dumps({"source": "x = indices;", "inputs": ["ab"]}).encode()
    r = api.post("/api/v1/evaluate", content=iter([body[:10], body[10:]]), headers={"content-type": "application/json"})
    assert r.status_code == 200 and r.json()["results"]["x"]["values"] == [[0, 1]]


def test_405_says_which_methods_are_allowed(api):
    r = api.get("/api/v1/evaluate")
    assert error_of(r, 405)["kind"] == "method_not_allowed" and r.headers["allow"] == "POST"
    r = api.put("/api/v1/examples")
    assert r.status_code == 405 and "GET" in r.headers["allow"]


def test_the_openapi_schema_declares_the_limits(api):
    schemas = api.get("/openapi.json").json()["components"]["schemas"]
    evaluate = schemas["EvaluateRequest"]["properties"]
    assert evaluate["source"]["maxLength"] == 50_000
    assert evaluate["inputs"]["maxItems"] == 8                       # the session server's --max-inputs
    lengths = {i.get("type"): i.get("maxLength", i.get("maxItems")) for i in evaluate["inputs"]["items"]["anyOf"]}
    assert lengths == {"string": 64, "array": 64}                    # --max-input-length
    assert schemas["CompileRequest"]["properties"]["max_len"]["maximum"] == 24
    assert schemas["RunRequest"]["properties"]["inputs"]["maxItems"] == 8


@pytest.mark.train
def test_odd_last_event_ids_are_ignored(api, live_server):
    need("torch")
    r = api.post("/api/v1/train", json={"source": "x = indices + 1;", "vocab": "ab", "max_len": 4, "steps": 2,
                                        "n_train": 50, "n_test": 10, "eval_every": 1})
    assert r.status_code == 202
    job = r.json()["id"]
    for header in ("²", "9" * 5000, "-1", "1e3"):
        with httpx.stream("GET", f"{live_server.url}/api/v1/train/{job}/events",
                          headers={"Last-Event-ID": header.encode()}, timeout=120) as s:
            assert s.status_code == 200
            text = "".join(s.iter_text())
        assert "event: done" in text and "event: progress" in text   # every event, from the start
