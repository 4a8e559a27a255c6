"""Fidelity in a fresh process (tests/unit/test_fidelity.py and test_fidelity_mixed.py hold the rest): the
command line reports a stray brace without a traceback and evaluates a program larger than the largest
published one; a short time limit in a fresh process still evaluates a small program."""
import json
import subprocess
import sys


def test_cli_reports_a_stray_brace_without_a_traceback(tmp_path):
    prog = tmp_path / "p.rasp"
    prog.write_text("x = indices;\n}\ny = tokens;\n")
    out = subprocess.run([sys.executable, "-m", "rasplay.cli", "eval", str(prog), "-i", "ab"],
                         capture_output=True, text=True, timeout=120)
    assert "Traceback" not in out.stderr + out.stdout
    assert "2:1" in out.stdout + out.stderr


def test_a_short_time_limit_in_a_fresh_process_evaluates_a_small_program():
    code = ("from rasplay import engine\n"
            "doc = engine.evaluate('x = indices;', ['ab'], limits=engine.Limits(eval_seconds=0.05))\n"
            "print(doc['results']['x']['values'], [d['kind'] for d in doc['diagnostics']])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[0, 1]] []"


def test_the_cli_evaluates_a_program_larger_than_the_largest_published_one(tmp_path):
    prog = tmp_path / "big.rasp"
    prog.write_text("".join(f"v{i} = indices + {i};  # padding to the size of a real, commented program\n"
                            for i in range(2000)) + "out_sop = v1999;\n")
    assert prog.stat().st_size > 130_000
    run = subprocess.run([sys.executable, "-m", "rasplay.cli", "eval", str(prog), "-i", "ab", "--json",
                          "--names", "out_sop"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"]["out_sop"]["values"] == [[1999, 2000]]

