"""``TileMapWidget``: the Tile Map as one reusable widget -- a metric box (total memory, a
category, a variable's bytes, cycles of the selected step), the plan of every IPU side by
side, and a colour scale with units. Hover a tile for its numbers; click or drag to select
tiles (shift adds), written to the report's shared selection, which it also follows.

The Memory report shows it as its "Tile map" layout; the Execution Trace's step detail can
embed it with ``TileMapWidget(metrics=[STEP_CYCLES, TOTAL])`` and ``show_report(opened)``:
it follows ``opened.selection``'s current step by itself.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.tile_map import TileMapModel
from popvision_py.viewmodels.tile_map_metrics import (
    STEP_CYCLES,
    VARIABLE,
    find_variable,
    memory_details,
    metric_names,
    metric_values,
)
from popvision_py.views.memory.legend import heat_lut
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.tile_map.canvas import TileMapCanvas
from popvision_py.views.tile_map.color_bar import ColorBar
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.errors import ReportError

HELP = (
    "Every IPU's tiles as a floor plan (an approximation of the chip's layout), coloured by "
    "the chosen metric. Hover a tile for its numbers; click or drag to select tiles, "
    "shift to add them."
)


class TileMapWidget(QWidget):
    def __init__(self, metrics: list[str] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.opened: OpenedReport | None = None
        self.table: MemoryTable | None = None
        self.model: TileMapModel | None = None
        self.canvas: TileMapCanvas | None = None
        self.color_bar: ColorBar | None = None
        self.var = -1
        self.metric_box = QComboBox()
        self.metric_box.addItems(metrics or metric_names())
        self.metric_box.setToolTip("What colours each tile.")
        self.metric_box.currentTextChanged.connect(lambda _: self._refresh_values())
        self.variable_box = QLineEdit()
        self.variable_box.setPlaceholderText("variable name, Enter")
        self.variable_box.setToolTip("Colour by the bytes of this variable on each tile.")
        self.variable_box.returnPressed.connect(self._variable_typed)
        self.problem = QLabel()
        self.problem.setStyleSheet("color: #d03030")
        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel("Colour by:"))
        controls.addWidget(self.metric_box)
        controls.addWidget(self.variable_box)
        controls.addWidget(self.problem, 1)
        self.body = QVBoxLayout(self)
        self.body.setContentsMargins(6, 4, 6, 4)
        self.body.addLayout(controls)
        self.setToolTip(plain_tooltip(HELP))
        self._update_controls()

    # -- report --------------------------------------------------------------------------
    def show_report(self, opened: OpenedReport) -> str:
        """Draw ``opened``'s tiles; returns a problem ("" when shown)."""
        self.clear()
        try:
            self.table = memory_table(opened.report)
        except ReportError as error:
            return f"The memory of this report cannot be shown.\n\n{error}"
        self.opened = opened
        target = opened.report.target
        self.model = TileMapModel(target.num_ipus, target.tiles_per_ipu)
        self.model.details = memory_details(self.table)
        lut = heat_lut()
        self.canvas = TileMapCanvas(self.model, lut)
        self.canvas.tiles_picked.connect(self._picked)
        self.color_bar = ColorBar(self.model, lut)
        self.body.addWidget(self.canvas, 1)
        self.body.addWidget(self.color_bar)
        opened.selection.changed.connect(self._on_selection)
        self.model.select_tiles(opened.selection.tiles)
        self._refresh_values()
        return ""

    def clear(self) -> None:
        if self.opened is not None:
            self.opened.selection.changed.disconnect(self._on_selection)
        for widget in (self.canvas, self.color_bar):
            if widget is not None:
                widget.setParent(None)
                widget.deleteLater()
        self.opened = self.table = self.model = self.canvas = self.color_bar = None
        self.var = -1

    # -- metric --------------------------------------------------------------------------
    def set_metric(self, name: str) -> None:
        self.metric_box.setCurrentText(name)

    def _variable_typed(self) -> None:
        if self.opened is None:
            return
        try:
            self.var = find_variable(self.opened.report, self.variable_box.text())
        except ReportError as error:
            self.problem.setText(str(error))
            return
        self._refresh_values()

    def _update_controls(self) -> None:
        self.variable_box.setVisible(self.metric_box.currentText() == VARIABLE)

    def _refresh_values(self) -> None:
        self._update_controls()
        if self.model is None or self.opened is None or self.table is None:
            return
        metric = self.metric_box.currentText()
        if metric == VARIABLE and self.var < 0 and self.variable_box.text().strip():
            self.problem.setText(f"No variable matches {self.variable_box.text().strip()!r}.")
        try:
            step = self.opened.selection.step
            found = metric_values(self.opened.report, self.table, metric, self.var, step)
        except (ReportError, IndexError, ValueError) as error:
            self.problem.setText(f"{metric} cannot be shown: {error}")
            return
        if not (metric == VARIABLE and self.var < 0 and self.variable_box.text().strip()):
            self.problem.setText(found.problem)
        self.model.set_values(found.values, found.label, found.unit)

    # -- selection -----------------------------------------------------------------------
    def _picked(self, tiles: np.ndarray, add: bool) -> None:
        if self.opened is None:
            return
        selection = self.opened.selection
        if add:
            tiles = np.union1d(selection.tiles, tiles)
        selection.select_tiles(tiles)

    def _on_selection(self, what: str) -> None:
        if self.model is None or self.opened is None:
            return
        if what == "tiles":
            self.model.select_tiles(self.opened.selection.tiles)
        elif what == "steps" and self.metric_box.currentText() == STEP_CYCLES:
            self._refresh_values()
