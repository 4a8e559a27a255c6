"""A program's comment header and its default output.

The comment lines at the top of a program (before its first line that is not a comment) may hold
`# key: value` fields; a field continues on the following comment lines that are indented by two
spaces or more:

    # title: Reverse
    # description: One paragraph; continuation lines are
    #   indented comment lines.
    # output: reverse

The examples use title, description, input, input_format, tags and output (examples.py). `output`
names the program's main s-op, its *default output*: the s-op that `compile`, `train` and the
browser's Compile and Train views use when none is given, and that the evaluation document reports.
Without the field, the default output is the last s-op the program defines.
"""
from __future__ import annotations

import re

from .program import SOp

_FIELD = re.compile(r"^#\s*([a-z_]+):\s?(.*)$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_header(source: str) -> dict[str, str]:
    """The `# key: value` fields of the program's leading comment lines."""
    header: dict[str, str] = {}
    key = None
    for line in source.splitlines():
        if not line.startswith("#"):
            break
        m = _FIELD.match(line)
        if m and not line.startswith("#  "):
            key = m.group(1)
            header[key] = m.group(2).strip()
        elif key is not None and line.strip("# ").strip():
            header[key] += " " + line.lstrip("#").strip()
    return header


def header_output(source: str) -> str | None:
    """The name in the program's `# output: NAME` field (None without one, or if it is not a name)."""
    value = parse_header(source).get("output", "")
    return value if _NAME.fullmatch(value) else None


def default_output(interp) -> str | None:
    """The program's default output (an Interpretation's): its `# output:` field, else the last s-op
    it defines; None when it defines no s-op."""
    named = header_output(interp.source)
    if named is not None:
        return named
    sops = [d.name for d in interp.definitions if isinstance(d.value, SOp)]
    return sops[-1] if sops else None
