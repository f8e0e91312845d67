"""Tooltips are plain text, as labels are (issue 30): every tooltip of ``popvision_py`` is
``plain_tooltip(...)``, another widget's ``toolTip()`` or a literal without markup."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "popvision_py"


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
