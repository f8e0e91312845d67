"""A histogram of tile memory: tiles per KiB bin as bars, the tile memory limit marked."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QWidget

from popvision_py.theme import chart_colors
from popvision_py.views.plot_menus import drop_context_menus


class MemoryHistogram(pg.PlotWidget):
    """One BarGraphItem (all bins in one item) and a dashed line at the limit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        drop_context_menus(self)
        self.setMouseEnabled(x=False, y=False)
        self.hideButtons()
        self.bars = pg.BarGraphItem(x=[], height=[], width=1.0)
        self.addItem(self.bars)
        self.limit = pg.InfiniteLine(angle=90, movable=False)
        self.addItem(self.limit)
        self.limit_label = pg.TextItem(anchor=(1.05, 0))
        self.addItem(self.limit_label)
        self.setLabel("bottom", "Tile memory", units="KiB")
        self.getAxis("bottom").enableAutoSIPrefix(False)
        self.setLabel("left", "Tiles")
        self.setTitle("Tiles by memory")
        self.counts = np.zeros(0, dtype=np.int64)
        self.centres = np.zeros(0)
        self._shown: tuple | None = None

    def show_bars(
        self, centres: np.ndarray, counts: np.ndarray, width: float, limit_kib: float
    ) -> None:
        self._shown = (centres, counts, width, limit_kib)
        colors = chart_colors(self)
        self.setBackground(colors.background)
        for axis in ("bottom", "left"):
            self.getAxis(axis).setPen(colors.foreground)
            self.getAxis(axis).setTextPen(colors.foreground)
        self.centres, self.counts = centres, counts
        over = centres - width / 2 >= limit_kib
        brushes = [pg.mkBrush(colors.limit if o else "#3a7bd5") for o in over.tolist()]
        self.bars.setOpts(x=centres, height=counts, width=width * 0.9, brushes=brushes, pen=None)
        self.limit.setPen(pg.mkPen(colors.limit, width=2, style=pg.QtCore.Qt.PenStyle.DashLine))
        self.limit.setValue(limit_kib)
        top = float(counts.max(initial=1))
        self.limit_label.setText(f"limit {limit_kib:,.0f} KiB", color=colors.limit)
        self.limit_label.setPos(limit_kib, top * 1.08)
        right = max(float(centres[-1] + width) if len(centres) else 0.0, limit_kib * 1.05)
        self.setXRange(0, right, padding=0.06)  # room for the last tick label
        self.setYRange(0, top * 1.15, padding=0)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "_shown", None):
            self.show_bars(*self._shown)  # the light or dark chart colours
        super().changeEvent(event)
