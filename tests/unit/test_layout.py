"""The package's layout (docs/architecture.md): one import style inside it, and rooms that import only
the rooms below them. Read from the source with `ast`, so nothing is imported or run."""
import ast
from pathlib import Path

import pytest

from support.kinds import KINDS

ROOT = Path(__file__).resolve().parents[2]
while not (ROOT / "pyproject.toml").exists():   # tests/<kind>/ or tests/
    ROOT = ROOT.parent
# folder -> its import path (pyproject.toml's package-dir)
ROOMS = {"rasplay": "rasplay", "engine": "rasplay.engine", "server": "rasplay.server", "cli": "rasplay.cli",
         "interop": "rasplay.interop", "web": "rasplay.web", "examples": "rasplay.examples",
         "exercises": "rasplay.exercises"}
# which rooms each room may import (docs/architecture.md, "Rooms and floors")
MAY_IMPORT = {"engine": set(), "server": {"engine", "interop"}, "interop": {"engine"}, "rasplay": {"engine", "interop"},
              "cli": {"engine", "server", "interop"}, "web": set(), "examples": set(), "exercises": set()}


def python_files(room: str):
    return sorted((ROOT / room).rglob("*.py"))


def imported_modules(path: Path, room: str):
    """(line, absolute module name, written absolutely) for every import of `path`, relative ones resolved."""
    package = ROOMS[room].split(".") + list(path.relative_to(ROOT / room).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                names = [node.module] if node.module else [a.name for a in node.names]
                for name in names:
                    yield node.lineno, ".".join(base + [name]), False
            elif node.module:
                yield node.lineno, node.module, True
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, True


def room_of(module: str) -> str | None:
    """The room a `rasplay...` module lives in (None for anything outside rasplay)."""
    parts = module.split(".")
    if parts[0] != "rasplay":
        return None
    if len(parts) > 1 and f"rasplay.{parts[1]}" in ROOMS.values():
        return parts[1]
    return "rasplay"


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_imports_inside_the_package_are_relative(room):
    absolute = [f"{path.relative_to(ROOT)}:{line}: {module}"
                for path in python_files(room) for line, module, written in imported_modules(path, room)
                if written and room_of(module) is not None]
    assert absolute == [], "write these imports relative (from ..engine import X):\n" + "\n".join(absolute)


@pytest.mark.parametrize("room", sorted(ROOMS))
def test_a_room_imports_only_rooms_below_it(room):
    upward = [f"{path.relative_to(ROOT)}:{line}: {module}"
              for path in python_files(room) for line, module, _ in imported_modules(path, room)
              if room_of(module) not in (None, room) and room_of(module) not in MAY_IMPORT[room]]
    assert upward == [], f"{room}/ may import only {sorted(MAY_IMPORT[room])}:\n" + "\n".join(upward)


def test_the_rooms_are_the_package_dirs_of_pyproject():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    for folder, module in ROOMS.items():
        assert f'"{module}" = "{folder}"' in text


def test_the_checks_see_a_relative_import_across_rooms():
    """The resolution the two tests above rely on: `...engine` from server/api/common.py is rasplay.engine."""
    path = ROOT / "server" / "api" / "common.py"
    modules = {module for _, module, _ in imported_modules(path, "server")}
    assert "rasplay.engine.inputs" in modules and "rasplay.server.errors" in modules
    assert room_of("rasplay.engine.inputs") == "engine" and room_of("rasplay") == "rasplay"


# ---------------------------------------------------------------- the tests' own layout (docs/testing.md)

TESTS = ROOT / "tests"


def python_test_files():
    return [p for p in TESTS.rglob("*.py") if "node_modules" not in p.parts]


def test_no_test_module_imports_another():
    """Helpers live in tests/support; a test module (or conftest) imported by name is a helper in the wrong place."""
    test_modules = {p.stem for p in python_test_files() if p.name.startswith("test_")} | {"conftest"}
    imports = []
    for path in python_test_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            imports += [f"{path.relative_to(TESTS)}:{node.lineno}: {name}" for name in names
                        if name.split(".")[-1] in test_modules or name.split(".")[0] in test_modules]
    assert imports == [], "move what these import into tests/support:\n" + "\n".join(imports)


def test_every_test_module_is_in_the_folder_of_its_kind():
    misplaced = [str(p.relative_to(TESTS)) for p in python_test_files() if p.name.startswith("test_")
                 and (len(p.relative_to(TESTS).parts) != 2 or p.relative_to(TESTS).parts[0] not in KINDS)]
    assert misplaced == [], f"a test module goes in one of tests/{'|'.join(KINDS)}/: {misplaced}"
    names = [p.name for p in python_test_files() if p.name.startswith("test_")]
    assert len(names) == len(set(names)), "two test modules of one name (pytest imports them by their name)"


def test_every_kind_is_a_declared_marker():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert all(f'"{kind}: tests/{kind}' in text for kind in KINDS)


# ---------------------------------------------------------------- sizes (docs/architecture.md)

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
SIZED = ("rasplay", "engine", "server", "cli", "interop")
# Over the limits today, each named with its size; an entry that is no longer over fails the test below,
# so the list only shrinks.
MODULES_OVER: dict[str, int] = {}
FUNCTIONS_OVER: dict[str, int] = {}


def sizes():
    modules, functions = {}, {}
    for room in SIZED:
        for path in python_files(room):
            text = path.read_text(encoding="utf-8")
            name = str(path.relative_to(ROOT))
            modules[name] = len(text.splitlines())
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    functions[f"{name}:{node.name}"] = max(functions.get(f"{name}:{node.name}", 0),
                                                           node.end_lineno - node.lineno + 1)
    return modules, functions


def test_no_module_over_500_lines_and_no_function_over_80():
    modules, functions = sizes()
    over = [f"{name}: {n} lines" for name, n in sorted(modules.items())
            if n > MAX_MODULE_LINES and name not in MODULES_OVER]
    over += [f"{name}: {n} lines" for name, n in sorted(functions.items())
             if n > MAX_FUNCTION_LINES and name not in FUNCTIONS_OVER]
    assert over == [], (f"modules are at most {MAX_MODULE_LINES} lines and functions at most "
                        f"{MAX_FUNCTION_LINES}: split these by responsibility\n" + "\n".join(over))


def test_every_exemption_is_still_needed():
    modules, functions = sizes()
    stale = [name for name in MODULES_OVER if modules.get(name, 0) <= MAX_MODULE_LINES]
    stale += [name for name in FUNCTIONS_OVER if functions.get(name, 0) <= MAX_FUNCTION_LINES]
    assert stale == [], f"now within the limits: remove from the exemptions in this file: {stale}"
