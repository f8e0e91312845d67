"""The Memory report's details: the category breakdown of the selected tiles, and the
variables on them (a searchable, sortable table over numpy columns)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.colors import CATEGORY_COLORS, CATEGORY_HELP
from popvision_py.viewmodels.format import format_bytes, format_count
from popvision_py.viewmodels.memory import MemoryViewModel
from popvision_py.viewmodels.table import Column, ColumnTable
from popvision_py.viewmodels.variables import variables_table
from popvision_py.views.base import message_label
from popvision_py.views.table_model import ColumnTableModel, size_columns_from_sample
from profiler_core.analysis.memory import variables_on_tiles
from profiler_core.report import Report


def make_table_view(model: ColumnTableModel, sortable: bool) -> QTableView:
    view = QTableView()
    view.setModel(model)
    view.setSortingEnabled(sortable)
    view.setAlternatingRowColors(True)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(22)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    view.horizontalHeader().setStretchLastSection(True)
    return view


def breakdown_table(models: list[MemoryViewModel]) -> ColumnTable:
    """Categories as rows, plus Total; a column per selected tile, or per report when comparing."""
    first = models[0]
    categories = first.categories
    labels = [c.label for c in categories] + ["Total"]
    colors = [CATEGORY_COLORS[c] for c in categories] + ["#00000000"]
    helps = "; ".join(f"{c.label}: {CATEGORY_HELP[c]}" for c in categories[:2])
    columns = [Column("Category", labels, f"Memory category ({helps} ...)", colors=colors)]
    if len(models) == 1:
        breakdown = first.breakdown()
        for header, values in zip(breakdown.headers, breakdown.values.T, strict=True):
            full = np.append(values, values.sum())
            columns.append(Column(f"{header} (bytes)", full, f"Bytes of {header}", "exact_bytes"))
        return ColumnTable(columns)
    sums = []
    for m in models:
        values = m.table.breakdown(
            m.selection if m.selection.size else np.arange(m.table.num_tiles), m.include_gaps
        )
        sums.append(np.append(values, values.sum()))
        columns.append(Column(f"{m.name} (bytes)", sums[-1], f"Bytes in {m.name}", "exact_bytes"))
    difference = sums[1] - sums[0]
    columns.append(Column("Difference (bytes)", difference, "Second minus first", "exact_bytes"))
    return ColumnTable(columns)


class MemoryDetails(QWidget):
    """The breakdown tab's content (header line, sum switch, table)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.sum_box = QCheckBox("Sum selected tiles")
        self.sum_box.setToolTip(
            "One column with the sum of the selected tiles instead of one column per tile "
            f"(more than {MemoryViewModel.MAX_TILE_COLUMNS} tiles are always summed)."
        )
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=False)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        top.addWidget(self.sum_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

    def show_models(self, models: list[MemoryViewModel]) -> None:
        first = models[0]
        self.model.set_table(breakdown_table(models))
        self.table.resizeColumnToContents(0)
        selection = first.selection
        gaps = "including gaps" if first.include_gaps else "excluding gaps"
        if selection.size == 0:
            self.heading.setText(
                f"No tile selected: all tiles, {gaps}. Type tiles in Select tile above, or "
                "click the chart (shift-click adds)."
            )
            return
        total = int(first.table.breakdown(selection, first.include_gaps).sum())
        self.heading.setText(
            f"{format_count(selection.size)} tile(s) selected: {first.selection_text} — "
            f"total {format_bytes(total, exact=True)}, {gaps}"
        )


class VariablesPanel(QWidget):
    """Variables on the selected tiles: a search box over a sortable table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search variables, debug contexts, layers, ops")
        self.search.setToolTip("Show only variables whose name or debug context contains this.")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.count = QLabel()
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=True)
        self.message = message_label()
        self.pages = QStackedWidget()
        self.pages.addWidget(self.table)
        self.pages.addWidget(self.message)
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)
        self._tiles: np.ndarray | None = None

    def show_tiles(self, report: Report, tiles: np.ndarray) -> None:
        if self._tiles is not None and np.array_equal(self._tiles, tiles):
            return
        self._tiles = tiles.copy()
        if tiles.size == 0:
            self.message.setText("Select tiles to see the variables on them.")
            self.pages.setCurrentWidget(self.message)
            self.count.setText("")
            return
        found = variables_on_tiles(report, tiles, report.debug_or_none())
        table = variables_table(found)
        table.search(self.search.text())
        self.model.set_table(table)
        self.table.horizontalHeader().setSortIndicatorShown(False)
        self.pages.setCurrentWidget(self.table)
        self._update_count()
        size_columns_from_sample(self.table)

    def show_problem(self, text: str) -> None:
        self._tiles = None
        self.message.setText(text)
        self.pages.setCurrentWidget(self.message)

    def _on_search(self, text: str) -> None:
        self.model.search(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, size = len(self.model.table), self.model.table.size
        self.count.setText(f"{format_count(shown)} of {format_count(size)} variables")
