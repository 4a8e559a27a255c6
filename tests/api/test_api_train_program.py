"""Training in program mode over HTTP: the job's result carries the learned program (RASP the evaluator
runs, with the engine's analysis of it); program mode's refusals are 422s that name the option."""
import time

import pytest
from support.needs import need

need("torch")
pytestmark = pytest.mark.train

HIST = "# output: hist\nsame = select(tokens, tokens, ==);\nhist = selector_width(same);\n"


@pytest.fixture(scope="module")
def train_server(tmp_path_factory):
    from support.live_server import LiveServer

    server = LiveServer(tmp_path_factory.mktemp("train_program"), "--workers", "2", "--train-jobs", "1",
                        "--train-queue", "1", "--train-seconds", "300", "--train-warm", "0")
    yield server
    server.stop()


def wait_done(client, job_id, timeout=420):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/v1/train/{job_id}").json()
        if job["status"] not in ("queued", "running"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} stayed {job['status']}")


def test_program_mode_returns_a_learned_program_that_runs(train_server):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": HIST, "vocab": "ab", "max_len": 3, "mode": "program",
                                          "layers": 1, "heads": 1, "mlps": 0, "steps": 5, "seed": 0})
        assert r.status_code == 202, r.text
        job = wait_done(c, r.json()["id"])
        assert job["status"] == "done", job
        res = job["result"]
        assert res["mode"] == "program" and res["steps"] == 5 and res["config"]["lr"] == 0.05
        lp = res["learned_program"]
        # 5 steps: pruning may leave a program that reads only the tokens (no heads, 0 layers)
        assert lp["bos"] == "<s>" and lp["eos"] is None and lp["layers"] == len(lp["heads"]) <= 1
        assert "# learned: rasplay\n# bos: <s>\n# output: learned_hist\n" in lp["source"]
        doc = c.post("/api/v1/evaluate", json={"source": lp["source"], "inputs": [["<s>", "a", "b", "a"]]}).json()
        assert not [d for d in doc["diagnostics"] if d["severity"] == "error"], doc["diagnostics"]
        values = doc["results"]["learned_hist"]["values"][0]
        assert len(values) == 4 and all(v in res["data"]["classes"] for v in values)


@pytest.mark.parametrize("extra, message", [
    ({"supervise": True}, "program mode does not take supervise"),
    ({"layers": 5}, "at most 4 layers of 8 heads"),
    ({"vocab": ["<s>", "a"]}, "reserves for the beginning"),
    ({"init_model": "m" + "a" * 15}, "cannot start from a compiled model"),
    ({"mode": "standard", "eos": True}, "eos apply to program mode only"),
])
def test_program_mode_refusals(train_server, extra, message):
    with train_server.client() as c:
        body = {"source": HIST, "vocab": "ab", "max_len": 3, "mode": "program", "steps": 5, **extra}
        r = c.post("/api/v1/train", json=body)
        assert r.status_code == 422 and message in r.json()["error"]["message"], r.text
