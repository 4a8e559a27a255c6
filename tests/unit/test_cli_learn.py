"""`rasplay learn check`: the report as text and JSON, and its exit codes (0 agrees, 1 disagrees, 2 refused)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TASK = "flip = select(indices, length - indices - 1, ==);\nreverse = aggregate(flip, tokens);\n"
RIGHT = ("# bos: <s>\n# eos: </s>\n# output: rev\nback = select(indices, length - indices - 1, ==);\n"
         "rev = aggregate(back, tokens);\n")
# reads position 4 - i: the mirror position only at length 3 (the BOS counted)
WRONG = "# bos: <s>\n# output: rev\nback = select(indices, 4 - indices, ==);\nrev = aggregate(back, tokens, \"-\");\n"


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "rasplay.cli", "learn", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def programs(tmp_path):
    for name, text in (("task.rasp", TASK), ("right.rasp", RIGHT), ("wrong.rasp", WRONG)):
        (tmp_path / name).write_text(text)


def test_a_right_program_exits_0_and_says_its_selector_is_the_tasks(tmp_path):
    programs(tmp_path)
    out = run("check", "right.rasp", "--task", "task.rasp", "--vocab", "abc", "--max-length", "4", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("AGREES on every input checked: learned rev (BOS <s>, EOS </s>) against task "
                                 "reverse: 120/120 inputs")
    assert "selector back (line 4) equals the task's flip" in out.stdout


def test_a_wrong_program_exits_1_with_its_shortest_failing_input(tmp_path):
    programs(tmp_path)
    out = run("check", "wrong.rasp", "--task", "task.rasp", "--vocab", "ab", "--max-length", "3", "--beyond", "1",
              "--show", "1", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("DISAGREES: learned rev (BOS <s>) against task reverse: 8/30 inputs")
    assert "    4*  exhaustive        0/16" in out.stdout and "* beyond --max-length" in out.stdout
    assert "  input:    a\n  expected: a\n  got:      -   (differs at 0)" in out.stdout
    doc = json.loads(run("check", "wrong.rasp", "--task", "task.rasp", "--vocab", '["a", "b"]', "--max-length", "3",
                         "--json", cwd=tmp_path).stdout)
    assert [row["agree"] for row in doc["lengths"]] == [0, 0, 8] and doc["all_agree"] is False


def test_a_refused_check_exits_2_with_the_reason(tmp_path):
    programs(tmp_path)
    out = run("check", "wrong.rasp", "--task", "task.rasp", "--vocab", "ab", "--max-length", "30", cwd=tmp_path)
    assert out.returncode == 2 and "the limit is 16" in out.stderr
    (tmp_path / "broken.rasp").write_text("a = tokens;\nb = = 1;\n")
    out = run("check", "broken.rasp", "--task", "task.rasp", "--vocab", "ab", cwd=tmp_path)
    assert out.returncode == 2 and "the learned program has an error (line 2, col" in out.stderr


def test_import_writes_the_rasp_program_and_refuses_what_it_cannot_read(tmp_path):
    from support import tp_reverse

    (tmp_path / "reverse.py").write_text(tp_reverse.program())
    (tmp_path / "reverse_weights.csv").write_text(tp_reverse.weights())
    (tmp_path / "task.rasp").write_text(TASK)
    out = run("import", "reverse.py", "--weights", "reverse_weights.csv", "-o", "reverse.rasp", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    source = (tmp_path / "reverse.rasp").read_text()
    assert "# bos: <s>" in source and "select_closest" in source
    checked = run("check", "reverse.rasp", "--task", "task.rasp", "--vocab", "ab", "--max-length", "3", "--json",
                  cwd=tmp_path)
    assert checked.returncode == 1
    assert [row["agree"] for row in json.loads(checked.stdout)["lengths"]] == [1, 1, 8]
    (tmp_path / "broken.py").write_text("def run(:\n")
    out = run("import", "broken.py", "--weights", "reverse_weights.csv", cwd=tmp_path)
    assert out.returncode == 2 and "broken.py: error:" in out.stderr and "not Python" in out.stderr
    out = run("import", "missing.py", "--weights", "reverse_weights.csv", cwd=tmp_path)
    assert out.returncode == 2 and "cannot read missing.py" in out.stderr
