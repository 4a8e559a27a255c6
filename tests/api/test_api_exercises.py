"""The exercises over HTTP: GET /api/v1/exercises, GET /api/v1/exercises/{id} (never the reference),
POST /api/v1/exercises/{id}/check (pass, wrong, over budget, errors, limits), and a teacher's folder
given to `rasplay serve --exercises DIR` (validated at start)."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from support.live_server import ROOT, LiveServer, free_port

COPY = """# title: Copy the tokens
# order: 5
# task: Define `copied`: the tokens themselves.
# target: copied
# alphabet: xy
# lengths: 1-4
# max_layers: 1
# --- starter
copied = indices;
# --- reference
secret_name_of_the_reference = tokens;
copied = secret_name_of_the_reference;
"""

REVERSE_RIGHT = "opp = length - indices - 1;\nreverse = aggregate(select(indices, opp, ==), tokens);\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    course = tmp_path_factory.mktemp("course")
    (course / "copy.exercise").write_text(COPY)
    server = LiveServer(tmp_path_factory.mktemp("data"), "--workers", "2", "--check-seconds", "2",
                        "--max-source-chars", "60000", "--exercises", str(course))
    yield server
    server.stop()


@pytest.fixture
def client(server):
    with server.client() as c:
        yield c


def test_the_list_is_in_teaching_order_with_the_teachers_exercise(client):
    r = client.get("/api/v1/exercises")
    assert r.status_code == 200
    ids = [e["id"] for e in r.json()]
    assert ids[0] == "copy" and ids[1:3] == ["length", "reverse"] and len(ids) >= 13
    reverse = next(e for e in r.json() if e["id"] == "reverse")
    assert reverse["budget"] == {"max_layers": 2, "max_heads_per_layer": 1, "max_heads": 2}
    assert reverse["target"] == "reverse"


def test_one_exercise_has_its_task_and_starter_but_never_its_reference(client):
    r = client.get("/api/v1/exercises/copy")
    assert r.status_code == 200
    body = r.json()
    assert body["starter"] == "copied = indices;\n" and body["task"].startswith("Define `copied`")
    assert body["alphabet"] == ["x", "y"] and body["lengths"] == [1, 4] and body["inputs"] == 300
    assert "secret_name_of_the_reference" not in r.text and "reference" not in body
    for item in client.get("/api/v1/exercises").json():
        assert "secret_name_of_the_reference" not in client.get(f"/api/v1/exercises/{item['id']}").text


def test_unknown_and_malformed_ids(client):
    r = client.get("/api/v1/exercises/nonesuch")
    assert r.status_code == 404 and r.json()["error"] == {"kind": "not_found", "message": "no exercise 'nonesuch'"}
    assert client.post("/api/v1/exercises/nonesuch/check", json={"source": "x = tokens;"}).status_code == 404
    r = client.get("/api/v1/exercises/Bad-Id")
    assert r.status_code == 422 and r.json()["error"]["kind"] == "validation"


def test_check_pass(client):
    r = client.post("/api/v1/exercises/reverse/check", json={"source": REVERSE_RIGHT})
    assert r.status_code == 200
    body = r.json()
    assert body["passed"] and body["status"] == "pass" and body["inputs_checked"] == 300
    assert body["budget"]["within"] and body["budget"]["layers"] == {"used": 2, "max": 2, "ok": True}
    assert client.post("/api/v1/exercises/copy/check", json={"source": "copied = tokens;"}).json()["passed"]


def test_check_fail_has_the_counterexample(client):
    src = "flip = select(indices, length - indices, ==);\nreverse = aggregate(flip, tokens, \"_\");\n"
    body = client.post("/api/v1/exercises/reverse/check", json={"source": src}).json()
    assert body["status"] == "wrong" and not body["passed"]
    c = body["counterexample"]
    assert c["input"] == "a" and c["expected"] == ["a"] and c["got"] == ["_"]
    assert c["sop"]["name"] == "reverse" and c["sop"]["selector"] == "flip"


def test_check_over_budget(client):
    src = ("opp = length - indices - 1;\nagain = aggregate(select(indices, indices, ==), opp);\n"
           "reverse = aggregate(select(indices, again, ==), tokens);\n")
    body = client.post("/api/v1/exercises/reverse/check", json={"source": src}).json()
    assert body["status"] == "over_budget" and body["inputs_right"] == 300
    assert body["budget"]["layers"] == {"used": 3, "max": 2, "ok": False} and not body["budget"]["within"]


def test_check_of_a_program_with_errors(client):
    body = client.post("/api/v1/exercises/reverse/check", json={"source": "reverse = select(indices,"}).json()
    assert body["status"] == "error"
    assert any(d["severity"] == "error" and d["line"] == 1 for d in body["diagnostics"])
    body = client.post("/api/v1/exercises/length/check", json={"source": "n = length;"}).json()
    assert body["status"] == "error" and "not to use 'length'" in body["message"]


def test_an_exercise_that_asks_for_a_fragment_says_so_and_its_check_enforces_it(client):
    asked = client.get("/api/v1/exercises/majority_so_far").json()
    assert asked["fragment"] == "c-rasp" and asked["fragment_name"] == "C-RASP"
    free = client.get("/api/v1/exercises/reverse").json()
    assert free["fragment"] is None and free["fragment_name"] is None
    counts = ("prefix = select(indices, indices, <=);\na = aggregate(prefix, indicator(tokens == \"a\"));\n"
              "b = aggregate(prefix, indicator(tokens == \"b\"));\n")
    # (a right program inside C-RASP passes: the unit and browser tests; here its z3 proof could outrun --check-seconds 2)
    outside = counts + "leader = \"a\" if a * length > b * length else (\"b\" if b > a else \"=\");\n"
    r = client.post("/api/v1/exercises/majority_so_far/check", json={"source": outside})
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "outside_fragment" and not body["passed"] and body["inputs_right"] == body["inputs_checked"]
    assert "line 4, col 17: this exercise asks for a program in C-RASP, and it is not" in body["message"]
    assert [(d["line"], d["col"]) for d in body["diagnostics"] if d["kind"] == "fragment"] == [(4, 17)]
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert "outside_fragment" in schemas["CheckResult"]["properties"]["status"]["enum"]
    assert schemas["ExercisePublic"]["properties"]["fragment"]["anyOf"][0]["enum"] == [
        "b-rasp", "c-rasp", "tl-count", "length-free", "rasp"]


def test_check_json_inputs(client):
    src = ("tokens = tokens_int;\nwanted = (16 - tokens) % 16;\n"
           "has_match = has_focus(select(tokens, wanted, ==) and select(indices, indices, !=));\n")
    assert client.post("/api/v1/exercises/match2/check", json={"source": src}).json()["passed"]
    wrong = src.replace(" and select(indices, indices, !=)", "")
    c = client.post("/api/v1/exercises/match2/check", json={"source": wrong}).json()["counterexample"]
    assert c["input"] == [0] and c["expected"] == [False] and c["got"] == [True]


def test_check_limits(client, server):
    r = client.post("/api/v1/exercises/reverse/check", json={"source": "x = 1;" * 12_000})
    assert r.status_code == 422 and r.json()["error"]["kind"] == "limit"
    r = client.post("/api/v1/exercises/reverse/check", json={})
    assert r.status_code == 422 and r.json()["error"]["kind"] == "validation"
    heavy = "x = indices;\n" + "".join(f"x = aggregate(select(x, indices, >=), x) + {i % 3};\n"
                                       for i in range(1000)) + "reverse = tokens if x > -1 else tokens;\n"
    r = client.post("/api/v1/exercises/reverse/check", json={"source": heavy})
    assert r.status_code == 422 and r.json()["error"]["kind"] == "timeout"
    deadline = time.monotonic() + 30    # a worker killed at the time limit is replaced
    while client.get("/api/v1/health").json()["workers"] < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    health = client.get("/api/v1/health").json()
    assert health["workers"] == 2 and health["limits"]["check_seconds"] == 2
    assert "exercises_dirs" not in health["limits"]     # the server's folders stay private, like its data dir
    assert client.post("/api/v1/exercises/reverse/check", json={"source": REVERSE_RIGHT}).json()["passed"]


def test_the_openapi_schema_lists_the_exercise_routes(client):
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/api/v1/exercises", "/api/v1/exercises/{exercise_id}", "/api/v1/exercises/{exercise_id}/check"} <= set(paths)


def test_serve_refuses_a_folder_with_bad_exercises(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "ok.exercise").write_text(COPY)
    (course / "typo.exercise").write_text(COPY.replace("# max_layers: 1", "# max_layer: 1"))
    (course / "over.exercise").write_text(COPY.replace("copied = secret_name_of_the_reference;",
                                                       "copied = aggregate(select(indices, indices, ==), shift(tokens, 1, \"x\"));"))
    out = subprocess.run([sys.executable, "-m", "rasplay.cli", "serve", "--port", str(free_port()),
                          "--data-dir", str(tmp_path), "--exercises", str(course)],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert f"{course / 'typo.exercise'}:7: unknown key 'max_layer'" in out.stderr
    assert (f"{course / 'over.exercise'}: the reference fails its own check: right on all 30 sampled inputs, but over "
            "budget: 2 layers (budget 1)") in out.stderr   # x and y, lengths 1 to 4: 30 inputs in all
    assert "2 exercise file(s) refused" in out.stderr
    assert "Traceback" not in out.stderr
