"""`rasplay train`: JSON output, readable summary, imported maps, clear errors; torch stays optional."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.needs import need

ROOT = Path(__file__).resolve().parents[2]
REVERSE = str(ROOT / "examples" / "reverse.rasp")
HISTOGRAM = str(ROOT / "examples" / "histogram.rasp")
NO_TORCH = "import sys; sys.modules['torch'] = None; "


def run(*args, prelude=""):
    code = prelude + "import sys; from rasplay.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.mark.train
def test_json_output_is_one_object(tmp_path):
    need("torch")
    out = run("train", HISTOGRAM, "--vocab", "abc", "--max-len", "5", "--steps", "40", "--d-model", "16",
              "--json", "-o", str(tmp_path / "m.pt"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["output"] == "hist" and doc["steps"] == 40 and doc["model"]["n_layers"] == 1
    assert {"curve", "final", "matches", "example", "params", "config"} <= set(doc)
    assert (tmp_path / "m.pt").exists()


@pytest.mark.train
def test_readable_progress_and_summary():
    need("torch")
    out = run("train", REVERSE, "--vocab", "abc", "--max-len", "4", "--steps", "60", "--d-model", "16", "--layers", "1")
    assert out.returncode == 0, out.stderr
    assert "step     50" in out.stdout and "reverse: 1 layer x 1 head, d_model 16" in out.stdout
    assert "held-out accuracy:" in out.stdout and "layer 2  flip" in out.stdout and "no head in that layer" in out.stdout


@pytest.mark.train
@pytest.mark.parametrize("args, message", [
    (["--output", "nope"], "no s-op named 'nope'"),
    (["--min-len", "5", "--max-len", "2"], "min_len (5) is larger than max_len (2)"),
    (["--steps", "0"], "steps must be an integer >= 1"),
    (["--vocab", "[1, "], "--vocab is not a valid JSON list"),
    (["--example", "zz"], "not in the model's vocabulary"),
])
def test_errors_are_messages_not_tracebacks(args, message):
    need("torch")
    out = run("train", REVERSE, "--steps", "2", "--d-model", "8", *args)
    assert out.returncode != 0 and message in out.stderr and "Traceback" not in out.stderr


def test_import_attention_scores_maps_without_torch(tmp_path):
    n = 4
    att = np.stack([np.full((1, n, n), 1 / n), np.eye(n)[::-1][None]])
    path = tmp_path / "maps.npz"
    np.savez(path, tokens=np.array(list("abcd")), attention=att)
    out = run("train", REVERSE, "--import-attention", str(path), "--json", prelude=NO_TORCH)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [m["score"] for m in doc["matches"]] == [1.0, 1.0]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"tokens": list("abc"), "attention": att.tolist()}))
    out = run("train", REVERSE, "--import-attention", str(bad), prelude=NO_TORCH)
    assert out.returncode == 1 and "maps are 4 x 4 but there are 3 tokens" in out.stderr


def test_engine_and_server_import_without_torch_and_train_says_how_to_install():
    code = NO_TORCH + "import rasplay.engine as engine, rasplay.cli.main, rasplay.engine.train; print(engine.train.TrainConfig(vocab='ab').validated().steps)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "2000", out.stderr
    out = run("train", REVERSE, "--steps", "1", prelude=NO_TORCH)
    assert out.returncode == 1 and "pip install 'rasplay[train]'" in out.stderr and "Traceback" not in out.stderr
