"""The server's response cache, seen over HTTP: a repeated request is answered from it (the health
endpoint counts hits and misses), with the same bytes; anything in the request that changes the answer
(the inputs, `trace`, `names`) makes a different entry."""
import uuid


def cache(api) -> dict:
    return api.get("/api/v1/health").json()["cache"]


def evaluate(api, body: dict):
    before = cache(api)
    r = api.post("/api/v1/evaluate", json=body)
    assert r.status_code == 200, r.text
    after = cache(api)
    hit = after["hits"] - before["hits"]
    miss = after["misses"] - before["misses"]
    assert hit + miss == 1
    return r, bool(hit)


def test_a_repeated_evaluation_is_answered_from_the_cache(api):
    source = f"# {uuid.uuid4()}\nflip = select(indices, length - indices - 1, ==);\nr = aggregate(flip, tokens);"
    body = {"source": source, "inputs": ["abc"]}
    first, hit = evaluate(api, body)
    assert not hit
    again, hit = evaluate(api, body)
    assert hit and again.content == first.content and again.json()["results"]["r"]["values"] == [list("cba")]


def test_trace_inputs_and_names_are_part_of_the_key(api):
    source = f"# {uuid.uuid4()}\nflip = select(indices, length - indices - 1, ==);\nr = aggregate(flip, tokens);"
    plain, hit = evaluate(api, {"source": source, "inputs": ["abc"]})
    assert not hit and "trace" not in plain.json()

    traced, hit = evaluate(api, {"source": source, "inputs": ["abc"], "trace": 0})
    assert not hit and traced.json()["trace"]["input"] == 0
    traced_again, hit = evaluate(api, {"source": source, "inputs": ["abc"], "trace": 0})
    assert hit and traced_again.content == traced.content
    plain_again, hit = evaluate(api, {"source": source, "inputs": ["abc"]})
    assert hit and "trace" not in plain_again.json()

    other_input, hit = evaluate(api, {"source": source, "inputs": ["abd"]})
    assert not hit and other_input.json()["results"]["r"]["values"] == [list("dba")]
    only_flip, hit = evaluate(api, {"source": source, "inputs": ["abc"], "names": ["flip"]})
    assert not hit and set(only_flip.json()["results"]) == {"flip"}


def test_analyses_are_cached_by_program_and_output(api):
    source = f"# {uuid.uuid4()}\na = indices + 1;\nb = aggregate(select(indices, indices, ==), a);"
    first = api.post("/api/v1/analyze", json={"source": source}).json()
    before = cache(api)
    assert api.post("/api/v1/analyze", json={"source": source}).json() == first
    assert cache(api)["hits"] == before["hits"] + 1
    only_a = api.post("/api/v1/analyze", json={"source": source, "output": "a"}).json()
    assert cache(api)["misses"] == before["misses"] + 1 and only_a["layers"] == 0 and first["layers"] == 1
