"""The compiler over HTTP: compile, run (hard and soft), the soft study, weights, errors."""
import io

import numpy as np

from rasplay.engine.examples import find_example

REVERSE = find_example("reverse").source


def test_compile_run_soft_and_weights(api):
    r = api.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 5})
    assert r.status_code == 200, r.text
    body = r.json()
    model_id, s = body["id"], body["summary"]
    assert s["layers"] == 2 == s["analysis_layers"] and s["heads_per_layer"] == [1, 1]
    assert s["residual_width"] <= 43 and s["output"] == "reverse"
    again = api.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 5}).json()
    assert again["id"] == model_id                                  # named by its request

    run = api.post(f"/api/v1/models/{model_id}/run", json={"inputs": ["abca", "c"]}).json()
    assert run["outputs"] == [["a", "c", "b", "a"], ["c"]] and run["agreement"] == {"inputs": 2, "agree": 2, "max_error": 0.0}
    heads = {(h["layer"], h["head"]): h for h in run["attention"]}
    flip = heads[(2, 0)]["matrices"][0]                             # BOS first: query q+1 attends key 4-q+1...
    assert [row.index(max(row)) for row in flip[1:]] == [4, 3, 2, 1]
    stages = [s["stage"] for s in run["residual"]]
    assert stages[0] == "embedding" and stages[-1] == "layer 2 MLP"
    soft = api.post(f"/api/v1/models/{model_id}/run", json={"inputs": ["abca"], "mode": "soft", "beta": 0.05}).json()
    assert soft["mode"] == "soft" and soft["agreement"]["max_error"] > 0

    study = api.post(f"/api/v1/models/{model_id}/soft", json={}).json()
    assert study["exhaustive"] and 0.5 < study["min_beta"] < 5
    assert {h["kind"] for h in study["heads"]} <= {"uniform", "tieless", "subset"}
    assert all(p["agreement"] == 1.0 for p in study["curve"] if p["beta"] >= study["min_beta"] * 1.05)

    w = api.get(f"/api/v1/models/{model_id}/weights.npz")
    assert w.status_code == 200 and w.headers["content-type"] == "application/octet-stream", w.text[:500]
    assert "attachment" in w.headers["content-disposition"]
    z = np.load(io.BytesIO(w.content))
    assert "tok_emb.weight" in z and "layers.1.attn.q.weight" in z and "config" in z


def test_compile_errors_and_limits(api):
    r = api.post("/api/v1/compile", json={"source": "x = indices;\ny = tokens + ;", "vocab": "ab", "max_len": 3})
    assert r.status_code == 422
    r = api.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 99})
    assert r.status_code == 422 and "over the limit" in r.json()["error"]["message"]
    r = api.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 4, "output": "nope"})
    assert r.status_code == 422 and r.json()["error"]["kind"] == "compile"
    unmeaned = "a = aggregate(select(1, 1, ==), tokens);\n"      # a mean of strings on every input of length 2+
    r = api.post("/api/v1/compile", json={"source": unmeaned, "vocab": "ab", "max_len": 1})
    assert r.status_code == 200, r.text                             # one position: nothing to average
    r = api.post("/api/v1/compile", json={"source": unmeaned, "vocab": "ab", "max_len": 2})
    e = r.json()["error"]
    assert r.status_code == 422 and e["kind"] == "compile" and "averages str values" in e["message"]
    assert (e["line"], e["col"]) == (1, 5)
    assert api.post("/api/v1/models/mzzzzzzzzzzzzzzz/run", json={"inputs": ["a"]}).status_code == 404
    assert api.get("/api/v1/models/not-a-model/weights.npz").status_code == 422
    model_id = api.post("/api/v1/compile", json={"source": REVERSE, "vocab": "abc", "max_len": 4}).json()["id"]
    bad = api.post(f"/api/v1/models/{model_id}/run", json={"inputs": ["abz"]})
    assert bad.status_code == 422 and "'z' is not in the vocabulary" in bad.json()["error"]["message"]
    long = api.post(f"/api/v1/models/{model_id}/run", json={"inputs": ["abcab"]})
    assert long.status_code == 422


CAUSAL = """prefix = select(indices, indices, <=);
frac_a = aggregate(prefix, indicator(tokens == "a"));
"""


def test_causal_compile_over_http(api):
    r = api.post("/api/v1/compile", json={"source": CAUSAL, "vocab": "ab", "max_len": 4, "causal": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["summary"]["causal"] is True
    plain = api.post("/api/v1/compile", json={"source": CAUSAL, "vocab": "ab", "max_len": 4}).json()
    assert plain["id"] != body["id"] and plain["summary"]["causal"] is False
    # position i sees the prefix ending at i: the fraction of a's so far, not over the whole input
    run = api.post(f"/api/v1/models/{body['id']}/run", json={"inputs": ["abab"]}).json()
    assert np.allclose(run["outputs"][0], [1, 0.5, 2 / 3, 0.5]) and run["agreement"]["agree"] == 1
    full = api.post(f"/api/v1/models/{plain['id']}/run", json={"inputs": ["abab"]}).json()
    assert np.allclose(full["outputs"][0], [1, 0.5, 2 / 3, 0.5])   # the same here: the selector looks back
    ahead = CAUSAL + "after = aggregate(select(indices, indices, >), indicator(tokens == \"a\"));\n"
    r = api.post("/api/v1/compile", json={"source": ahead, "vocab": "ab", "max_len": 4, "causal": True})
    e = r.json()["error"]
    assert r.status_code == 422 and e["kind"] == "compile" and "causal" in e["message"] and e["line"] == 3


def test_residual_reuse_is_the_default_and_can_be_turned_off(api):
    """double_histogram's dead values give their dimensions to later ones by default; asking for no reuse
    is another model (its own id), every value in its own dimensions, no erasure units, same outputs."""
    source = find_example("double_histogram").source
    ask = {"source": source, "vocab": "abc", "max_len": 5}
    reused = api.post("/api/v1/compile", json=ask).json()
    plain = api.post("/api/v1/compile", json={**ask, "reuse_residual": False}).json()
    assert reused["id"] != plain["id"]
    r, p = reused["summary"], plain["summary"]
    assert r["residual_reuse"]["erased"] and p["residual_reuse"] is None
    assert r["residual_width"] < p["residual_width"] == r["residual_reuse"]["width_without_reuse"]
    assert p["nonzero_params"] < r["nonzero_params"]
    def erasures(summary):
        return [t["name"] for m in summary["mlps"] for t in m["targets"] if t["method"].startswith("erasure")]
    assert erasures(r) and not erasures(p)
    inputs = ["abcab", "a", "ccc"]
    outs = [api.post(f"/api/v1/models/{m['id']}/run", json={"inputs": inputs}).json() for m in (reused, plain)]
    assert outs[0]["outputs"] == outs[1]["outputs"] and outs[0]["agreement"]["agree"] == 3
