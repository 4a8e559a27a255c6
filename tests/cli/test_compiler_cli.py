"""`rasplay compile`: the summary, --check, --json (one object only), -o weights, clear errors."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rasplay import engine

ROOT = Path(__file__).resolve().parents[2]
REVERSE = ROOT / "examples" / "reverse.rasp"


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rasplay.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          input=stdin, timeout=120)


def test_json_is_one_object_with_summary_check_and_weights(tmp_path):
    weights = tmp_path / "reverse.npz"
    out = run("compile", str(REVERSE), "--vocab", "abc", "--max-len", "5", "--check", "--json", "-o", str(weights))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert set(doc) == {"summary", "check", "weights"}
    s = doc["summary"]
    # 18 dimensions: `reverse` takes the one of `length [1/(w+1)]`, erased by 1 more unit of layer 1's MLP
    assert (s["layers"], s["heads_per_layer"], s["residual_width"]) == (2, [1, 1], 18)
    assert s["params"] > 0 and s["mlp_widths"] == [26, 0] and s["layout"][2]["name"] == "tokens"
    assert doc["check"]["agree"] == doc["check"]["inputs"] == 363 and doc["check"]["exhaustive"]
    model = engine.load_model(weights)
    direct = engine.compile(REVERSE.read_text(), vocab="abc", max_len=5)
    ids = np.array([[0, 1, 2, 3]])
    assert np.array_equal(model.forward(ids).out, direct.transformer.forward(ids).out)


def test_no_reuse_residual_keeps_every_value_in_its_own_dimensions():
    out = run("compile", str(REVERSE), "--vocab", "abc", "--max-len", "5", "--check", "--json",
              "--no-reuse-residual")
    assert out.returncode == 0, out.stderr
    s = json.loads(out.stdout)["summary"]
    assert s["residual_width"] == 19 and s["residual_reuse"] is None and s["mlp_widths"] == [25, 0]


def test_readable_summary_and_sampled_check():
    out = run("compile", str(ROOT / "examples" / "histogram.rasp"), "--vocab", '["a", "b", "c", "d"]',
              "--max-len", "9", "--check")
    assert out.returncode == 0, out.stderr
    assert "'hist' -> 1 layer (RASP analysis: 1), heads per layer 1" in out.stdout
    assert "residual layout:" in out.stdout and "layer 1 head 0: same_token" in out.stdout
    assert "agree with the evaluator (SAMPLED: a seeded sample of" in out.stdout
    assert "of the 349524 inputs of length 1..9; raise --check-limit to try them all" in out.stdout


def test_check_is_exhaustive_up_to_the_check_limit():
    out = run("compile", str(ROOT / "examples" / "histogram.rasp"), "--vocab", "ab", "--max-len", "6", "--check",
              "--check-limit", "126")
    assert out.returncode == 0, out.stderr
    assert "check: 126/126 inputs agree with the evaluator (exhaustive: every input of length 1..6)" in out.stdout
    out = run("compile", str(ROOT / "examples" / "histogram.rasp"), "--vocab", "ab", "--max-len", "6", "--check",
              "--check-limit", "125")
    assert "SAMPLED" in out.stdout


def test_errors_are_file_line_col_without_traceback(tmp_path):
    prog = tmp_path / "bad.rasp"
    prog.write_text("a = indices;\nx = tokens + 1;\n")
    out = run("compile", str(prog), "--vocab", "ab", "--max-len", "4", "--json")
    assert out.returncode == 1 and out.stdout == ""
    assert f"{prog}:2:5: error: 'x' fails on every input: cannot add str and int" in out.stderr
    assert "Traceback" not in out.stderr
    out = run("compile", "-", "--vocab", "ab", "--max-len", "4", "--output", "nope", stdin="x = tokens;")
    assert out.returncode == 1 and "no s-op named 'nope'" in out.stderr and "Traceback" not in out.stderr
    out = run("compile", "-", "--vocab", "[1,", "--max-len", "4", stdin="x = tokens;")
    assert out.returncode != 0 and "--vocab is not a valid JSON list" in out.stderr


def test_eval_still_works():
    out = run("eval", str(REVERSE), "-i", "hey")
    assert out.returncode == 0 and 'reverse("hey") = [y, e, h]' in out.stdout
