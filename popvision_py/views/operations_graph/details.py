"""The Operations graph's details: the node picked (what it is, where it was traced, its
figures and the operation it selects) and the layers, each with a box to fold it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from popvision_py.viewmodels.graph_picture import layer_rows, node_details
from popvision_py.viewmodels.operations_graph import OperationsGraphModel
from popvision_py.views.plain_text import plain_tooltip


class NodeDetails(QTableWidget):
    """Two columns: what, and its value."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 2, parent)
        self.setHorizontalHeaderLabels(["", "Value"])
        self.verticalHeader().hide()
        self.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.horizontalHeader().setStretchLastSection(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.show_none()

    def show_none(self) -> None:
        self.show_rows([("Node", "Click a node of the graph to see it here.")])

    def show_node(self, model: OperationsGraphModel, shown: int) -> None:
        self.show_rows(node_details(model, shown))

    def show_rows(self, rows: list[tuple[str, str]]) -> None:
        self.setRowCount(len(rows))
        for r, (name, value) in enumerate(rows):
            self.setItem(r, 0, QTableWidgetItem(name))
            item = QTableWidgetItem(value)
            item.setToolTip(plain_tooltip(value))
            self.setItem(r, 1, item)

    def value_of(self, name: str) -> str:
        for r in range(self.rowCount()):
            if self.item(r, 0).text() == name:
                return self.item(r, 1).text()
        return ""


class LayerTree(QTreeWidget):
    """Every layer (name scope) as a tree; a ticked box folds it into one node.
    ``fold_changed(scope, folded)`` when the user ticks or clears one."""

    fold_changed = Signal(int, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHeaderLabels(["Layer (ticked: folded into one node)", "Ops"])
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.setUniformRowHeights(True)
        self.items: list[QTreeWidgetItem] = []
        self._filling = False
        self.itemChanged.connect(self._on_changed)

    def show_layers(self, model: OperationsGraphModel) -> None:
        self._filling = True
        try:
            self.clear()
            self.items = []
            for scope, parent, name, count in layer_rows(model):
                above = self.items[parent] if parent >= 0 else self
                item = QTreeWidgetItem(above, [name, f"{count:,}"])
                item.setData(0, Qt.ItemDataRole.UserRole, scope)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                self.items.append(item)
            self.show_folded(model)
            self.expandToDepth(0)
        finally:
            self._filling = False

    def show_folded(self, model: OperationsGraphModel) -> None:
        filling, self._filling = self._filling, True
        try:
            for scope, item in enumerate(self.items):
                folded = bool(model.collapsed[scope])
                item.setCheckState(0, Qt.CheckState.Checked if folded else Qt.CheckState.Unchecked)
        finally:
            self._filling = filling

    def _on_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or column != 0:
            return
        scope = int(item.data(0, Qt.ItemDataRole.UserRole))
        self.fold_changed.emit(scope, item.checkState(0) == Qt.CheckState.Checked)
