"""The Runs page's two charts: each report as a point of one figure against another (cycles
against peak memory by default), coloured by whether it fits or by a sweep value; and a
figure over the runs in name order, a CI series' line. A point clicked picks its report."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.runs import FIT_COLORS, Axis, PointGroup
from popvision_py.views.axes import IndexAxis, nice_step
from popvision_py.views.plain_text import escape
from popvision_py.views.plot_menus import drop_context_menus

POINT_SIZE = 9
LONGEST_NAME = 18  # characters of a report name written under the line; longer: numbers
PICKED_PEN = pg.mkPen("#ff00ff", width=2.5)  # the picked reports: magenta, as picked tiles


def _plot(bottom: pg.AxisItem | None = None) -> pg.PlotWidget:
    plot = pg.PlotWidget(axisItems={"bottom": bottom} if bottom is not None else None)
    plot.hideButtons()
    drop_context_menus(plot)
    for side in ("left", "bottom"):
        plot.getAxis(side).enableAutoSIPrefix(False)
    plot.showGrid(x=True, y=True, alpha=0.25)
    plot.getViewBox().setDefaultPadding(0.06)  # a point on the edge is drawn whole
    return plot


class NameAxis(IndexAxis):
    """Positions named by their reports, one label every so many positions: as far apart as
    the longest name is wide, so names never run into each other."""

    def tickSpacing(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, float]]:
        if not self.names:
            return super().tickSpacing(minVal, maxVal, size)
        widest = max(self.fontMetrics().horizontalAdvance(n) for n in self.names) + 16
        positions_per_px = (maxVal - minVal) / max(size, 1.0)
        step = max(1.0, nice_step(widest * positions_per_px))
        return [(step, 0.0)]

    def fontMetrics(self) -> QFontMetrics:
        return QFontMetrics(self.style.get("tickFont") or QFont())


def key_text(entries: list[tuple[str, str]]) -> str:
    """A chart's colour key as rich text: a coloured dot before each label. Beside the
    title, not over the plot, where it hid the points under it."""
    return "&nbsp;&nbsp;".join(
        f'<span style="color:{color}">&#9679;</span>&nbsp;{escape(label)}'
        for label, color in entries
    )


class ChartBox(QWidget):
    """A title over a plot; ``row_clicked(row)`` when a point is clicked."""

    row_clicked = Signal(int)

    def __init__(self, plot: pg.PlotWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: a hovered point's tooltip: its report's name and figures (the page sets it)
        self.describe = lambda row: str(row)
        self.title = QLabel()
        self.key = QLabel()
        self.key.setTextFormat(Qt.TextFormat.RichText)
        self.key.setToolTip("What the points' colours say")
        self.entries: list[str] = []  # the key's labels, as shown
        self.plot = plot
        self.picked = pg.ScatterPlotItem(size=POINT_SIZE + 6, pen=PICKED_PEN, brush=None)
        self.picked.setZValue(10)
        self.plot.addItem(self.picked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        heading = QHBoxLayout()
        heading.addWidget(self.title)
        heading.addStretch(1)
        heading.addWidget(self.key)
        layout.addLayout(heading)
        layout.addWidget(self.plot, 1)

    def show_key(self, entries: list[tuple[str, str]]) -> None:
        self.entries = [label for label, _ in entries]
        self.key.setText(key_text(entries))

    def _tip(self, x: float, y: float, data: object) -> str:
        return self.describe(int(data))

    def _clicked(self, item: pg.ScatterPlotItem, points: list) -> None:
        if len(points):
            self.row_clicked.emit(int(points[0].data()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # the theme changed: follow it
            self.set_colors()

    def set_colors(self) -> None:
        colors = chart_colors(self)
        self.plot.setBackground(colors.background)
        for side in ("left", "bottom"):
            axis = self.plot.getAxis(side)
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)


class RunsScatter(ChartBox):
    """One scatter item per colour group, and a legend naming the groups."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(_plot(), parent)
        self.items: list[pg.ScatterPlotItem] = []
        self.positions: dict[int, tuple[float, float]] = {}  # row -> its point

    def show_groups(self, groups: list[PointGroup], x: Axis, y: Axis, title: str) -> None:
        for item in self.items:
            self.plot.removeItem(item)
        self.items = []
        self.positions = {}
        for group in groups:
            item = pg.ScatterPlotItem(
                x=group.x,
                y=group.y,
                data=group.rows,
                size=POINT_SIZE,
                pen=pg.mkPen(group.color, width=1),
                brush=pg.mkBrush(group.color),
                hoverable=True,
                tip=self._tip,
            )
            item.sigClicked.connect(self._clicked)
            self.plot.addItem(item)
            self.items.append(item)
            self.positions.update(
                zip(group.rows.tolist(), zip(group.x.tolist(), group.y.tolist(), strict=True),
                    strict=True)
            )  # fmt: skip
        self.show_key([(f"{g.label} ({len(g.rows):,})", g.color) for g in groups])
        self.plot.setLabel("bottom", x.label)
        self.plot.setLabel("left", y.label)
        self.title.setText(title)
        self.plot.enableAutoRange()

    def point_count(self) -> int:
        return sum(len(item.data) for item in self.items)

    def pick(self, rows: list[int]) -> None:
        shown = [self.positions[r] for r in rows if r in self.positions]
        self.picked.setData(pos=shown) if shown else self.picked.clear()


