"""POST /api/v1/learned/check over a real server: the report, every bad input a 4xx JSON, the per-client
hold of the heavy pool, the OpenAPI schema."""
import threading

import httpx
import pytest

from support.live_server import LiveServer
from support.waiting import wait_for

TASK = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);\n"
LEARNED = ("# learned: transformer-programs\n# bos: <s>\n# eos: </s>\n# output: rev\n"
           "back = select(indices, length - indices - 1, ==);\nrev = aggregate(back, tokens);\n")
# reads position 4 - i: right only where that is the mirror position (length 3, with the BOS)
LEARNED_LENGTH_3 = "# bos: <s>\n# output: rev\nback = select(indices, 4 - indices, ==);\nrev = aggregate(back, tokens, \"-\");\n"


def check(api, **body):
    return api.post("/api/v1/learned/check", json={"learned": LEARNED, "task": TASK, "vocab": "ab", **body})


def test_a_right_program_agrees_everywhere_and_its_selector_is_the_tasks(api):
    r = check(api, max_length=4, beyond=1)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["all_agree"] is True and report["total"]["inputs"] == 2 + 4 + 8 + 16 + 32
    assert [row["beyond"] for row in report["lengths"]] == [False] * 4 + [True]
    assert {s["name"]: s["equals"] for s in report["selectors"]}["back"] == ["flip"]


def test_a_wrong_program_is_a_200_with_its_shortest_failing_inputs(api):
    r = check(api, learned=LEARNED_LENGTH_3, max_length=3, show=2)
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["all_agree"] is False
    assert [(row["length"], row["agree"]) for row in report["lengths"]] == [(1, 0), (2, 0), (3, 8)]
    first = report["failing"][0]
    assert first["input"] == ["a"] and first["expected"] == ["a"] and first["got"] == ["-"]
    assert report["failing"][1]["input"] == ["b"]


@pytest.mark.parametrize("body, kind, words", [
    ({"learned": "a = tokens;\nb = = 1;\n"}, "input", "learned program has an error (line 2"),
    ({"task": "x = ;"}, "input", "task program has an error (line 1"),
    ({"output": "nope"}, "input", "no s-op named 'nope'"),
    ({"vocab": ""}, "input", "vocabulary is empty"),
    ({"vocab": "aa"}, "input", "repeated token"),
    ({"max_length": 12, "beyond": 1}, "limit", "the limit is 12"),
    ({"vocab": "abcdefghijklmnopqrstu", "max_length": 12, "exhaustive": 200_000, "samples": 10_000}, "limit",
     "would run 284,204 inputs; the limit is 250,000"),
    ({"samples": 10_001}, "limit", "samples is 10001"),
    ({"min_length": 0}, "validation", "min_length"),
    ({"seed": -1}, "validation", "seed"),
    ({"vocab": [["nested"]]}, "validation", "vocab"),
])
def test_every_bad_input_is_a_422_json_saying_what(api, body, kind, words):
    r = check(api, **body)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["kind"] == kind and words in error["message"], error


def test_a_learned_program_error_carries_its_line_and_column(api):
    error = check(api, learned="a = tokens;\nb = = 1;\n").json()["error"]
    assert error["line"] == 2 and error["col"] >= 1


def test_the_routes_are_in_the_openapi_schema(api):
    spec = api.get("/openapi.json").json()
    route = spec["paths"]["/api/v1/learned/check"]["post"]
    assert {"200", "422", "429", "503"} <= set(route["responses"])
    fields = spec["components"]["schemas"]["LearnedCheckRequest"]["properties"]
    assert {"learned", "task", "vocab", "max_length", "beyond", "exhaustive", "samples", "seed"} <= set(fields)


@pytest.fixture(scope="module")
def one_heavy(tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("learned"), "--workers", "1", "--heavy-workers", "1",
                        "--client-heavy", "1", "--queue-seconds", "2", "--compile-seconds", "60")
    yield server
    server.stop()


def test_one_client_may_run_one_check_at_a_time(one_heavy):
    slow = {"learned": LEARNED, "task": TASK, "vocab": "abcdefghijklmnopqrst", "max_length": 4,
            "exhaustive": 200_000, "beyond": 2, "samples": 10_000}
    done = {}

    def first():
        with httpx.Client(base_url=one_heavy.url, timeout=120) as c:
            done["first"] = c.post("/api/v1/learned/check", json=slow)

    thread = threading.Thread(target=first)
    thread.start()
    with httpx.Client(base_url=one_heavy.url, timeout=120) as c:
        wait_for(lambda: c.get("/api/v1/health").json()["pools"]["heavy"]["running"] == 1, 60,
                 what="the first check running")
        r = c.post("/api/v1/learned/check", json=slow)
        assert r.status_code == 429 and r.json()["error"]["kind"] == "busy"
        assert int(r.headers["retry-after"]) > 0
    thread.join(120)
    assert done["first"].status_code == 200, done["first"].text[:300]


# ------------------------------------------------------------------ POST /learned/import

def test_a_transformer_programs_program_is_imported_and_checked_with_exactly_its_known_failures(api):
    from support import tp_reverse

    r = api.post("/api/v1/learned/import", json={"program": tp_reverse.program(), "weights": tp_reverse.weights(),
                                                 "title": "reverse, length 3"})
    assert r.status_code == 200, r.text
    source = r.json()["source"]
    assert "# bos: <s>" in source and "# eos: </s>" in source and "select_closest" in source
    report = check(api, learned=source, max_length=3).json()
    assert [(row["length"], row["agree"], row["inputs"]) for row in report["lengths"]] == [(1, 1, 2), (2, 1, 4),
                                                                                          (3, 8, 8)]
    assert [f["input"] for f in report["failing"][:2]] == [["b"], ["a", "b"]]


@pytest.mark.parametrize("program, weights, words", [
    ("def run(:\n", "feature,value,a\n", "not Python"),
    ("x = 1\n", "feature,value,a\n", "cannot be imported"),
])
def test_a_program_that_cannot_be_imported_is_a_422_saying_what(api, program, weights, words):
    r = api.post("/api/v1/learned/import", json={"program": program, "weights": weights})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["kind"] == "input" and words in error["message"]


def test_the_import_is_in_the_openapi_schema_and_its_fields_are_required(api):
    route = api.get("/openapi.json").json()["paths"]["/api/v1/learned/import"]["post"]
    assert {"200", "422", "429"} <= set(route["responses"])
    r = api.post("/api/v1/learned/import", json={"program": "def run(tokens):\n    return tokens\n"})
    assert r.status_code == 422 and "weights" in r.json()["error"]["message"]
