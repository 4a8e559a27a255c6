"""POST /overlay: another tool's attention maps scored against the program's selectors (numpy only: it
needs no PyTorch on the server)."""


def test_import_attention_maps_from_another_tool(api):
    source = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);\n"
    n = 3
    uniform = [[1 / n] * n for _ in range(n)]
    mirror = [[1.0 if k == n - 1 - q else 0.0 for k in range(n)] for q in range(n)]
    maps = {"tokens": ["a", "b", "c"], "attention": [[uniform], [mirror]]}
    r = api.post("/api/v1/overlay", json={"source": source, "maps": maps})
    assert r.status_code == 200, r.text
    doc = r.json()
    scores = {m["name"]: m["score"] for m in doc["matches"]}
    assert scores == {"full_s": 1.0, "flip": 1.0}
    assert doc["values"] == ["c", "b", "a"] and doc["program_layers"] == 2
    bad = api.post("/api/v1/overlay", json={"source": source, "maps": {"tokens": ["a"], "attention": [[[0.5]]]}})
    assert bad.status_code == 422 and "4 dimensions" in bad.json()["error"]["message"]
    rows = api.post("/api/v1/overlay", json={"source": source, "maps": {"tokens": ["a", "b"],
                                                                       "attention": [[[[0.9, 0.9], [0.5, 0.5]]]]}})
    assert rows.status_code == 422 and "sum" in rows.json()["error"]["message"]
