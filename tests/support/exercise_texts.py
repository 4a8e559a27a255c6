"""Exercise files the exercise tests share (tests/unit/test_exercises.py, tests/cli/test_cli_exercises.py)."""

# the smallest valid exercise: a title, a task, a target, an alphabet, lengths and a reference solution
MINIMAL = """# title: Copy
# task: Define `copied`: the tokens themselves.
# target: copied
# alphabet: ab
# lengths: 1-4
# --- reference
copied = tokens;
"""
