"""`rasplay dialect FILE` shows the length-generalisation predictions: each fragment with the file:line:col
that keeps the program out, the size and the summary; --json carries the document's part (over HTTP:
tests/api/test_api_dialect_prediction.py)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
LG = ROOT / "tests" / "length_generalization_programs"


def run(*args):
    return subprocess.run([sys.executable, "-m", "rasplay.cli", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


def test_dialect_text_shows_each_prediction_with_its_line():
    path = str(LG / "parity_prefix.rasp")
    out = run("dialect", path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "length generalisation (size 6 operations: 2 select, 1 and, 1 selector_width, 2 map):" in lines
    assert any(line.startswith(f"  no  C-RASP[periodic, local]  {path}:5:10: 'ones % 2' is a numerical predicate")
               for line in lines)
    assert any(line.startswith(f"  no  RASP-L  {path}:5:10: 'ones % 2' applies '%' to a count") for line in lines)
    assert lines[-1].startswith("Length generalisation: no guarantee from this program (not C-RASP[periodic, "
                                "local], line 5; not RASP-L, line 5")
    assert "will fail" not in out.stdout


def test_dialect_text_inside_both_and_json():
    out = run("dialect", str(LG / "majority_prefix.rasp"))
    assert out.returncode == 0, out.stderr
    assert "  yes C-RASP[periodic, local]: guaranteed by a theorem. Huang et al. (ICLR 2025)" in out.stdout
    assert "  yes RASP-L: predicted by a conjecture. Zhou et al. (ICLR 2024)" in out.stdout
    doc = json.loads(run("dialect", str(LG / "unique_copy.rasp"), "--json").stdout)
    part = doc["length_generalization"]
    assert [(f["id"], f["member"], f.get("line")) for f in part["fragments"]] == [
        ("c-rasp-periodic-local", False, 14), ("rasp-l", True, None)]
    assert part["size"]["operations"] == 15 and doc["smallest"] == "b-rasp"
