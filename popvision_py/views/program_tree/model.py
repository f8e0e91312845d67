"""A lazy Qt tree model over ``ProgramLines``: an index's internal id is its line id, rows
and parents are array lookups, so a line costs nothing until the view asks for it."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from popvision_py.viewmodels.program_tree import COLUMN_HELP, COLUMNS, ProgramTreeViewModel
from popvision_py.views.plain_text import plain_tooltip

Index = QModelIndex | QPersistentModelIndex
LINE_ROLE = Qt.ItemDataRole.UserRole  # the line id
RAW_ROLE = Qt.ItemDataRole.UserRole + 1  # the unformatted value
HIGHLIGHT_ROLE = Qt.ItemDataRole.UserRole + 2  # True on steps of the selected operation
COLOR_ROLE = Qt.ItemDataRole.UserRole + 3  # the step-kind colour name

HIGHLIGHT_LIGHT = "#fff0b3"
HIGHLIGHT_DARK = "#5a4a14"


class ProgramTreeModel(QAbstractItemModel):
    """The lines of one section of the program tree (``model.section``)."""

    def __init__(self, model: ProgramTreeViewModel, dark: bool = False) -> None:
        super().__init__()
        self.model = model
        self.lines = model.lines
        self.highlight = QBrush(QColor(HIGHLIGHT_DARK if dark else HIGHLIGHT_LIGHT))
        self._colors: dict[str, QColor] = {}

    def set_section(self, section: int) -> None:
        self.beginResetModel()
        self.model.section = section
        self.endResetModel()

    def set_dark(self, dark: bool) -> None:
        """Highlight colour for the palette; the view repaints to show it (data is computed
        per paint, so a viewport update is all a highlight change needs)."""
        self.highlight = QBrush(QColor(HIGHLIGHT_DARK if dark else HIGHLIGHT_LIGHT))

    # -- structure --------------------------------------------------------------------------
    def _top(self) -> np.ndarray:
        return self.lines.sections[self.model.section]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return int(self._top().size)
        if parent.column() != 0:
            return 0
        return self.lines.child_count(int(parent.internalId()))

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return len(COLUMNS)

    def hasChildren(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return self.rowCount(parent) > 0

    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if row < 0 or column < 0 or column >= len(COLUMNS):
            return QModelIndex()
        if not parent.isValid():
            top = self._top()
            return self.createIndex(row, column, int(top[row])) if row < top.size else QModelIndex()
        line = int(parent.internalId())
        if row >= self.lines.child_count(line):
            return QModelIndex()
        return self.createIndex(row, column, self.lines.child(line, row))

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        up = int(self.lines.parent[int(index.internalId())])
        if up < 0:
            return QModelIndex()
        return self.createIndex(int(self.lines.row[up]), 0, up)

    def index_of_line(self, line: int, column: int = 0) -> QModelIndex:
        """The index of ``line`` (invalid when it is not in the shown section)."""
        if line < 0 or self.lines.section_of[line] != self.model.section:
            return QModelIndex()
        return self.createIndex(int(self.lines.row[line]), column, line)

    # -- content ----------------------------------------------------------------------------
    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        line, column = int(index.internalId()), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.model.text(line, column)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            return self._color(self.model.color(line))
        if role == Qt.ItemDataRole.BackgroundRole:
            return self.highlight if self.model.is_highlighted(line) else None
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(self.model.tooltip(line))
        if role == LINE_ROLE:
            return line
        if role == RAW_ROLE:
            return self.model.value(line, column)
        if role == HIGHLIGHT_ROLE:
            return self.model.is_highlighted(line)
        if role == COLOR_ROLE:
            return self.model.color(line)
        return None

    def _color(self, name: str) -> QColor:
        if name not in self._colors:
            self._colors[name] = QColor(name)
        return self._colors[name]

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if orientation != Qt.Orientation.Horizontal or section >= len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(COLUMN_HELP[section])
        return None
