"""The Memory report page: controls, one chart per report (two when comparing), details.

Selections and options are shared by the charts of a comparison: the view forwards every
control to all its view models and keeps their selections equal.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.compare_tables import CompareSpec, memory_specs
from popvision_py.viewmodels.memory import Layout, MemoryViewModel
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.memory.chart import MemoryChart
from popvision_py.views.memory.controls import MemoryControls
from popvision_py.views.memory.details import MemoryDetails, VariablesPanel
from popvision_py.views.memory.table_panel import ComputeSetsPanel, ExchangesPanel, VerticesPanel
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
        self.charts_box: QWidget | None = None  # the charts (and a compare's legend)
        self.control_bar = MemoryControls()
        self.controls_layout.addWidget(self.control_bar)
        self.breakdown = MemoryDetails()
        self.variables = VariablesPanel()
        self.compute_sets = ComputeSetsPanel()
        self.vertices = VerticesPanel()
        self.exchanges = ExchangesPanel()
        # (panel, tab title, help, report sections it needs)
        self.panels: list[tuple[QWidget, str, str, tuple[str, ...]]] = [
            (self.breakdown, "Memory breakdown", "Bytes per category of the selected tiles.", ()),
            (self.variables, "Variables", "The variables with elements on the selected tiles.",
             ("graph",)),
            (self.compute_sets, "Compute Sets", "Compute sets with vertices on the selected "
             "tiles: vertices, codelets, vertex state, cycles.", ("graph",)),
            (self.vertices, "Vertices", "Vertices per codelet on the selected tiles, and the "
             "code each codelet costs there.", ("graph",)),
            (self.exchanges, "Exchanges", "Exchange code and buffers of the selected tiles, and "
             "the bytes each exchange step moves in and out of them.", ("programs", "graph")),
        ]  # fmt: skip
        for index, (panel, title, help_text, _) in enumerate(self.panels):
            self.details.addTab(panel, title)
            self.details.setTabToolTip(index, help_text)
        self.details.currentChanged.connect(lambda _: self._update_tab())
        self._kept: dict[str, tuple[float, float]] = {}  # x range shown, by report folder
        self._shown_folder = ""
        self._following: OpenedReport | None = None
        c = self.control_bar
        c.selection_typed.connect(self._on_selection_typed)
        c.include_gaps.toggled.connect(lambda on: self._each("set_include_gaps", on))
        c.show_max.toggled.connect(lambda on: self._each("set_show_max_memory", on))
        c.sort.toggled.connect(lambda on: self._each("set_sort_by_memory", on))
        c.layout_box.currentIndexChanged.connect(
            lambda _: self._each("set_layout", c.layout_choice())
        )
        c.units_box.currentIndexChanged.connect(lambda _: self._each("set_units", c.units()))
        c.heat_scale_box.currentIndexChanged.connect(
            lambda _: self._each("set_heat_scale", c.heat_scale())
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

    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return memory_specs(pair)

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self._drop_charts()
        try:
            tables = [memory_table(o.report) for o in (opened, other) if o is not None]
        except ReportError as error:
            return f"The memory of this report cannot be shown.\n\n{error}"
        titles = self.side_titles(opened, other)
        for table, title in zip(tables, titles, strict=True):
            model = MemoryViewModel(table, title)
            self._apply_controls(model)
            model.changed.connect(lambda what, m=model: self._on_model_changed(m, what))
            chart = MemoryChart(model)
            self.models.append(model)
            self.charts.append(chart)
        self._place_charts()
        if len(self.charts) == 2 and tables[0].num_tiles == tables[1].num_tiles:
            self.charts[1].plot.setXLink(self.charts[0].plot)
        self._share_scales()
        self.control_bar.select_box.clear()
        self.control_bar.select_error.clear()
        for panel, *_ in self.panels[1:]:
            panel.forget()  # type: ignore[attr-defined]
        opened.selection.changed.connect(self._on_selection_changed)
        self._following = opened
        self._shown_folder = str(opened.folder)
        self._restore_zoom()
        if opened.selection.tiles.size:  # kept across Reload (or picked in another view)
            self._on_selection_changed("tiles")
        self._show_details()
        self._show_tile_map()
        return ""

    def _place_charts(self) -> None:
        """One chart above the details; two (compare) one above the other with one
        category legend beside both, so A and B get one height and one width (their tiles
        align)."""
        self.charts_box = QWidget()
        row = QHBoxLayout(self.charts_box)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        for chart in self.charts:
            column.addWidget(chart, 1)
        row.addLayout(column, 1)
        if len(self.charts) == 2:
            for chart in self.charts:
                chart.plot.setMinimumHeight(120)
            row.addWidget(self.charts[0].take_legend(), 0, Qt.AlignmentFlag.AlignTop)
            self.charts[1].take_legend().hide()  # B draws the same categories
        self.chart_layout.addWidget(self.charts_box, 1)

    def clear(self) -> None:
        self._drop_charts()
        super().clear()

    def _drop_charts(self) -> None:
        self._keep_zoom()
        if self._following is not None:  # the report shown before: stop following it
            self._following.selection.changed.disconnect(self._on_selection_changed)
            self._following = None
        for chart in self.charts:
            chart.setParent(None)
            chart.deleteLater()
        if self.charts_box is not None:
            self.charts_box.setParent(None)
            self.charts_box.deleteLater()
            self.charts_box = None
        self.charts, self.models = [], []

    def _keep_zoom(self) -> None:
        if self.charts and self._shown_folder:
            x0, x1 = self.chart.view_box.viewRange()[0]
            self._kept[self._shown_folder] = (x0, x1)

    def _restore_zoom(self) -> None:
        kept = self._kept.get(self._shown_folder)
        if kept is not None and self.charts:
            self.chart.view_box.setXRange(*kept, padding=0)

    def _share_scales(self) -> None:
        """One y axis and one heat-map colour scale for both sides of a comparison."""
        if len(self.models) > 1:
            self.models[0].share_scales(self.models)
            for chart in self.charts:
                chart.refresh()

    def _apply_controls(self, model: MemoryViewModel) -> None:
        c = self.control_bar
        model.include_gaps = c.include_gaps.isChecked()
        model.show_max_memory = c.show_max.isChecked()
        model.sort_by_memory = c.sort.isChecked()
        model.layout = c.layout_choice()
        model.units = c.units()
        model.heat_scale = c.heat_scale()
        model.sum_selection = self.breakdown.sum_box.isChecked()

    def _each(self, method: str, value: object) -> None:
        for model in self.models:
            getattr(model, method)(value)
        self._share_scales()
        if method == "set_units":
            self._show_details()

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

    def _on_selection_changed(self, what: str) -> None:
        """Follow tiles picked elsewhere (another view, or carried over by Reload)."""
        if what != "tiles" or not self.models or self.opened is None:
            return
        tiles = self.opened.selection.tiles
        tiles = tiles[tiles < self.model.table.num_tiles]
        if not np.array_equal(tiles, self.model.selection):
            self.model.select_tiles(tiles)
        if self.other is not None and not self.compare_problem:
            self._show_compare(self.opened, self.other)  # category deltas of the selection

    def _show_details(self) -> None:
        if not self.models:
            return
        self.breakdown.show_models(self.models)
        self._update_tab()

    def _update_tab(self) -> None:
        """Fill the current details tab (only that one: the others fill when opened)."""
        current = self.details.currentWidget()
        if not self.models or self.opened is None or current is self.breakdown:
            return
        if self.showing_compare_tab():
            return
        panel, needs = next((p, n) for p, _, _, n in self.panels if p is current)
        problem = self.opened.missing_text(*needs)
        if problem:
            panel.show_problem(problem)  # type: ignore[attr-defined]
            return
        owner = self.opened.name if self.comparing else ""
        panel.show_tiles(self.opened.report, self.model.selection, self.model.units, owner)  # type: ignore[attr-defined]

    # -- tabs, for tests and benchmarks ---------------------------------------------------
    def tab_names(self) -> list[str]:
        return [title for _, title, _, _ in self.panels[1:]]

    def show_tab(self, title: str) -> None:
        self.details.setCurrentWidget(next(p for p, t, _, _ in self.panels if t == title))

    def details_rows(self, title: str) -> int:
        panel = next(p for p, t, _, _ in self.panels if t == title)
        return panel.model.rowCount()  # type: ignore[attr-defined]

    # -- exports and help -----------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        return self.model.csv_rows() if self.models else None

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nSelect tile: type tiles and ranges such as 0,5,100-120 and "
            "press Enter. On the chart: wheel zooms the tile range, drag pans, click selects "
            "a tile, shift-click adds one, double-click shows all tiles.\n\nInclude gaps counts "
            "unused alignment and region bytes; Show max memory stretches the y axis to the "
            "tile limit (off, it fits the data and a label says when the limit is above); "
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
        if self.charts_box is not None:
            self.charts_box.setVisible(not chosen)
        self.tile_map.setVisible(chosen)
        if chosen:  # the map is laid out after this: then give it the chart's height
            QTimer.singleShot(0, self.give_chart_room)
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
