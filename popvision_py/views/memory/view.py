"""The Memory report page: controls, one chart per report (two when comparing), details.

Selections and options are shared by the charts of a comparison: the view forwards every
control to all its view models and keeps their selections equal.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QWidget

from popvision_py.viewmodels.memory import Layout, MemoryViewModel
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.memory.chart import MemoryChart
from popvision_py.views.memory.controls import MemoryControls
from popvision_py.views.memory.details import MemoryDetails, VariablesPanel
from popvision_py.views.tile_map.widget import TileMapWidget
from profiler_core.analysis.memory import memory_table
from profiler_core.errors import ReportError


class MemoryView(ChartDetailsView):
    title = "Memory"
    rail_help = (
        "Memory per tile of every IPU, by category: does the program fit, and which tiles "
        "are hot. Select tiles to see their breakdown and the variables on them."
    )
    needs = ("target", "memory")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models: list[MemoryViewModel] = []
        self.charts: list[MemoryChart] = []
        self.control_bar = MemoryControls()
        self.controls_layout.addWidget(self.control_bar)
        self.breakdown = MemoryDetails()
        self.variables = VariablesPanel()
        self.details.addTab(self.breakdown, "Memory breakdown")
        self.details.setTabToolTip(0, "Bytes per category of the selected tiles.")
        self.details.addTab(self.variables, "Variables")
        self.details.setTabToolTip(1, "The variables with elements on the selected tiles.")
        self.details.currentChanged.connect(lambda _: self._update_variables())
        c = self.control_bar
        c.selection_typed.connect(self._on_selection_typed)
        c.include_gaps.toggled.connect(lambda on: self._each("set_include_gaps", on))
        c.show_max.toggled.connect(lambda on: self._each("set_show_max_memory", on))
        c.sort.toggled.connect(lambda on: self._each("set_sort_by_memory", on))
        c.layout_box.currentIndexChanged.connect(
            lambda _: self._each("set_layout", c.layout_choice())
        )
        c.reset_zoom.clicked.connect(self._reset_zoom)
        self.breakdown.sum_box.toggled.connect(lambda on: self._each("set_sum_selection", on))
        self._syncing = False
        self._add_tile_map()
        self.clear()

    @property
    def model(self) -> MemoryViewModel:
        return self.models[0]

    @property
    def chart(self) -> MemoryChart:
        return self.charts[0]

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self._drop_charts()
        try:
            tables = [memory_table(o.report) for o in (opened, other) if o is not None]
        except ReportError as error:
            return f"The memory of this report cannot be shown.\n\n{error}"
        names = [o.name for o in (opened, other) if o is not None]
        for table, name in zip(tables, names, strict=True):
            model = MemoryViewModel(table, name if other is not None else "")
            self._apply_controls(model)
            model.changed.connect(lambda what, m=model: self._on_model_changed(m, what))
            chart = MemoryChart(model)
            self.models.append(model)
            self.charts.append(chart)
            self.chart_layout.addWidget(chart, 1)
        if len(self.charts) == 2 and tables[0].num_tiles == tables[1].num_tiles:
            self.charts[1].plot.setXLink(self.charts[0].plot)
        self.control_bar.select_box.clear()
        self.control_bar.select_error.clear()
        self._show_details()
        self._show_tile_map()
        return ""

    def clear(self) -> None:
        self._drop_charts()
        super().clear()

    def _drop_charts(self) -> None:
        for chart in self.charts:
            chart.setParent(None)
            chart.deleteLater()
        self.charts, self.models = [], []

    def _apply_controls(self, model: MemoryViewModel) -> None:
        c = self.control_bar
        model.include_gaps = c.include_gaps.isChecked()
        model.show_max_memory = c.show_max.isChecked()
        model.sort_by_memory = c.sort.isChecked()
        model.layout = c.layout_choice()
        model.sum_selection = self.breakdown.sum_box.isChecked()

    def _each(self, method: str, value: object) -> None:
        for model in self.models:
            getattr(model, method)(value)

    def _reset_zoom(self) -> None:
        for chart in self.charts:
            chart.view_box.setXRange(-0.5, chart.model.num_positions - 0.5, padding=0)

    # -- selection ------------------------------------------------------------------------
    def select_text(self, text: str) -> bool:
        """What typing in Select tile and pressing Enter does."""
        ok = all([model.select_text(text) for model in self.models])
        self.control_bar.select_error.setText(
            "" if ok else next(m.selection_error for m in self.models if m.selection_error)
        )
        return ok

    def _on_selection_typed(self, text: str) -> None:
        self.select_text(text)

    def _on_model_changed(self, source: MemoryViewModel, what: str) -> None:
        if what == "selection" and not self._syncing:
            self._syncing = True
            try:
                for model in self.models:
                    if model is not source and not np.array_equal(
                        model.selection, source.selection
                    ):
                        limit = model.table.num_tiles
                        model.select_tiles(source.selection[source.selection < limit])
            finally:
                self._syncing = False
            if not source.selection_error:
                self.control_bar.select_box.setText(source.selection_text)
                self.control_bar.select_error.clear()
            if self.opened is not None and source is self.model:
                self.opened.selection.select_tiles(source.selection)
        self._show_details()

    def _show_details(self) -> None:
        if not self.models:
            return
        self.breakdown.show_models(self.models)
        self._update_variables()

    def _update_variables(self) -> None:
        if not self.models or self.details.currentWidget() is not self.variables:
            return
        if self.opened is None:
            return
        problem = self.opened.missing_text("graph")
        if problem:
            self.variables.show_problem(problem)
            return
        self.variables.show_tiles(self.opened.report, self.model.selection)

    # -- exports and help -----------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        return self.model.csv_rows() if self.models else None

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nSelect tile: type tiles and ranges such as 0,5,100-120 and "
            "press Enter. On the chart: wheel zooms the tile range, drag pans, click selects "
            "a tile, shift-click adds one, double-click shows all tiles.\n\nInclude gaps counts "
            "unused alignment and region bytes; Show max memory draws the tile limit; "
            f"layouts: {', '.join(layout.value for layout in Layout)}."
        )

    # -- the Tile map layout (views/tile_map) ---------------------------------------------
    def _add_tile_map(self) -> None:
        self.tile_map = TileMapWidget()
        self.tile_map.hide()
        self.chart_layout.addWidget(self.tile_map, 1)
        self.control_bar.layout_box.currentIndexChanged.connect(lambda _: self._show_tile_map())

    def _show_tile_map(self) -> None:
        """The Tile map layout in place of the charts (the first report's when comparing);
        tiles picked on it become the Memory report's selection, so the details follow."""
        chosen = self.control_bar.layout_choice() is Layout.TILE_MAP and self.opened is not None
        for chart in self.charts:
            chart.setVisible(not chosen)
        self.tile_map.setVisible(chosen)
        if not chosen or self.tile_map.opened is self.opened:
            return
        if self.tile_map.opened is not None:
            self.tile_map.opened.selection.changed.disconnect(self._tile_map_picked)
        problem = self.tile_map.show_report(self.opened)
        if problem:
            self.tile_map.problem.setText(problem)
            return
        self.opened.selection.changed.connect(self._tile_map_picked)

    def _tile_map_picked(self, what: str) -> None:
        if what == "tiles" and self.models and self.tile_map.isVisible() and self.opened:
            tiles = self.opened.selection.tiles
            if not np.array_equal(tiles, self.model.selection):
                self.model.select_tiles(tiles)
