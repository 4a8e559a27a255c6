"""No import circle inside server/ or interop/: every import (at the top of a module or inside a
function) is an edge of the graph, built from the source with ast."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"server": "rasplay.server", "interop": "rasplay.interop"}


def module_name(path: Path, folder: str) -> str:
    parts = path.relative_to(ROOT / folder).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGES[folder], *parts))


def imported(tree: ast.Module, name: str, is_package: bool) -> set[str]:
    """The rasplay modules a module imports (relative imports resolved; `from X import y` counts X.y
    when that is a module, else X)."""
    out = set()
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
    return out


def graph(folder: str) -> dict[str, set[str]]:
    files = sorted((ROOT / folder).rglob("*.py"))
    names = {module_name(p, folder): p for p in files}
    edges = {}
    for name, path in names.items():
        targets = imported(ast.parse(path.read_text()), name, path.name == "__init__.py")
        # a package's __init__ is imported with each of its modules: only explicit edges count
        edges[name] = {t for t in targets if t in names and t != name}
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan's algorithm)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_relative_imports_resolve():
    tree = ast.parse("from . import errors\nfrom ..store import open_store\nfrom .api import deps\n")
    found = imported(tree, "rasplay.server.course.store_postgres", False)
    assert {"rasplay.server.course.errors", "rasplay.server.store", "rasplay.server.course.api.deps"} <= found


def test_no_import_circle_in_server():
    edges = graph("server")
    assert len(edges) > 30 and "rasplay.server.course.celery_app" in edges
    assert cycles(edges) == []


def test_no_import_circle_in_interop():
    """Tracr's API module (tracr_rasp.py) joins the expression classes (tracr_expr.py) and the evaluation
    rules that read them (tracr_eval.py): no module imports one that imports it."""
    edges = graph("interop")
    assert len(edges) > 5 and "rasplay.interop.tracr_expr" in edges["rasplay.interop.tracr_eval"]
    assert cycles(edges) == []
