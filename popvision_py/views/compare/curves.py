"""A and B as two curves on one axis (in the A/B colours, each peak marked) over their
difference B - A (above zero red, below green), x linked: compare mode's one chart, used by
Liveness (live bytes per step) and Memory (bytes per tile)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.compare import A_COLOR, B_COLOR, LESS_COLOR, MORE_COLOR, Sides
from popvision_py.views.axes import BytesAxis
from popvision_py.views.plain_text import rich_label
from popvision_py.views.plot_menus import drop_context_menus


def _plot(title: str, kind: str) -> tuple[pg.PlotWidget, pg.AxisItem]:
    axis = BytesAxis(title) if kind == "bytes" else pg.AxisItem("left")
    if kind != "bytes":
        axis.setLabel(title)
    plot = pg.PlotWidget(axisItems={"left": axis})
    drop_context_menus(plot)
    plot.showGrid(x=False, y=True, alpha=0.2)
    plot.setMinimumHeight(40)  # the tab shares the details' height: never push the window
    return plot, axis


class CompareCurves(QWidget):
    """``sides.a`` and ``sides.b`` over x = row index, and ``sides.diff`` below."""

    def __init__(
        self, x_label: str, y_label: str, kind: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.kind = kind
        self.peaks = rich_label()
        self.top, self.top_axis = _plot(y_label, kind)
        self.bottom, self.bottom_axis = _plot(f"Δ {y_label}" if kind != "bytes" else "", kind)
        if kind == "bytes":  # "Δ Memory" over "(KiB)", with ticks above and below zero
            self.bottom_axis.title = f"Δ {y_label}"
            self.bottom_axis.two_lines = True
            self.bottom_axis.min_ticks = 4.0
        self.bottom.setXLink(self.top)
        self.bottom.setLabel("bottom", x_label)
        self.top.setMaximumHeight(10_000)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.peaks)
        layout.addWidget(self.top, 3)
        layout.addWidget(self.bottom, 2)
        self.sides: Sides | None = None
        self.names = ("", "")

    def show_sides(self, sides: Sides, names: tuple[str, str]) -> None:
        self.sides, self.names = sides, names
        a = np.asarray(sides.a, dtype=np.float64)
        b = np.asarray(sides.b, dtype=np.float64)
        diff = b - a
        x = np.arange(len(a) + 1, dtype=np.float64) - 0.5  # steps: one bar per row
        colors = chart_colors(self)
        self.top.clear()
        self.bottom.clear()
        largest = max(float(a.max(initial=0)), float(b.max(initial=0)), 1.0)
        biggest_change = max(float(np.abs(diff).max(initial=0)), 1.0)
        if self.kind == "bytes":
            self.top_axis.set_largest(largest)
            self.bottom_axis.set_largest(biggest_change)
        for values, color, name in ((a, A_COLOR, names[0]), (b, B_COLOR, names[1])):
            item = pg.PlotDataItem(x, values, stepMode="center", pen=pg.mkPen(color, width=2),
                                   name=name)  # fmt: skip
            self.top.addItem(item)  # first: clipping asks the item's view box
            item.setClipToView(True)
            if len(values):  # the peak: the first row holding the most
                peak = int(np.argmax(values))
                edge = pg.mkPen(colors.foreground)
                mark = pg.ScatterPlotItem([peak], [values[peak]], symbol="t", size=12,
                                          brush=pg.mkBrush(color), pen=edge)  # fmt: skip
                self.top.addItem(mark)
        for part, color in ((np.maximum(diff, 0), MORE_COLOR), (np.minimum(diff, 0), LESS_COLOR)):
            item = pg.PlotDataItem(x, part, stepMode="center", fillLevel=0,
                                   brush=pg.mkBrush(color), pen=pg.mkPen(color))  # fmt: skip
            self.bottom.addItem(item)
        self.bottom.addLine(y=0, pen=pg.mkPen(colors.foreground))
        for plot in (self.top, self.bottom):
            plot.setBackground(colors.background)
            for name in ("left", "bottom"):
                plot.getAxis(name).setPen(colors.foreground)
                plot.getAxis(name).setTextPen(colors.foreground)
        self.top.setYRange(0, largest * 1.08)
        self.bottom.setYRange(-biggest_change * 1.1, biggest_change * 1.1)
        self.top.setXRange(-0.5, max(len(a), 1) - 0.5, padding=0)
        peak_a = int(np.argmax(a)) if len(a) else -1
        peak_b = int(np.argmax(b)) if len(b) else -1
        self.peaks.setText(
            f'<span style="color:{A_COLOR}">▼ peak A at {peak_a}</span> · '
            f'<span style="color:{B_COLOR}">▼ peak B at {peak_b}</span> · '
            f'Δ: <span style="color:{MORE_COLOR}">more in B</span> / '
            f'<span style="color:{LESS_COLOR}">less in B</span>'
        )

    def changeEvent(self, event: QEvent) -> None:
        """Light or dark: draw again in the new theme's colours."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self.sides is not None:
            self.show_sides(self.sides, self.names)

    def difference(self) -> np.ndarray:
        """B - A as drawn (for tests)."""
        assert self.sides is not None
        return self.sides.diff
