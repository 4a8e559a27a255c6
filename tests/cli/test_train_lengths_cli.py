"""Training for length on the command line (`rasplay train --train-lengths --test-lengths --positional
--causal`): per-bin accuracy in the JSON and the readable summary, and clear refusals of bad ranges (over
HTTP: tests/api/test_train_lengths_api.py)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.needs import need

need("torch")
pytestmark = pytest.mark.train

ROOT = Path(__file__).resolve().parents[2]
PER_POSITION = 'y = tokens == "a";\n'


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
