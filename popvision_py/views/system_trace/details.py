"""The System Trace's details tabs: the selected event's fields, and the call tree (time by
label path) of the selection range or of the whole trace."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.trace_format import format_duration
from profiler_core.analysis.call_tree import CallTree

MAX_TREE_NODES = 20_000  # a call tree has a node per label path; beyond this it is cut


class EventDetails(QTableWidget):
    """Field / value rows of the selected event; a row linked to another event (a flow's
    other end) emits ``link_clicked(event)`` when clicked."""

    link_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 2, parent)
        self.setHorizontalHeaderLabels(["Field", "Value"])
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.links: dict[int, int] = {}  # row -> event it leads to
        self.cellClicked.connect(self._on_cell_clicked)
        self.show_rows([("Selected event", "none: click a span or an instant")])

    def show_rows(self, rows: list[tuple[str, str]], links: dict[int, int] | None = None) -> None:
        self.links = dict(links or {})
        self.setRowCount(len(rows))
        for r, (field, value) in enumerate(rows):
            self.setItem(r, 0, QTableWidgetItem(field))
            item = QTableWidgetItem(value)
            if r in self.links:
                item.setForeground(QBrush(QColor("#1a73e8")))
                item.setToolTip("Click to select this end of the flow and scroll to it")
            self.setItem(r, 1, item)
        self.resizeColumnToContents(0)

    def _on_cell_clicked(self, row: int, _column: int) -> None:
        if row in self.links:
            self.link_clicked.emit(self.links[row])

    def value(self, field: str) -> str:
        for r in range(self.rowCount()):
            if self.item(r, 0).text() == field:
                return self.item(r, 1).text()
        raise KeyError(field)


class CallTreePanel(QWidget):
    """A tree of label paths with total, self time and count, longest first."""

    COLUMNS = ("Label", "Total", "Self", "Count")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scope = QLabel()
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(self.COLUMNS))
        self.tree.setHeaderLabels(list(self.COLUMNS))
        self.tree.setSortingEnabled(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.scope)
        layout.addWidget(self.tree, 1)
        self.call_tree: CallTree | None = None

    def show_tree(self, tree: CallTree, labels: tuple[str, ...], scope: str) -> None:
        self.call_tree = tree
        self.tree.clear()
        n = min(len(tree), MAX_TREE_NODES)
        cut = f" (first {n:,} of {len(tree):,} paths)" if n < len(tree) else ""
        self.scope.setText(f"{scope}{cut}")
        items: list[QTreeWidgetItem] = []
        # Nodes come parents first; children are added longest first under each parent.
        order = sorted(range(n), key=lambda i: (int(tree.depth[i]), -int(tree.total[i])))
        by_node: dict[int, QTreeWidgetItem] = {}
        for i in order:
            item = QTreeWidgetItem(
                [
                    labels[int(tree.label[i])],
                    format_duration(int(tree.total[i])),
                    format_duration(int(tree.self_ns[i])),
                    f"{int(tree.count[i]):,}",
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, i)
            for column in (1, 2, 3):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
            parent = by_node.get(int(tree.parent[i]))
            if parent is None:
                items.append(item)
            else:
                parent.addChild(item)
            by_node[i] = item
        self.tree.addTopLevelItems(items)
        self.tree.expandToDepth(1)
        self.tree.resizeColumnToContents(1)
        self.tree.resizeColumnToContents(2)
