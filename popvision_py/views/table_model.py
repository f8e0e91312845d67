"""A Qt table model over a ``ColumnTable``: rows are looked up by index, never copied."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from popvision_py.viewmodels.table import ColumnTable
from popvision_py.views.plain_text import plain_tooltip

Index = QModelIndex | QPersistentModelIndex
RAW_ROLE = Qt.ItemDataRole.UserRole  # the unformatted value, for tests and copy


class ColumnTableModel(QAbstractTableModel):
    """Shows a ColumnTable; sorting and searching are done by the table's index arrays."""

    def __init__(self, table: ColumnTable | None = None, wrap_headers: bool = False) -> None:
        super().__init__()
        self.table = table or ColumnTable([])
        self.wrap_headers = wrap_headers  # long headers on two lines: narrower columns

    def set_table(self, table: ColumnTable) -> None:
        self.beginResetModel()
        self.table = table
        self.endResetModel()

    def refresh(self) -> None:
        """Every cell again: the table's values changed in place."""
        if len(self.table) and self.table.columns:
            last = self.index(len(self.table) - 1, len(self.table.columns) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    def search(self, text: str) -> None:
        self.beginResetModel()
        self.table.search(text)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        spec = self.table.columns[column]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.table.display(row, column)
        if role == RAW_ROLE:
            value = self.table.raw(row, column)
            return value.item() if hasattr(value, "item") else value
        if role == Qt.ItemDataRole.TextAlignmentRole and spec.numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.DecorationRole and spec.colors is not None:
            return QColor(spec.colors[int(self.table.rows[row])])
        if role == Qt.ItemDataRole.BackgroundRole and self.table.tints is not None:
            tint = self.table.tint(row)
            if tint is None:
                return None
            color = QColor(tint)
            color.setAlpha(48)  # a wash: the text stays readable in light and dark
            return color
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.table.display(row, column)
            return plain_tooltip(f"{spec.header}: {text}\n{spec.help}" if spec.help else text)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation != Qt.Orientation.Horizontal or section >= len(self.table.columns):
            return None
        spec = self.table.columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return two_lines(spec.header) if self.wrap_headers else spec.header
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(spec.help or spec.header)
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.layoutAboutToBeChanged.emit()
        self.table.sort(column, descending=order == Qt.SortOrder.DescendingOrder)
        self.layoutChanged.emit()


WRAP_AFTER = 16
"""Headers longer than this many characters go on two lines when a model wraps them."""


def two_lines(header: str) -> str:
    """``header`` broken before its bracket, else at the space nearest its middle."""
    if len(header) <= WRAP_AFTER or " " not in header:
        return header
    if " (" in header:
        head, tail = header.split(" (", 1)
        return f"{head}\n({tail}"
    spaces = [i for i, c in enumerate(header) if c == " "]
    cut = min(spaces, key=lambda i: abs(i - len(header) / 2))
    return f"{header[:cut]}\n{header[cut + 1 :]}"


def make_table_view(
    model: ColumnTableModel, sortable: bool, view_class: type[QTableView] = QTableView
) -> QTableView:
    """A table view of whole rows over ``model``; sorting by header clicks when ``sortable``."""
    view = view_class()
    view.setModel(model)
    view.setSortingEnabled(sortable)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    view.horizontalHeader().setStretchLastSection(True)
    return view


SAMPLE_ROWS = 40  # rows measured to size columns: the first ones, which are what is seen


DECORATION = Qt.ItemDataRole.DecorationRole
SWATCH_PX = 26  # a decoration swatch and the gap after it


def size_columns_from_sample(view: object, sample: int = SAMPLE_ROWS, widest: int = 420) -> None:
    """Size every column but the last (it stretches) to its header and the first ``sample``
    rows. ``resizeColumnsToContents`` asks the model for every cell: over 400,000 rows that
    is over a second on the GUI thread, while the rows on screen are among the first."""
    model, header = view.model(), view.horizontalHeader()  # type: ignore[attr-defined]
    metrics = view.fontMetrics()  # type: ignore[attr-defined]
    header_metrics = header.fontMetrics()
    rows = min(model.rowCount(), sample)
    for column in range(model.columnCount() - 1):
        title = str(model.headerData(column, Qt.Orientation.Horizontal) or "")
        width = header_metrics.horizontalAdvance(title) + 28  # room for the sort arrow
        decorated = rows > 0 and model.data(model.index(0, column), DECORATION) is not None
        pad = 16 + (SWATCH_PX if decorated else 0)  # a colour swatch before the text
        for row in range(rows):
            text = model.data(model.index(row, column))
            width = max(width, metrics.horizontalAdvance(str(text or "")) + pad)
        view.setColumnWidth(column, min(width, widest))  # type: ignore[attr-defined]
