"""The house rules of issue 29 for ``popvision_py``: no import circles between its modules
(counting imports inside functions and under TYPE_CHECKING, which only hide a circle) and no
file over ~400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "popvision_py"
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
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


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
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


def test_no_module_of_popvision_py_imports_itself_in_a_circle():
    graph = import_graph()
    assert "popvision_py.app.main_window" in graph  # the graph is read
    assert "popvision_py.app.runner" in graph["popvision_py.app.main_window"]
    assert circles(graph) == []


def test_no_file_of_popvision_py_is_over_400_lines():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


# -- tooltips are plain text, as labels are (issue 30) ----------------------------------------


def tooltip_texts(tree: ast.AST) -> list[ast.expr]:
    """Every expression that becomes a tooltip's text: the text of ``setToolTip`` and
    ``QToolTip.showText``, a ``setItemData`` for the tooltip role, and what a branch on
    ``ToolTipRole`` returns (a model's ``data`` or ``headerData``)."""
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name == "setToolTip" and node.args:
                found.append(node.args[-1])
            shows = name == "showText" and ast.unparse(node.func.value) == "QToolTip"
            if shows or (name == "setItemData" and "ToolTipRole" in ast.unparse(node)):
                found.append(node.args[1])
        elif isinstance(node, ast.If) and "ToolTipRole" in ast.unparse(node.test):
            found += [r.value for s in node.body for r in ast.walk(s) if isinstance(r, ast.Return)]
    return found


def is_plain(text: ast.expr | None) -> bool:
    """``plain_tooltip(...)``, another widget's ``toolTip()`` (plain already), or a literal
    without markup (Qt would guess it rich)."""
    if isinstance(text, ast.Call) and isinstance(text.func, ast.Name):
        return text.func.id == "plain_tooltip"
    if isinstance(text, ast.Call) and isinstance(text.func, ast.Attribute):
        return text.func.attr == "toolTip" and not text.args
    return (
        isinstance(text, ast.Constant)
        and isinstance(text.value, str)
        and not ({"<", "&"} & set(text.value))
    )


def test_the_tooltip_finder_sees_every_way_to_set_one():
    code = """
widget.setToolTip(f"Report {folder}")
label.setToolTip(box.toolTip())
item.setToolTip(0, plain_tooltip(name))
box.setToolTip("Plain help")
QToolTip.showText(pos, text, widget)
combo.setItemData(0, HELP, role=Qt.ItemDataRole.ToolTipRole)
def data(self, index, role):
    if role == Qt.ItemDataRole.ToolTipRole:
        return self.lines[index.row()]
    if role in (Qt.ItemDataRole.ToolTipRole, 5):
        return plain_tooltip(x)
"""
    plain = [is_plain(text) for text in tooltip_texts(ast.parse(code))]
    assert plain == [False, True, True, True, False, False, False, True]


def test_every_tooltip_of_popvision_py_is_plain_text():
    raw = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "plain_text.py":  # where plain_tooltip itself shows its text
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        raw += [
            f"{path.relative_to(PACKAGE)}:{text.lineno}: {ast.unparse(text)}"
            for text in tooltip_texts(tree)
            if not is_plain(text)
        ]
    assert raw == []
