"""Details tabs of the Memory report filled for the selected tiles: Compute Sets, Vertices
and Exchanges (and Variables, in ``details.py``), each a ``TablePanel``."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from popvision_py.viewmodels.table import ColumnTable
from popvision_py.viewmodels.tile_contents import (
    compute_sets_heading,
    compute_sets_table,
    exchanges_heading,
    exchanges_table,
    vertices_heading,
    vertices_table,
)
from popvision_py.views.table_panel import TablePanel
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.tile_contents import (
    compute_sets_on_tiles,
    exchanges_on_tiles,
    vertices_on_tiles,
)
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import Report


class TilesPanel(TablePanel):
    """A details tab filled for the selected tiles. Subclasses set the texts and
    ``make_table(report, tiles, units)`` -> (table, heading)."""

    noun = "rows"
    search_hint = "Search"
    empty_text = "Select tiles to see what is on them."

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(self.noun, self.search_hint, parent)
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
            self.show_message(self.empty_text)
            return
        table, heading = self.make_table(report, tiles, units)
        if owner:
            heading = f"{owner} — {heading}" if heading else owner
        self.show_table(table, heading)

    def show_problem(self, text: str) -> None:
        self._shown = None
        self.show_message(text)

    def forget(self) -> None:
        """Fill again at the next ``show_tiles`` (a new report, or new options)."""
        self._shown = None


class ComputeSetsPanel(TilesPanel):
    """Compute sets with vertices on the selected tiles."""

    noun = "compute sets"
    search_hint = "Search compute sets"
    empty_text = "Select tiles to see the compute sets with vertices on them."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = compute_sets_on_tiles(report, tiles)
        state = int(memory_table(report).by_category[MemoryCategory.VERTEX_STATE, tiles].sum())
        return compute_sets_table(found, units), compute_sets_heading(found, state, units)


class VerticesPanel(TilesPanel):
    """Vertices per codelet on the selected tiles."""

    noun = "codelets"
    search_hint = "Search codelets"
    empty_text = "Select tiles to see their vertices per codelet."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = vertices_on_tiles(report, tiles)
        return vertices_table(found, units), vertices_heading(found, units)


class ExchangesPanel(TilesPanel):
    """Exchange code and buffers of the selected tiles, and the exchange steps they are in."""

    noun = "exchange steps"
    search_hint = "Search exchange steps"
    empty_text = "Select tiles to see their exchange code, buffers and exchange steps."

    def make_table(self, report: Report, tiles: np.ndarray, units: str) -> tuple[ColumnTable, str]:
        found = exchanges_on_tiles(report, tiles)
        return exchanges_table(found, units), exchanges_heading(found, units)
