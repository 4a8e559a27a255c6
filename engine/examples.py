"""The example gallery: RASP programs shipped in the `rasplay.examples` package (the repository's
examples/ folder), one file each, with a comment header (header.py):

    # title: Reverse
    # description: One paragraph; continuation lines are indented comment lines.
    # input: hello
    # input_format: json        (optional: the input is a JSON list)
    # tags: basics, 2 layers
    # output: reverse           (the program's default output, for compile and train)
"""
from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

from .header import header_output, parse_header

ID_PATTERN = r"^[a-z0-9_]+$"


def examples_dir() -> Path:
    """Where the installed examples are (a folder of .rasp files)."""
    return Path(str(resources.files("rasplay.examples")))


@dataclass
class Example:
    id: str
    title: str
    description: str
    input: str
    input_format: str = "str"
    tags: list[str] = field(default_factory=list)
    output: str | None = None
    source: str = ""

    def summary(self) -> dict:
        d = asdict(self)
        del d["source"]
        return d


def read_example(path: Path) -> Example:
    text = path.read_text(encoding="utf-8")
    h = parse_header(text)
    return Example(
        id=path.stem, title=h.get("title", path.stem), description=h.get("description", ""),
        input=h.get("input", ""), input_format=h.get("input_format", "str"),
        tags=[t.strip() for t in h.get("tags", "").split(",") if t.strip()],
        output=header_output(text), source=text,
    )


def _teaching_order(example: Example) -> tuple:
    """Basics first, then by the number of layers the program needs, then by title."""
    layers = next((int(t.split()[0]) for t in example.tags if t.split()[0].isdigit()), 9)
    return (0 if "basics" in example.tags else 1, layers, example.title.lower())


@functools.lru_cache(maxsize=4)
def load_examples(directory: Path | None = None) -> tuple[Example, ...]:
    """Every example, in teaching order (from `directory`, default the installed examples)."""
    directory = directory or examples_dir()
    return tuple(sorted((read_example(p) for p in directory.glob("*.rasp")), key=_teaching_order))


def find_example(example_id: str, directory: Path | None = None) -> Example | None:
    return next((e for e in load_examples(directory) if e.id == example_id), None)
