"""`rasplay dialect FILE` and `rasplay compile --length-free`."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "length_free_programs"


def run(*args):
    return subprocess.run([sys.executable, "-m", "rasplay.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_dialect_text_and_json():
    out = run("dialect", str(ROOT / "examples" / "parity.rasp"))
    assert out.returncode == 0, out.stderr
    assert "is in RASP" in out.stdout and "parity.rasp:9:10: 'ones % 2' is a numerical predicate (MOD)" in out.stdout
    doc = json.loads(run("dialect", str(PROGRAMS / "induction.rasp"), "--json").stdout)
    assert doc["smallest"] == "b-rasp" and doc["causal"]["member"] is True


def test_compile_length_free_check_and_refusal(tmp_path):
    out = run("compile", str(PROGRAMS / "majority.rasp"), "--vocab", "01", "--length-free", "--check", "--json",
              "-o", str(tmp_path / "m.npz"))
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["check"]["all_agree"] and [p["n"] for p in doc["check"]["per_length"]][-1] == 4096
    assert (tmp_path / "m.npz").exists()
    out = run("compile", str(ROOT / "examples" / "parity.rasp"), "--vocab", "01", "--length-free")
    assert out.returncode == 1 and "parity.rasp:9:10: error: length-free compilation" in out.stderr
    out = run("compile", str(ROOT / "examples" / "parity.rasp"), "--vocab", "01")
    assert out.returncode == 2 and "--max-len" in out.stderr


def test_compile_length_free_soft_study_text():
    out = run("compile", str(PROGRAMS / "a_before_b.rasp"), "--vocab", "abc", "--length-free", "--soft")
    assert out.returncode == 0, out.stderr
    assert "soft attention, share of 8 inputs right by length" in out.stdout and "n=512: 1.00 | 0.00 | 1.00" in out.stdout


def test_compile_length_free_says_when_it_cannot_write_the_weights(tmp_path):
    (tmp_path / "file").write_text("x")
    out = run("compile", str(PROGRAMS / "majority.rasp"), "--vocab", "01", "--length-free",
              "-o", str(tmp_path / "file" / "m.npz"))
    assert out.returncode == 1 and "rasplay: cannot write" in out.stderr and "Traceback" not in out.stderr
