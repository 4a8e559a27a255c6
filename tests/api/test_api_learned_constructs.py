"""select_closest and aggregate_sum over HTTP: the evaluator runs them; compiling one is a clear 4xx."""

SOURCE = ("nearest_a = select_closest(tokens, \"a\", ==);\nfrom_a = aggregate(nearest_a, indices);\n"
          "before = aggregate_sum(select(indices, indices, <), indices);\n")


def test_evaluate_runs_them_and_compile_refuses_with_the_reason(api):
    r = api.post("/api/v1/evaluate", json={"source": SOURCE, "inputs": ["abba"]})
    assert r.status_code == 200, r.text
    res = r.json()["results"]
    assert res["from_a"]["values"] == [[0, 0, 3, 3]] and res["before"]["values"] == [[0, 0, 1, 3]]
    for output in ("from_a", "before"):
        r = api.post("/api/v1/compile", json={"source": SOURCE, "vocab": "ab", "max_len": 4, "output": output})
        assert 400 <= r.status_code < 500, r.text
        assert "refused" in r.text and ("select_closest" in r.text or "aggregate_sum" in r.text)


def test_analyze_provenance_and_overlay_take_them(api):
    r = api.post("/api/v1/analyze", json={"source": SOURCE})
    assert r.status_code == 200, r.text
    assert r.json()["layers"] == 1
    for name, position in (("from_a", 2), ("before", 3)):
        r = api.post("/api/v1/provenance", json={"source": SOURCE, "input": "abba", "name": name, "position": position})
        assert r.status_code == 200, r.text
    uniform = [[0.25] * 4 for _ in range(4)]
    r = api.post("/api/v1/overlay", json={"source": SOURCE, "maps": {"tokens": list("abba"), "attention": [[uniform]]}})
    assert r.status_code == 200, r.text
