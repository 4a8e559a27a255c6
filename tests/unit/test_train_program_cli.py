"""`rasplay train FILE --mode program`: the summary and the learned program (printed, or written with
--emit), and clear errors for program-mode options used without it."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.needs import need

ROOT = Path(__file__).resolve().parents[2]
HISTOGRAM = str(ROOT / "examples" / "histogram.rasp")


def run(*args):
    code = "import sys; from rasplay.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.mark.train
def test_program_mode_emits_a_program_file(tmp_path):
    need("torch")
    out_file = tmp_path / "learned.rasp"
    out = run("train", HISTOGRAM, "--mode", "program", "--vocab", "ab", "--max-len", "3", "--steps", "5",
              "--layers", "1", "--heads", "1", "--mlps", "0", "--n-train", "200", "--n-test", "50",
              "--emit", str(out_file))
    assert out.returncode == 0, out.stderr
    assert "hist: program model of 1 layer(s), 1 categorical + 1 counting head(s)" in out.stdout
    assert "the learned program on held-out inputs:" in out.stdout and f"wrote the learned program to {out_file}" in out.stdout
    text = out_file.read_text()
    assert "# learned: rasplay\n# bos: <s>\n# output: learned_hist\n" in text
    check = run("eval", str(out_file), "-i", '["<s>", "a", "b"]', "--input-format", "json", "--json")
    doc = json.loads(check.stdout)
    assert not [d for d in doc["diagnostics"] if d["severity"] == "error"] and len(doc["results"]["learned_hist"]["values"][0]) == 3


def test_program_options_need_program_mode():
    out = run("train", HISTOGRAM, "--vocab", "ab", "--emit", "x.rasp")
    assert out.returncode == 1 and "--emit writes the program that --mode program learns" in out.stderr
    out = run("train", HISTOGRAM, "--vocab", "ab", "--eos")
    assert out.returncode == 1 and "eos apply to program mode only" in out.stderr
