"""README.md says true things: its two set-up commands are the ones the project uses (its Python snippet,
run in a fresh process: tests/cli/test_readme_snippet.py)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_two_set_up_commands():
    blocks = re.findall(r"```\n(.*?)```", README.split("## A tour")[0], re.S)
    assert [b.strip() for b in blocks] == ["pip install -e . && rasplay serve", "make test"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "Copyright (c)" in (ROOT / "LICENSE").read_text() and "the rasplay authors" in (ROOT / "LICENSE").read_text()