class RunsLine(ChartBox):
    """A figure of each report, in the order of their names: a line with a point per report,
    each point coloured by its fit."""

    def __init__(self, parent: QWidget | None = None) -> None:
        self.axis = NameAxis("bottom")
        super().__init__(_plot(self.axis), parent)
        self.line = pg.PlotDataItem(pen=pg.mkPen("#1f77b4", width=1.5))
        self.points = pg.ScatterPlotItem(size=POINT_SIZE - 2, hoverable=True, tip=self._tip)
        self.points.sigClicked.connect(self._clicked)
        self.plot.addItem(self.line)
        self.plot.addItem(self.points)
        self.rows = np.zeros(0, dtype=np.int64)
        self.values = np.zeros(0)

    def show_series(
        self, rows: np.ndarray, values: np.ndarray, names: list[str], fits: list[str], y: Axis
    ) -> None:
        self.rows, self.values = rows, values
        positions = np.arange(len(rows), dtype=np.float64)
        self.line.setData(positions, values, connect="finite")
        has = np.isfinite(values)
        # one brush per colour, shared: pyqtgraph draws a symbol once per brush it is given
        made = {fit: pg.mkBrush(color) for fit, color in FIT_COLORS.items()}
        brushes = [made[f] for f in np.asarray(fits, dtype=object)[has].tolist()]
        self.points.setData(x=positions[has], y=values[has], data=rows[has], brush=brushes,
                            pen=None)  # fmt: skip
        short = all(len(name) <= LONGEST_NAME for name in names)
        self.axis.names = list(names) if short else None  # else 0, 1, 2...: hover for names
        order = "in name order" if short else "position in name order (hover a point)"
        self.plot.setLabel("bottom", f"report, {order}")
        shown = sorted(
            set(np.asarray(fits, dtype=object)[has].tolist()), key=list(FIT_COLORS).index
        )
        self.show_key([(f, FIT_COLORS[f]) for f in shown])
        self.plot.setLabel("left", y.label)
        self.title.setText(f"{y.label.split(' (')[0]} over the runs")
        self.plot.enableAutoRange()

    def point_count(self) -> int:
        return len(self.points.data)

    def pick(self, rows: list[int]) -> None:
        where = {int(r): i for i, r in enumerate(self.rows.tolist())}
        shown = [(where[r], self.values[where[r]]) for r in rows if r in where]
        shown = [(x, v) for x, v in shown if np.isfinite(v)]
        self.picked.setData(pos=shown) if shown else self.picked.clear()
