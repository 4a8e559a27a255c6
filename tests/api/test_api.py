"""The REST API over real HTTP (uvicorn on a loopback port): every route, every error case."""
import threading

import httpx
import pytest

from rasplay.server.links import decode_state
from rasplay.engine.examples import load_examples
from support.waiting import wait_for

REVERSE = "opp = length - indices - 1;\nflip = select(indices, opp, ==);\nreverse = aggregate(flip, tokens);\n"


def error_of(response, status):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["kind"] and body["error"]["message"]
    return body["error"]


# ------------------------------------------------------------------ evaluate and analyze

def test_evaluate_returns_the_evaluation_document(api):
    r = api.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["hello", [1, 2, 3]]})
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    doc = r.json()
    assert set(doc) == {"inputs", "output", "title", "results", "analysis", "diagnostics"}
    assert doc["results"]["reverse"]["values"] == [list("olleh"), [3, 2, 1]]
    assert doc["results"]["flip"]["kind"] == "selector" and doc["results"]["flip"]["head"] == 0
    assert doc["analysis"]["layers"] == 2 and doc["analysis"]["heads_per_layer"] == [1, 1]


def test_evaluate_json_inputs_and_names(api):
    r = api.post("/api/v1/evaluate", json={"source": "tokens = tokens_int; d = tokens * 2; e = d + 1;",
                                           "inputs": ["[1, 2]"], "input_format": "json", "names": ["e"]})
    assert r.json()["results"] == {"e": {"kind": "sop", "type": "int", "layer": 0, "values": [[3, 5]], "errors": [None]}}


def test_program_errors_are_diagnostics_with_line_and_col(api):
    r = api.post("/api/v1/evaluate", json={"source": "a = indices;\nb = a + nope;\n", "inputs": ["ab"]})
    assert r.status_code == 200
    (d,) = r.json()["diagnostics"]
    assert (d["line"], d["col"], d["kind"]) == (2, 9, "name") and "'nope' is not defined" in d["message"]
    r = api.post("/api/v1/evaluate", json={"source": "x = (1;", "inputs": ["ab"]})
    (d,) = r.json()["diagnostics"]
    assert d["kind"] == "syntax" and d["line"] == 1 and d["col"] == 7


def test_unicode_tokens(api):
    r = api.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["héllo→🙂", ["α", "β"]]})
    assert r.json()["results"]["reverse"]["values"] == [list("🙂→olléh"), ["β", "α"]]


def test_analyze(api):
    r = api.post("/api/v1/analyze", json={"source": REVERSE, "output": "reverse"})
    a = r.json()
    assert r.status_code == 200 and a["layers"] == 2 and a["names"]["opp"] == 1
    assert {n["name"] for n in a["graph"]["nodes"]} >= {"flip", "reverse", "opp", "length"}


# ------------------------------------------------------------------ examples

def test_examples_gallery(api):
    listed = api.get("/api/v1/examples").json()
    assert [e["id"] for e in listed] == [e.id for e in load_examples()]
    assert all("source" not in e and e["title"] and e["description"] for e in listed)
    one = api.get("/api/v1/examples/reverse").json()
    assert one["input"] == "hello" and "aggregate(flip, tokens)" in one["source"]
    assert error_of(api.get("/api/v1/examples/nope"), 404)["kind"] == "not_found"
    assert error_of(api.get("/api/v1/examples/Bad-Id!"), 422)["kind"] == "validation"
    assert error_of(api.get("/api/v1/examples/..%2F..%2Fetc"), 404)["kind"] == "not_found"


# ------------------------------------------------------------------ share links

