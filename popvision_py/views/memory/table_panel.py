"""A details tab of the Memory report: a heading, a search box and a sortable table over
numpy columns, filled for the selected tiles (or a message when there is nothing to show)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.format import format_count
from popvision_py.viewmodels.table import ColumnTable
from popvision_py.viewmodels.tile_contents import (
    compute_sets_heading,
    compute_sets_table,
    exchanges_heading,
    exchanges_table,
    vertices_heading,
    vertices_table,
)
from popvision_py.views.base import message_label
from popvision_py.views.table_model import (
    ColumnTableModel,
    make_table_view,
    size_columns_from_sample,
)
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.tile_contents import (
    compute_sets_on_tiles,
    exchanges_on_tiles,
    vertices_on_tiles,
)
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import Report


class TablePanel(QWidget):
    """Subclasses set the texts and ``make_table(report, tiles, units)`` -> (table, heading)."""

    noun = "rows"
    search_hint = "Search"
    empty_text = "Select tiles to see what is on them."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.hide()
        self.search = QLineEdit()
        self.search.setPlaceholderText(self.search_hint)
        self.search.setToolTip(f"Show only the {self.noun} whose name contains this.")
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
        layout.addWidget(self.heading)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)
        self._shown: tuple | None = None

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        raise NotImplementedError

    def show_tiles(
        self, report: Report, tiles: np.ndarray, units: str = "KiB", owner: str = ""
    ) -> None:
        """Fill for ``tiles`` of ``report``; ``owner`` names the report when comparing (the
        tabs show the first report's)."""
        key = (id(report), tiles.tobytes(), units, owner)
        if self._shown == key:
            return
        self._shown = key
        if tiles.size == 0:
            self.heading.hide()
            self.message.setText(self.empty_text)
            self.pages.setCurrentWidget(self.message)
            self.count.setText("")
            return
        table, heading = self.make_table(report, tiles, units)
        if owner:
            heading = f"<b>{owner}</b> — {heading}" if heading else f"<b>{owner}</b>"
        self.heading.setText(heading)
        self.heading.setVisible(bool(heading))
        table.search(self.search.text())
        self.model.set_table(table)
        self.table.horizontalHeader().setSortIndicatorShown(False)
        self.pages.setCurrentWidget(self.table)
        self._update_count()
        size_columns_from_sample(self.table)  # never every row: 400,000 rows take seconds

    def show_problem(self, text: str) -> None:
        self._shown = None
        self.heading.hide()
        self.message.setText(text)
        self.pages.setCurrentWidget(self.message)

    def forget(self) -> None:
        """Fill again at the next ``show_tiles`` (a new report, or new options)."""
        self._shown = None

    def _on_search(self, text: str) -> None:
        self.model.search(text)
        self._update_count()

    def _update_count(self) -> None:
        shown, size = len(self.model.table), self.model.table.size
        self.count.setText(f"{format_count(shown)} of {format_count(size)} {self.noun}")


class ComputeSetsPanel(TablePanel):
    """Compute sets with vertices on the selected tiles."""

    noun = "compute sets"
    search_hint = "Search compute sets"
    empty_text = "Select tiles to see the compute sets with vertices on them."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = compute_sets_on_tiles(report, tiles)
        state = int(memory_table(report).by_category[MemoryCategory.VERTEX_STATE, tiles].sum())
        return compute_sets_table(found, units), compute_sets_heading(found, state, units)


class VerticesPanel(TablePanel):
    """Vertices per codelet on the selected tiles."""

    noun = "codelets"
    search_hint = "Search codelets"
    empty_text = "Select tiles to see their vertices per codelet."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = vertices_on_tiles(report, tiles)
        return vertices_table(found, units), vertices_heading(found, units)


class ExchangesPanel(TablePanel):
    """Exchange code and buffers of the selected tiles, and the exchange steps they are in."""

    noun = "exchange steps"
    search_hint = "Search exchange steps"
    empty_text = "Select tiles to see their exchange code, buffers and exchange steps."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = exchanges_on_tiles(report, tiles)
        return exchanges_table(found, units), exchanges_heading(found, units)
