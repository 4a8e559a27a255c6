"""Training for length over HTTP and the CLI: train and test length ranges, the positional scheme, per-bin
accuracy in every progress event and in the result."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.needs import need
from support.train_jobs import read_events

need("torch")
pytestmark = pytest.mark.train

ROOT = Path(__file__).resolve().parents[2]
PER_POSITION = 'y = tokens == "a";\n'


@pytest.fixture(scope="module")
def train_server(tmp_path_factory):
    from support.live_server import LiveServer

    server = LiveServer(tmp_path_factory.mktemp("train_lengths"), "--workers", "1", "--train-jobs", "1",
                        "--train-queue", "1", "--train-seconds", "300")
    yield server
    server.stop()


def test_per_bin_accuracy_over_the_api(train_server):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": PER_POSITION, "vocab": "ab", "max_len": 5, "test_min_len": 6,
                                          "test_max_len": 15, "positional": "none", "causal": True, "steps": 120,
                                          "eval_every": 60, "n_train": 300, "n_test": 40, "d_model": 16})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        events, done = read_events(f"{train_server.url}/api/v1/train/{job_id}/events", timeout=300)
        assert done["status"] == "done", done
        evals = [e for e in events if e.get("point") == "eval"]
        assert evals and all([(b["lo"], b["hi"]) for b in e["bins"]] == [(1, 5), (6, 10), (11, 15)] for e in evals)
        result = c.get(f"/api/v1/train/{job_id}").json()["result"]
        bins = result["lengths"]["bins"]
        assert [b["held_out"] for b in bins] == [False, True, True]
        assert all(b["seq_acc"] == 1.0 and b["count"] > 0 for b in bins)
        assert result["lengths"]["compiled"]["length_free"]["available"] is True
        assert result["model"]["positional"] == "none" and result["model"]["causal"] is True


@pytest.mark.parametrize("change, message", [
    ({"test_min_len": 4, "test_max_len": 9}, "must be above max_len (5)"),
    ({"test_min_len": 8}, "give both test_min_len and test_max_len"),
    ({"positional": "rotary"}, "positional"),
    ({"test_min_len": 6, "test_max_len": 600}, "test_max_len"),
])
def test_bad_length_requests_are_clear_4xx(train_server, change, message):
    with train_server.client() as c:
        r = c.post("/api/v1/train", json={"source": PER_POSITION, "vocab": "ab", "max_len": 5, "steps": 5, **change})
        assert r.status_code == 422 and message in r.text, r.text


def cli(*args):
    code = "import sys; from rasplay.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


def test_per_bin_accuracy_over_the_cli(tmp_path):
    prog = tmp_path / "p.rasp"
    prog.write_text(PER_POSITION)
    common = ["train", str(prog), "--vocab", "ab", "--train-lengths", "1-5", "--test-lengths", "6-15",
              "--positional", "none", "--causal", "--steps", "120", "--d-model", "16", "--seed", "0",
              "--n-train", "300", "--n-test", "40"]
    out = cli(*common, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["config"]["min_len"] == 1 and doc["config"]["max_len"] == 5
    assert [(b["lo"], b["hi"], b["seq_acc"]) for b in doc["lengths"]["bins"]] == [(1, 5, 1.0), (6, 10, 1.0),
                                                                               (11, 15, 1.0)]
    out = cli(*common)
    assert out.returncode == 0, out.stderr
    assert "accuracy by length (none positions, causal, on cpu)" in out.stdout
    assert "11-15" in out.stdout and "held out by length" in out.stdout and "compiled  100.0%" in out.stdout
    bad = cli("train", str(prog), "--vocab", "ab", "--train-lengths", "1-5", "--test-lengths", "3-9")
    assert bad.returncode == 1 and "must be above max_len (5)" in bad.stderr and "Traceback" not in bad.stderr
    bad = cli("train", str(prog), "--vocab", "ab", "--test-lengths", "9-x")
    assert bad.returncode == 1 and "--test-lengths must be a range" in bad.stderr
