"""The environments every program starts in (built-in names, then the standard library written in
library.rasp), and `load "file";` of RASP files beside the program."""
from __future__ import annotations

import functools
import math
from importlib import resources
from pathlib import Path

from ..lang import ast
from ..lang.errors import RaspError
from ..lang.parser import parse
from ..program import IndicesInput, Map, TokensInput
from .builtins import BUILTINS
from .scope import Builtin, Env

LIBRARY_RESOURCE = ("rasplay.engine", "library.rasp")


@functools.lru_cache(maxsize=16)
def parse_program(source: str) -> ast.Program:
    """The parsed program (interpretation never changes an AST, so parses can be shared)."""
    return parse(source)


def warm() -> None:
    """Build the parser and parse the library now, once per process, outside any time limit."""
    library_program()


@functools.lru_cache(maxsize=1)
def library_program() -> ast.Program:
    program = parse(resources.files(LIBRARY_RESOURCE[0]).joinpath(LIBRARY_RESOURCE[1]).read_text(encoding="utf-8"),
                    "<library>")
    if program.syntax_errors:
        raise RuntimeError(f"library.rasp: {program.syntax_errors[0]}")
    return program


class LibraryMixin:
    """The Interpreter's environments and loaded files (see interpreter.py)."""

    def builtin_env(self) -> Env:
        env = Env()
        tokens = self.graph.add(TokensInput(label="tokens"))
        indices = self.graph.add(IndicesInput(label="indices"))
        env.vars.update({
            "tokens": tokens, "tokens_asis": tokens, "indices": indices,
            "True": True, "False": False,
        })
        for conv in ("str", "int", "float", "bool"):
            env.vars[f"tokens_{conv}"] = self.graph.add(
                Map(f"to_{conv}", (("arg", 0),), (tokens,), label=f"tokens_{conv}"))
        for name, fn in BUILTINS.items():
            env.vars[name] = Builtin(name, fn)
        return env

    def library_env(self) -> Env:
        """The library, interpreted into this graph. It runs outside the user's time limit (it is
        part of rasplay, not of the program): a short limit must not break it."""
        env = Env(self.builtin_env())
        program = library_program()
        self.sources[program.source_name] = program.source
        before = len(self.diagnostics)
        deadline, self.deadline = self.deadline, math.inf
        try:
            self.run(program, env, top_level=False)
        finally:
            self.deadline = deadline
        if len(self.diagnostics) > before:  # a broken library is a bug in rasplay, say so loudly
            raise RuntimeError(f"library.rasp failed: {self.diagnostics[before:]}")
        self.library = env
        self.library_names = frozenset(n for n in env.vars if not n.startswith("_"))
        return env

    def load(self, stmt: ast.Load, env: Env, definitions):
        name = stmt.path if stmt.path.endswith(".rasp") else stmt.path + ".rasp"
        if ".." in Path(name).parts or Path(name).is_absolute():
            raise RaspError(f"load \"{stmt.path}\": only files beside the program can be loaded", stmt.span, "load")
        path = next((d / name for d in self.load_dirs if (d / name).is_file()), None)
        if path is None:
            where = ", ".join(str(d) for d in self.load_dirs) or "no directory (give the program as a file)"
            raise RaspError(f"load \"{stmt.path}\": no file {name} in {where}", stmt.span, "load")
        key = str(path.resolve())
        if key in self.loading:
            raise RaspError(f"load \"{stmt.path}\": files load each other in a cycle", stmt.span, "load")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise RaspError(f"load \"{stmt.path}\": cannot read {name} ({e})", stmt.span, "load")
        program = parse(text, name)
        self.sources[name] = text
        child = Env(self.library)  # a loaded file sees the library, not the loading program's names
        before = len(self.diagnostics)
        self.loading.append(key)
        try:
            self.run(program, child, top_level=False)
        finally:
            self.loading.pop()
        failures = [d for d in self.diagnostics[before:] if d["severity"] == "error"]
        del self.diagnostics[before:]  # diagnostics locate places in the program; the file's are summarised
        for n, v in child.vars.items():
            if not n.startswith("_"):  # shown and usable as outputs, as the original shows them
                self.bind(env, n, v, stmt.span, definitions)
        if failures:
            raise RaspError(f"load \"{stmt.path}\": {len(failures)} error(s) in {name}, first: "
                            f"{failures[0]['message']} (line {failures[0].get('line', '?')})", stmt.span, "load")