def test_share_round_trip_and_content_addressing(api):
    state = {"source": REVERSE, "inputs": ["hey", [1, 2]], "view": "program", "selection": "flip", "later": 1}
    first = api.post("/api/v1/share", json={"state": state}).json()
    again = api.post("/api/v1/share", json={"state": dict(reversed(list(state.items())))}).json()
    assert first == again and first["url"] == f"/s/{first['id']}"
    r = api.get(first["url"], follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"].startswith("/#v1=")
    assert decode_state(r.headers["location"][len("/#v1="):]) == state
    other = api.post("/api/v1/share", json={"state": {"source": "x = indices;"}}).json()
    assert other["id"] != first["id"]


def test_share_errors(api):
    assert error_of(api.post("/api/v1/share", json={"state": {"inputs": []}}), 422)["kind"] == "validation"
    assert error_of(api.post("/api/v1/share", json={"state": {"source": "x", "inputs": 3}}), 422)
    big = {"source": "#" + "x" * 70_000}
    assert error_of(api.post("/api/v1/share", json={"state": big}), 413)["kind"] == "too_large"
    assert error_of(api.get("/s/zzzzzzzzzzzz", follow_redirects=False), 404)["kind"] == "not_found"
    assert error_of(api.get("/s/NOT-AN-ID", follow_redirects=False), 422)


# ------------------------------------------------------------------ bad requests and limits

MALFORMED = [
    (b"{bad json", 400, "bad_request"),
    (b"[1, 2]", 422, "validation"),
    (b'{"inputs": ["a"]}', 422, "validation"),
    (b'{"source": 3, "inputs": ["a"]}', 422, "validation"),
    (b'{"source": "x = 1;", "inputs": [{"a": 1}]}', 422, "validation"),
    (b'{"source": "x = 1;", "inputs": [[[1]]]}', 422, "validation"),
    (b'{"source": "x = 1;", "input_format": "xml"}', 422, "validation"),
    (b"[" * 150_000 + b"]" * 150_000, 413, "too_large"),
    (b"[" * 90_000 + b"]" * 90_000, 422, "validation"),   # nested past 512 levels (docs/security.md)
    (b'{"source": "x = 1;", "inputs": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", 422, "validation"),
]


@pytest.mark.parametrize("body,status,kind", MALFORMED, ids=[f"{m[0][:24]!r}" for m in MALFORMED])
def test_malformed_requests_get_clear_4xx(api, body, status, kind):
    r = api.post("/api/v1/evaluate", content=body, headers={"content-type": "application/json"})
    assert error_of(r, status)["kind"] == kind


def test_each_limit_has_its_own_message(api):
    e = error_of(api.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["x" * 65]}), 422)
    assert e["kind"] == "limit" and e["message"] == "input 1 has 65 tokens; the limit is 64"
    e = error_of(api.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["[" + "1," * 70 + "1]"],
                                                  "input_format": "json"}), 422)
    assert "input 1 has 71 tokens" in e["message"]
    e = error_of(api.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["a"] * 9}), 422)
    assert e["message"] == "9 inputs; the limit is 8 per request"
    e = error_of(api.post("/api/v1/evaluate", json={"source": "#" * 60_000, "inputs": ["a"]}), 422)
    assert e["message"] == "the program is 60000 characters long; the limit is 50000 (this server's --max-source-chars)"
    e = error_of(api.post("/api/v1/evaluate", json={"source": "#" * 300_000}), 413)
    assert "over the limit of 200000 bytes" in e["message"]


def test_unknown_routes_and_methods_are_json_errors(api):
    assert error_of(api.get("/api/v1/nothing"), 404)["kind"] == "not_found"
    assert error_of(api.get("/api/v1/evaluate"), 405)["kind"] == "method_not_allowed"


def test_slow_program_times_out_with_its_own_message(api):
    slow = "for k in range(10) { x = [[(i * j + k) ^ 3 % 7 - i / (j + 1) for j in range(300)] for i in range(300)]; }"
    e = error_of(api.post("/api/v1/evaluate", json={"source": slow, "inputs": ["a"]}), 422)
    assert e["kind"] == "timeout" and "time limit" in e["message"]


def test_health_and_openapi(api):
    h = api.get("/api/v1/health").json()
    assert h["status"] == "ok" and h["workers"] == 3 and h["limits"]["max_input_length"] == 64
    spec = api.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/api/v1/evaluate", "/api/v1/analyze", "/api/v1/examples", "/api/v1/examples/{example_id}",
                 "/api/v1/share", "/s/{link_id}", "/api/v1/health"):
        assert path in paths
    schemas = spec["components"]["schemas"]
    for model in ("EvaluateRequest", "EvaluationDocument", "Result", "Analysis", "Diagnostic", "ErrorResponse",
                  "ShareRequest", "ShareResponse", "Example", "ExampleSummary", "Health"):
        assert model in schemas and schemas[model].get("properties"), model
    assert "422" in paths["/api/v1/evaluate"]["post"]["responses"]
    assert api.get("/docs").status_code == 200


def test_cors_is_off_by_default_and_configurable(api, tmp_path):
    from support.live_server import LiveServer

    origin = "https://course.example.org"
    r = api.options("/api/v1/evaluate", headers={"Origin": origin, "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers
    server = LiveServer(tmp_path, "--workers", "1", "--cors-origin", origin)
    try:
        with server.client() as c:
            r = c.options("/api/v1/evaluate", headers={"Origin": origin, "Access-Control-Request-Method": "POST",
                                                       "Access-Control-Request-Headers": "content-type"})
            assert r.status_code == 200 and r.headers["access-control-allow-origin"] == origin
            r = c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["ab"]}, headers={"Origin": origin})
            assert r.headers["access-control-allow-origin"] == origin
            r = c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["ab"]},
                       headers={"Origin": "https://elsewhere.example"})
            assert "access-control-allow-origin" not in r.headers
    finally:
        server.stop()


def test_static_app_and_local_plotly(api):
    assert api.get("/").status_code == 200
    r = api.get("/vendor/plotly.min.js")
    assert r.status_code == 200 and b"plotly" in r.content[:2000].lower() and len(r.content) > 1_000_000
    assert api.get("/embed").status_code == 200


# ------------------------------------------------------------------ a hung evaluation does not block others

