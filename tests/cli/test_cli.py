"""`rasplay eval`: the JSON document, the readable display, diagnostics on stderr, exit status."""
import json
import subprocess
import sys
from pathlib import Path

from rasplay import engine

ROOT = Path(__file__).resolve().parents[2]


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "rasplay.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, input=stdin, timeout=60)


def test_json_output_is_exactly_the_evaluation_document():
    path = ROOT / "examples" / "reverse.rasp"
    out = run("eval", str(path), "-i", "hello", "-i", "ab", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc == engine.evaluate(path.read_text(), ["hello", "ab"], input_format="str", load_dirs=[path.parent])


def test_readable_display_like_the_repl():
    out = run("eval", str(ROOT / "examples" / "reverse.rasp"), "-i", "hey")
    assert out.returncode == 0
    assert 'reverse("hey") = [y, e, h] (strs)   layer 2' in out.stdout
    assert "flip(\"hey\")   selector, layer 2, head 0" in out.stdout
    assert "    h | . . 1   width 1" in out.stdout
    assert "-- 2 layers; heads per layer: 1, 1" in out.stdout


def test_json_inputs_and_names(tmp_path):
    prog = tmp_path / "p.rasp"
    prog.write_text("tokens = tokens_int; d = tokens * 2; e = d + 1;")
    out = run("eval", str(prog), "-i", "[1, 2]", "--input-format", "json", "--names", "e", "--json")
    doc = json.loads(out.stdout)
    assert list(doc["results"]) == ["e"] and doc["results"]["e"]["values"] == [[3, 5]]


def test_errors_go_to_stderr_with_file_line_col_and_fail(tmp_path):
    prog = tmp_path / "bad.rasp"
    prog.write_text("a = indices;\nb = a + nope;\n")
    out = run("eval", str(prog), "-i", "ab", "--json")
    assert out.returncode == 1
    json.loads(out.stdout)  # stdout stays a clean document
    assert f"{prog}:2:9: error: 'nope' is not defined" in out.stderr


def test_program_from_stdin_and_runtime_errors_fail():
    out = run("eval", "-", "-i", "ab", stdin="x = tokens + 1;")
    assert out.returncode == 1 and "cannot add str and int" in out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_unreadable_file_is_a_clear_message():
    out = run("eval", "/nonexistent/x.rasp", "-i", "a")
    assert out.returncode != 0 and "cannot read /nonexistent/x.rasp" in out.stderr and "Traceback" not in out.stderr
