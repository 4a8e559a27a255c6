"""A program that does not parse and looks like Python (a Tracr program pasted in, say) gets one more syntax
error first, saying so and how Tracr programs come in (the CLI's `--tracr`, docs/interop.md); its own syntax
errors follow. Only lines that RASP cannot hold count: `import` and `from ... import`, a `def` line ending in
`:`, and Tracr's `rasp.Select(`, `rasp.Aggregate(`, ... calls (comment lines never count)."""
from __future__ import annotations

import re

from .errors import RaspError, Span

_PYTHON_LINE = re.compile(
    r"^\s*(import\s+[A-Za-z_]|from\s+[A-Za-z_][\w.]*\s+import\s)"            # imports
    r"|^\s*def\s+\w+\s*\([^)]*\)\s*(->[^:]*)?:\s*(#.*)?$"                     # def f(x):
    r"|\brasp\.(Select|Aggregate|Map|SequenceMap|SelectorWidth|numerical|categorical|Comparison|tokens|indices)\b")

MESSAGE = ("this looks like Python (a Tracr program?), not RASP. Tracr programs come in through the command "
           "line: `rasplay eval --tracr FILE.py:NAME --save-rasp OUT.rasp` writes the program in RASP, which this "
           "page opens (docs/interop.md, \"Tracr programs in\")")


def python_hint(source: str, source_name: str = "<program>") -> RaspError | None:
    """The hint for a source with Python lines (at the first of them), or None."""
    for number, line in enumerate(source.splitlines(), 1):
        if not line.lstrip().startswith("#") and _PYTHON_LINE.search(line):
            return RaspError(MESSAGE, Span(number, 1, number, len(line) + 1, source_name), "syntax")
    return None
