"""AST -> operation graph: names, functions and closures, loops, lists, dicts, the library, load.

Interpretation runs the program's Python-level part (atoms, lists, dicts, functions, loops) at
once and builds s-op and selector nodes for everything that depends on the input. A statement
that fails is reported with its line and column and the rest of the program goes on; names it
would have defined are marked as failed, so later uses say why they are missing.

One module a job: interpreter.py (the Interpreter and `interpret`), statements.py (and the names they bind),
expressions.py (and the graph nodes they build),
functions.py (calls and closures), loops.py (loops and comprehensions),
scope.py (names and scopes), atoms.py (Python-level values), builtins.py, library.py (the standard
library and `load`), interpretation.py (the result).
"""
from .atoms import ATOM_TYPES, static_type
from .interpretation import Definition, Interpretation
from .interpreter import Interpreter, interpret
from .library import LIBRARY_RESOURCE, parse_program, warm
from .scope import RESERVED_EVERYWHERE

__all__ = ["interpret", "Interpreter", "Interpretation", "Definition", "parse_program", "warm", "static_type",
           "ATOM_TYPES", "LIBRARY_RESOURCE", "RESERVED_EVERYWHERE"]
