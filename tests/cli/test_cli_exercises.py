"""`rasplay check FILE --exercise ID` on the command line: an exercise from a teacher's folder or a file, a
file that is not a valid exercise, an unknown exercise (the engine's side: tests/unit/test_exercises.py)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.exercise_texts import MINIMAL

ROOT = Path(__file__).resolve().parents[2]


def test_cli_check_with_a_teacher_folder_and_a_file_and_bad_ones(tmp_path):
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "copy.exercise").write_text(MINIMAL)
    (tmp_path / "bad.exercise").write_text(MINIMAL.replace("# target: copied\n", ""))
    prog = tmp_path / "p.rasp"
    prog.write_text("copied = tokens;")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "rasplay.cli", "check", str(prog), *args],
                              capture_output=True, text=True, cwd=ROOT, timeout=60)

    ok = run("--exercise", "copy", "--exercises", str(folder))
    assert ok.returncode == 0 and ok.stdout.startswith("PASS  copy"), ok.stderr
    assert run("--exercise", str(folder / "copy.exercise")).returncode == 0
    bad = run("--exercise", str(tmp_path / "bad.exercise"))
    assert bad.returncode == 2 and "bad.exercise: the header needs '# target:'" in bad.stderr
    unknown = run("--exercise", "nonesuch")
    assert unknown.returncode == 2 and "no such exercise (known: length, reverse" in unknown.stderr

