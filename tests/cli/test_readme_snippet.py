"""README.md's Python snippet runs as written (from the repository's root, as a reader of the README would),
and the values its comments show are the values it gives (tests/unit/test_readme.py checks the rest)."""
import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def python_snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)



def checked(snippet: str) -> tuple[str, int]:
    """The snippet, with each `expression   # value` line turned into an assert that it gives that value."""
    lines, asserts = [], 0
    for line in snippet.splitlines():
        code, sep, comment = line.partition("#")
        if not sep or not code.strip():
            lines.append(line)
            continue
        try:
            expected = ast.literal_eval(comment.strip())
            ast.parse(code.strip(), mode="eval")
        except (SyntaxError, ValueError):
            lines.append(line)
            continue
        lines.append(f"assert ({code.strip()}) == {expected!r}, ({code.strip()!r}, {code.strip()})")
        asserts += 1
    return "\n".join(lines), asserts



def test_the_python_snippet_runs_as_written_and_gives_what_it_shows():
    (snippet,) = python_snippets()
    code, asserts = checked(snippet)
    assert asserts >= 2
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    plain = subprocess.run([sys.executable, "-c", snippet], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stderr

