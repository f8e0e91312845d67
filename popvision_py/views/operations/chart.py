"""The Operations report's per-tile cycles chart: one bar per pixel-wide group of tiles (the
tile with the most cycles in it), redrawn at the chart's width, never a bar per tile."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.colors import SELECTION_OUTLINE
from popvision_py.viewmodels.pixels import column_ranges
from popvision_py.viewmodels.step_colors import STEP_CLASS_COLORS, StepClass
from popvision_py.views.axes import IndexAxis
from popvision_py.views.plot_menus import drop_context_menus


def tile_bars(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bars for ``width`` pixel columns over every tile: centre, width (in tiles) and height
    (the largest value among the tiles each bar covers)."""
    n = values.size
    lo, hi = column_ranges(n, -0.5, n - 0.5, max(min(width, n), 1))
    keep = hi > lo
    lo, hi = np.unique(np.stack((lo[keep], hi[keep])), axis=1)
    heights = np.maximum.reduceat(values, lo) if lo.size else np.zeros(0, values.dtype)
    # reduceat runs to the next start; a bar's range ends at its own hi, which is that start
    return (lo + hi - 1) / 2.0, (hi - lo).astype(np.float64), heights


class TileCyclesChart(QWidget):
    """Compute cycles per tile of the selected operation."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.bottom_axis = IndexAxis("bottom")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.bottom_axis})
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        drop_context_menus(self.plot)
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.setLabel("left", "cycles")
        self.bottom_axis.setLabel("tile")
        self.bars: pg.BarGraphItem | None = None
        self.values = np.zeros(0, dtype=np.int64)
        self.selected = np.zeros(0, dtype=np.int64)  # the report's selected tiles
        self.marks = pg.PlotDataItem(connect="pairs")  # a line at each selected tile
        self.marks.setZValue(5)
        self.plot.addItem(self.marks)
        self._title = ""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addWidget(self.plot, 1)

    def show_values(self, values: np.ndarray, title: str) -> None:
        self.values = np.asarray(values, dtype=np.int64)
        self._title = title
        self.redraw()

    def set_selected(self, tiles: np.ndarray) -> None:
        """Mark the report's selected tiles (picked in Memory, the Tile Map ...)."""
        self.selected = np.asarray(tiles, dtype=np.int64)
        self._draw_marks()

    def _draw_marks(self) -> None:
        tiles = self.selected[(self.selected >= 0) & (self.selected < self.values.size)]
        top = float(max(int(self.values.max(initial=0)), 1))
        self.marks.setData(np.repeat(tiles.astype(np.float64), 2), np.tile([0.0, top], len(tiles)))
        self.marks.setPen(pg.mkPen(SELECTION_OUTLINE[:3], width=2, cosmetic=True))
        text = self._title
        if tiles.size:
            most = int(self.values[tiles].max())
            text += f" Selected tiles ({tiles.size:,}, magenta): {most:,} cycles at most."
        self.title.setText(text)

    def pixel_width(self) -> int:
        return max(int(self.plot.getPlotItem().vb.width()), 50)

    def redraw(self) -> None:
        colors = chart_colors(self)
        self.plot.setBackground(colors.background)
        for side in ("left", "bottom"):
            axis = self.plot.getAxis(side)
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        if self.bars is not None:
            self.plot.removeItem(self.bars)
            self.bars = None
        self._draw_marks()
        if self.values.size == 0:
            return
        x, width, height = tile_bars(self.values, self.pixel_width())
        color = STEP_CLASS_COLORS[StepClass.COMPUTE]
        self.bars = pg.BarGraphItem(x=x, height=height, width=width, brush=color, pen=None)
        self.plot.addItem(self.bars)
        self.plot.setXRange(-0.5, self.values.size - 0.5, padding=0)
        self.plot.setYRange(0, max(int(self.values.max()), 1), padding=0.05)

    def bar_count(self) -> int:
        return 0 if self.bars is None else len(self.bars.opts["x"])

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.redraw()
        super().changeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.redraw()  # the palette and width may have changed while another tab showed

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.values.size:
            self.redraw()