def test_hung_evaluation_is_killed_while_others_are_answered(tmp_path):
    from support.live_server import LiveServer

    # the engine's own time check is set far away, so only the hard kill can stop this program
    server = LiveServer(tmp_path, settings="workers=2, eval_seconds=3.0, engine_seconds=120.0")
    try:
        heavy = "for k in range(10) { x = [[(i * j + k) ^ 3 % 7 - i / (j + 1) for j in range(300)] for i in range(300)]; }"
        finished = []   # the order in which the two requests were answered

        def hang():
            with server.client() as c:
                reply = c.post("/api/v1/evaluate", json={"source": heavy, "inputs": ["a"]})
                finished.append(("hung", reply))

        thread = threading.Thread(target=hang)
        thread.start()
        with server.client() as c:   # the hung request is in a worker
            wait_for(lambda: c.get("/api/v1/health").json()["pools"]["evaluation"]["running"] == 1)
        # another user (address): a client's own requests wait behind its own (one of two workers is its share)
        with server.client(transport=httpx.HTTPTransport(local_address="127.0.0.2")) as c:
            quick = c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["abc"]})
            finished.append(("quick", quick))
        thread.join(60)
        # the quick request was answered while the hung one was still running, and the hung one was
        # stopped by the hard kill (the engine's own check is two minutes away)
        assert [name for name, _ in finished] == ["quick", "hung"]
        assert quick.status_code == 200 and quick.json()["results"]["reverse"]["values"] == [["c", "b", "a"]]
        e = error_of(finished[1][1], 422)
        assert e["kind"] == "timeout"
        with server.client() as c:  # the killed worker was replaced
            wait_for(lambda: c.get("/api/v1/health").json()["workers"] == 2)
            assert c.get("/api/v1/health").json()["pools"]["evaluation"]["replaced"]["timeout"] == 1
            assert c.post("/api/v1/evaluate", json={"source": REVERSE, "inputs": ["ab"]}).status_code == 200
    finally:
        server.stop()


# ------------------------------------------------------------------ share links survive restarts and kill -9

def test_share_links_survive_restart_and_kill_9(tmp_path):
    from support.live_server import LiveServer

    server = LiveServer(tmp_path, "--workers", "1")
    saved = {}
    with server.client() as c:
        for i in range(5):
            state = {"source": f"x{i} = indices;", "inputs": ["ab"]}
            saved[c.post("/api/v1/share", json={"state": state}).json()["id"]] = state
    stop = threading.Event()

    def writer(k):
        with httpx.Client(base_url=server.url, timeout=5) as c:
            i = 0
            while not stop.is_set():
                state = {"source": f"w{k}_{i} = indices;"}
                try:
                    r = c.post("/api/v1/share", json={"state": state})
                except httpx.HTTPError:
                    return
                if r.status_code == 200:
                    saved[r.json()["id"]] = state
                i += 1

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: len(saved) > 15)   # the writers are under way (however slow the machine is)
    server.kill()  # kill -9 in the middle of the writes
    stop.set()
    for t in threads:
        t.join(10)
    assert len(saved) > 10
    restarted = LiveServer(tmp_path, "--workers", "1", port=None)
    try:
        with restarted.client() as c:
            for link_id, state in saved.items():
                r = c.get(f"/s/{link_id}", follow_redirects=False)
                assert r.status_code == 302, link_id
                assert decode_state(r.headers["location"][len("/#v1="):]) == state
    finally:
        restarted.stop()
    import sqlite3
    db = sqlite3.connect(tmp_path / "links.sqlite3")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_repeated_requests_are_answered_from_the_cache():
    from rasplay.server.cache import ResponseCache

    cache = ResponseCache(max_bytes=80, max_item_bytes=60)
    cache.put(b"a", b"x" * 40)
    cache.put(b"b", b"y" * 40)      # over 80 bytes in all: "a" goes
    assert cache.get(b"a") is None and cache.get(b"b") == b"y" * 40
    cache.put(b"c", b"z" * 70)      # larger than one item may be: not kept
    assert cache.get(b"c") is None and (cache.hits, cache.misses) == (1, 2)


def test_values_beyond_what_workers_can_carry_are_422(api):
    for body in (b'{"source": "x = tokens;", "inputs": [[66054457543723951308008431152005120]]}',
                 b'{"source": "x = \\udbb1;", "inputs": ["a"]}'):
        r = api.post("/api/v1/evaluate", content=body, headers={"content-type": "application/json"})
        assert error_of(r, 422)["kind"] == "validation"
    r = api.post("/api/v1/overlay", json={"source": "x = indices;", "maps": {"n": 2 ** 70}})
    assert error_of(r, 422)


def test_large_documents_come_back_whole(api):
    inputs = ["abcdefgh" * 8] * 8                                 # 8 inputs of 64 tokens
    source = REVERSE + "".join(f"s{i} = select(indices, indices + {i}, <=);\n" for i in range(4))
    for trace in range(8):   # several times: whether a reply arrives in pieces depends on timing
        r = api.post("/api/v1/evaluate", json={"source": source, "inputs": inputs, "trace": trace})
        assert r.status_code == 200 and len(r.content) > 300_000      # larger than a socket's buffer
    doc = r.json()
    assert len(doc["results"]["flip"]["values"]) == 8 and len(doc["results"]["flip"]["values"][7]) == 64
