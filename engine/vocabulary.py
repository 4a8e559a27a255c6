"""The language's vocabulary, for editors and the browser: the grammar's keywords, the built-in
functions and s-ops, the atoms, the standard library's names and the node kinds of the operation
graph. Each list is read from where the engine defines it (grammar.lark, the interpreter's built-in
environment, library.rasp, program.py), so the page holds no copy of its own (GET /language).
"""
from __future__ import annotations

import functools
import math

from .interpret import Interpreter
from .interpret.scope import Builtin
from .lang.parser import keywords
from .limits import DEFAULT_LIMITS
from .program import ROLES, Graph, SOp


@functools.lru_cache(maxsize=1)
def vocabulary() -> dict:
    """{"keywords", "builtins", "inputs", "atoms", "library", "kinds"}: every list sorted, except
    that the kinds say which node kinds are selectors, attention (a head), inputs and elementwise (the
    `role` of the analysis graph's nodes)."""
    interp = Interpreter(Graph(DEFAULT_LIMITS.max_nodes), DEFAULT_LIMITS, [], math.inf)
    builtin = interp.builtin_env()
    library = interp.library_env()
    names = builtin.vars
    return {
        "keywords": keywords(),
        "builtins": sorted(n for n, v in names.items() if isinstance(v, Builtin)),
        "inputs": sorted(n for n, v in names.items() if isinstance(v, SOp)),
        "atoms": sorted(n for n, v in names.items() if isinstance(v, bool)),
        "library": sorted(n for n in library.vars if not n.startswith("_")),
        "kinds": {role: [k for k, r in ROLES.items() if r == role]
                  for role in ("selector", "attention", "input", "elementwise")},
    }
