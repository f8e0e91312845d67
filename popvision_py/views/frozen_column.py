"""A table's first column kept in view while its other columns scroll sideways (Qt's frozen
column): a second view of the same model and selection, showing only that column, laid over
the table's left edge. A wide table (Operations: cycle classes, phases, code and memory)
keeps saying which row is which."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView


class FrozenColumnTable(QTableView):
    """A table that keeps its first column in view (``FrozenFirstColumn``, made by
    ``freeze_first_column``): it places the column whenever its own geometry changes. (A
    Python event filter on the table instead can be called while Qt deletes the window.)"""

    frozen: FrozenFirstColumn | None = None

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.frozen is not None:
            self.frozen.place()

    def updateGeometries(self) -> None:
        super().updateGeometries()  # the header's and scroll bars': the viewport's size
        if self.frozen is not None:
            self.frozen.place()


def freeze_first_column(table: FrozenColumnTable) -> FrozenFirstColumn:
    table.frozen = FrozenFirstColumn(table)
    return table.frozen


class FrozenFirstColumn(QTableView):
    """Shows ``table``'s column 0 over it; a click on its header sorts the table."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        self.setModel(table.model())
        self.setSelectionModel(table.selectionModel())
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(table.selectionMode())
        self.setAlternatingRowColors(table.alternatingRowColors())
        self.verticalHeader().hide()
        self.verticalHeader().setDefaultSectionSize(table.verticalHeader().defaultSectionSize())
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(table.verticalScrollMode())
        self.setFrameShape(QTableView.Shape.NoFrame)
        table.viewport().stackUnder(self)
        table.verticalScrollBar().valueChanged.connect(self.verticalScrollBar().setValue)
        self.verticalScrollBar().valueChanged.connect(table.verticalScrollBar().setValue)
        table.horizontalHeader().sectionResized.connect(self._on_resized)
        table.horizontalHeader().sortIndicatorChanged.connect(self._on_sorted)
        self.horizontalHeader().sectionClicked.connect(self._on_header_clicked)
        model = table.model()
        model.modelReset.connect(self.refresh)
        model.layoutChanged.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Only column 0 shows, as wide and as tall (header included) as the table's."""
        if self.model() is None:
            return
        for column in range(1, self.model().columnCount()):
            self.setColumnHidden(column, True)
        self.setColumnWidth(0, self.table.columnWidth(0))
        self.place()

    def _on_resized(self, column: int, _old: int, new: int) -> None:
        if column == 0:
            self.setColumnWidth(0, new)
            self.place()

    def _on_sorted(self, column: int, order: Qt.SortOrder) -> None:
        self.horizontalHeader().setSortIndicatorShown(column == 0)
        self.horizontalHeader().setSortIndicator(column, order)

    def _on_header_clicked(self, column: int) -> None:
        header = self.table.horizontalHeader()
        descending = header.sortIndicatorSection() == column and (
            header.sortIndicatorOrder() == Qt.SortOrder.AscendingOrder
        )
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        self.table.sortByColumn(column, order)

    def place(self) -> None:
        """Over the table's left edge, as tall as its header and viewport."""
        table = self.table
        model = table.model()
        if model is None:  # the table is between models, or being taken down
            self.hide()
            return
        self.horizontalHeader().setFixedHeight(table.horizontalHeader().height())
        self.setVisible(not table.isColumnHidden(0) and model.columnCount() > 0)
        frame = table.frameWidth()
        height = table.viewport().height() + table.horizontalHeader().height()
        self.setGeometry(frame, frame, table.columnWidth(0), height)
