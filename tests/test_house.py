"""The house rules (issues 29 and 37) for all three packages: no import circles between a
package's modules (counting imports inside functions and under TYPE_CHECKING, which only
hide a circle; the engine's core data model is the one circle allowed), no file over ~400
lines, and ipu_engine's floors: each layer of Poplar's stack imports only those below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ipu_engine", "profiler_core", "popvision_py")
MAX_LINES = 400

#: The engine's core data model -- a graph holds tensors, compute sets of vertices and
#: programs, each of which names its graph -- is the one import circle the house allows.
CORE_DATA_MODEL = {
    f"ipu_engine.poplar.{name}"
    for name in ("graph", "graph_compute", "program", "tensor", "vertices")
}

#: ipu_engine's floors, bottom up (the stack it models): a module imports modules of its
#: own floor or below only. A module's floor is its longest matching prefix.
ENGINE_FLOORS = (
    ("the ground: errors, argument checks, element types, logging", ("ipu_engine.common",)),
    ("libpvti", ("ipu_engine.pvti",)),
    ("Poplar: graph, programs, engine, compiler, cost model, reports", ("ipu_engine.poplar",)),
    ("the built-in codelets", ("ipu_engine.codelets",)),
    ("PopLibs' poputil", ("ipu_engine.poputil",)),
    ("PopLibs' popops", ("ipu_engine.popops",)),
    ("PopLibs' poplin", ("ipu_engine.poplin",)),
    ("PopLibs' popnn", ("ipu_engine.popnn",)),
    ("the front-end", ("ipu_engine.frontend",)),
    ("ONNX", ("ipu_engine.onnx",)),
    ("PopTorch, on ONNX", ("ipu_engine.poptorch",)),
    ("what-ifs: a serialized graph re-planned", ("ipu_engine.replan",)),
    ("the package's face", ("ipu_engine",)),
)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports anywhere in it (``from a import b`` counts
    as importing ``a.b`` when that is a module, else ``a``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                found.add(name if name in modules else node.module)
    return {name for name in found if name in modules}


def import_graph(package: str) -> dict[str, set[str]]:
    paths = {module_name(p): p for p in (ROOT / package).rglob("*.py")}
    modules = set(paths)
    graph = {name: imports_of(path, modules) for name, path in paths.items()}
    for name in graph:  # a package's __init__ is not an edge worth a circle
        graph[name] = {m for m in graph[name] if not name.startswith(f"{m}.")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle_hidden_in_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def floor_of(module: str) -> int:
    matches = [
        (len(prefix), floor)
        for floor, (_, prefixes) in enumerate(ENGINE_FLOORS)
        for prefix in prefixes
        if module == prefix or module.startswith(f"{prefix}.")
    ]
    return max(matches)[1]


def arrows_down_the_floors(graph: dict[str, set[str]]) -> list[str]:
    """Imports that run up the floors, as "importer -> imported (floor names)"."""
    return [
        f"{a} -> {b} ({ENGINE_FLOORS[floor_of(a)][0]} imports {ENGINE_FLOORS[floor_of(b)][0]})"
        for a in sorted(graph)
        for b in sorted(graph[a])
        if floor_of(b) > floor_of(a)
    ]


def test_the_floor_check_finds_an_import_that_runs_up():
    graph = {"ipu_engine.poplar.engine": {"ipu_engine.popops.reduce", "ipu_engine.pvti.session"}}
    graph["ipu_engine.popops.reduce"] = graph["ipu_engine.pvti.session"] = set()
    assert arrows_down_the_floors(graph) == [
        "ipu_engine.poplar.engine -> ipu_engine.popops.reduce (Poplar: graph, programs, "
        "engine, compiler, cost model, reports imports PopLibs' popops)"
    ]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_module_imports_itself_in_a_circle(package):
    graph = import_graph(package)
    assert len(graph) > 50  # the graph is read
    found = circles(graph)
    if package == "ipu_engine":  # the core data model may stay one circle, and only it
        assert all(set(circle) <= CORE_DATA_MODEL for circle in found), found
        assert len(found) <= 1
    else:
        assert found == []


def test_the_import_graph_sees_the_packages_imports():
    assert "popvision_py.app.runner" in import_graph("popvision_py")["popvision_py.app.main_window"]
    engine = import_graph("ipu_engine")
    assert (
        "ipu_engine.pvti" in engine["ipu_engine.poplar.host_streams"]
    )  # from ipu_engine import pvti
    assert "ipu_engine.poplar.graph" in engine["ipu_engine.poplar.tensor"]  # under TYPE_CHECKING


def test_every_engine_module_imports_only_its_floor_and_those_below():
    graph = import_graph("ipu_engine")
    assert {floor_of(m) for m in graph} == set(range(len(ENGINE_FLOORS)))  # every floor lived in
    assert arrows_down_the_floors(graph) == []


def test_the_engine_has_no_loose_module_beside_its_floors():
    loose = [p.name for p in (ROOT / "ipu_engine").glob("*.py") if p.name != "__init__.py"]
    assert loose == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_file_is_over_400_lines(package):
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / package).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
