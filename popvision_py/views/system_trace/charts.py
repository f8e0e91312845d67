"""The charts under and over the System Trace timeline, all x-linked to it: instant events as
lollipops (one per pixel column), metric series as lines or areas, heatmaps as colour strips.
Each redraws from its view model's pixel reduction when the shared time range changes.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.viewmodels.system_trace_series import (
    bucket_names,
    heatmap_window,
    series_window,
    step_points,
)
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.plot_menus import drop_context_menus
from profiler_core.trace.model import Heatmap

AXIS_WIDTH = 140  # as the timeline's lane names, so every chart's x lines up
SERIES_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")
HEAT = pg.colormap.get("viridis")


class LinkedPlot(pg.PlotWidget):
    """A small chart that follows the timeline's x range, named on its left axis."""

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hideButtons()
        drop_context_menus(self)
        self.plot_item = self.getPlotItem()
        self.view_box = self.plot_item.getViewBox()
        self.view_box.setMouseEnabled(x=True, y=False)
        self.view_box.setDefaultPadding(0.0)
        self.plot_item.hideAxis("bottom")
        left = self.plot_item.getAxis("left")
        left.setWidth(AXIS_WIDTH)
        left.setLabel(name)
        self.name = name
        self.apply_colors()

    def follow(self, timeline: pg.PlotWidget) -> None:
        """Share ``timeline``'s x range, redrawing when the range or the size changes."""
        self.setXLink(timeline)
        self.view_box.sigXRangeChanged.connect(self._on_view_changed)
        self.view_box.sigResized.connect(self._on_view_changed)
        self.redraw()

    def _on_view_changed(self, *_args: object) -> None:
        self.redraw()

    def redraw(self) -> None:
        """Draw what is in the visible range (charts reduced to pixels override this)."""

    def visible_x(self) -> tuple[float, float, int]:
        (x0, x1), _ = self.view_box.viewRange()
        return float(x0), float(x1), max(int(self.view_box.width()), 1)

    def apply_colors(self) -> None:
        colors = chart_colors(self)
        self.setBackground(colors.background)
        axis = self.plot_item.getAxis("left")
        axis.setPen(colors.foreground)
        axis.setTextPen(colors.foreground)


class LollipopItem(pg.GraphicsObject):
    """Instants per pixel column: a stem whose height grows with the count, and a dot."""

    def __init__(self, model: SystemTraceModel) -> None:
        super().__init__()
        self.model = model
        self.selected = -1
        self.color = QColor("#c0392b")
        self.columns = np.zeros(0, np.int64)  # last paint: counts per column
        self.first = np.zeros(0, np.int64)  # last paint: first instant per column
        self.x_range = (0.0, 1.0)
        # Qt asks for the bounds often (even while tearing down): keep them at hand.
        x0, x1 = model.time_limits()
        self.bounds = QRectF(x0, 0.0, x1 - x0, 1.0)

    def boundingRect(self) -> QRectF:
        return QRectF(self.bounds)

    def paint(self, painter: QPainter, *args: object) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), _ = vb.viewRange()
        width = max(int(vb.width()), 1)
        self.columns, self.first = self.model.instants(x0, x1, width)
        self.x_range = (x0, x1)
        hit = np.flatnonzero(self.columns)
        if hit.size == 0:
            return
        step = (x1 - x0) / width
        x = x0 + (hit + 0.5) * step
        peak = max(float(np.log1p(self.columns.max())), 1e-9)
        top = 0.35 + 0.55 * np.log1p(self.columns[hit]) / peak
        # Item -> device coordinates in numpy (the view box only scales and moves).
        t = painter.transform()
        px = (x * t.m11() + t.dx()).tolist()
        base = t.dy()
        py = (top * t.m22() + t.dy()).tolist()
        chosen = self._selected_column(x0, x1, width)
        painter.save()
        painter.resetTransform()
        painter.setPen(QPen(QBrush(self.color), 1.0))
        painter.drawLines([QLineF(a, base, a, b) for a, b in zip(px, py, strict=True)])
        painter.setBrush(QBrush(self.color))
        for a, b, column in zip(px, py, hit.tolist(), strict=True):
            radius = 3.0
            if column == chosen:
                painter.setPen(QPen(QBrush(QColor("#ffd400")), 2.0))
                radius = 5.0
            painter.drawEllipse(QPointF(a, b), radius, radius)
        painter.restore()

    def _selected_column(self, x0: float, x1: float, width: int) -> int:
        if self.selected < 0:
            return -1
        t = float(self.model.trace.start_ns[self.selected])
        return int((t - x0) / (x1 - x0) * width)

    def instant_at(self, x: float, tolerance_px: int = 4) -> int:
        """The first instant of the non-empty column nearest ``x`` (within tolerance)."""
        if len(self.columns) == 0:
            return -1
        x0, x1 = self.x_range
        column = int((x - x0) / (x1 - x0) * len(self.columns))
        hit = np.flatnonzero(self.columns)
        if hit.size == 0:
            return -1
        nearest = int(hit[np.argmin(np.abs(hit - column))])
        return int(self.first[nearest]) if abs(nearest - column) <= tolerance_px else -1


class InstantsPlot(LinkedPlot):
    """The marker row above the timeline; ``instant_clicked(event)`` on a click near one."""

    instant_clicked = Signal(int)

    def __init__(self, model: SystemTraceModel, parent: QWidget | None = None) -> None:
        super().__init__("Instants", parent)
        self.item = LollipopItem(model)
        self.addItem(self.item)
        self.view_box.setYRange(0, 1, padding=0)
        self.plot_item.getAxis("left").setTicks([[]])
        self.setFixedHeight(56)
        self.scene().sigMouseClicked.connect(self._on_click)

    def select(self, event: int) -> None:
        self.item.selected = event
        self.item.update()

    def _on_click(self, event: object) -> None:
        point = self.view_box.mapSceneToView(event.scenePos())
        self.instant_clicked.emit(self.item.instant_at(point.x()))


class SeriesPlot(LinkedPlot):
    """One pvti.Graph (or Chrome counter): its series as steps -- a value holds until the
    next sample, NaN values are gaps -- as lines, or as areas down to zero."""

    def __init__(
        self,
        graph: str,
        unit: str,
        series: dict[str, tuple[np.ndarray, np.ndarray]],
        until: float = 0.0,
    ) -> None:
        super().__init__(f"{graph} ({unit})" if unit else graph)
        self.graph = graph
        self.series = series
        self.until = until  # the last value holds to here (the trace's end)
        self.area = False
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.samples: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # last redraw's
        self.legend = self.plot_item.addLegend(offset=(-10, 4))
        for i, name in enumerate(series):
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            curve = pg.PlotDataItem(pen=pg.mkPen(color, width=1.5), name=name, connect="finite")
            self.curves[name] = curve
            self.addItem(curve)
        values = [v[np.isfinite(v)] for _, v in series.values()]
        values = [v for v in values if len(v)]
        if values:
            lo = min(0.0, min(float(v.min()) for v in values))
            hi = max(float(v.max()) for v in values)
            self.view_box.setYRange(lo, hi if hi > lo else lo + 1, padding=0.08)
        self.setFixedHeight(120)

    def set_area(self, area: bool) -> None:
        self.area = area
        for i, curve in enumerate(self.curves.values()):
            color = QColor(SERIES_COLORS[i % len(SERIES_COLORS)])
            color.setAlpha(90)
            curve.setFillLevel(0.0 if area else None)
            curve.setBrush(color if area else None)

    def redraw(self) -> None:
        x0, x1, width = self.visible_x()
        for name, (t, v) in self.series.items():
            x, y = series_window(t, v, x0, x1, width)
            self.samples[name] = (x, y)
            self.curves[name].setData(*step_points(x, y, self.until))

    def shown_points(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The samples (or per-pixel min/max) the last redraw drew as steps."""
        return self.samples.get(name, (np.zeros(0), np.zeros(0)))

    def drawn_steps(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """The step outline handed to the curve (two points per sample)."""
        x, y = self.curves[name].getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (x, y)


class HeatmapPlot(LinkedPlot):
    """One heatmap: a strip per bucket (named by its edges), coloured by count over time."""

    def __init__(self, heatmap: Heatmap) -> None:
        super().__init__(f"{heatmap.name} ({heatmap.unit})" if heatmap.unit else heatmap.name)
        self.heatmap = heatmap
        self.image = pg.ImageItem()
        self.addItem(self.image)
        self.buckets = heatmap.counts.shape[1]
        self.names = bucket_names(heatmap.edges, heatmap.unit)
        self.view_box.invertY(True)
        self.view_box.disableAutoRange()  # the image's rect must not rescale the buckets
        self.view_box.setYRange(0, self.buckets, padding=0)
        ticks = [(b + 0.5, name) for b, name in enumerate(self.names)]
        self.plot_item.getAxis("left").setTicks([ticks])
        self.peak = max(int(heatmap.counts.max()), 1) if heatmap.counts.size else 1
        # The colour scale, pinned to the chart's corner (a child of the view box, not of
        # its data): no colour before the first sample, dark to yellow = 0 to the peak.
        self.scale_text = pg.TextItem(f"count: 0 (dark) … {self.peak:,} (yellow)", anchor=(1, 0))
        self.scale_text.setParentItem(self.view_box)
        self.view_box.sigResized.connect(self._place_scale)
        self.setToolTip(
            plain_tooltip(
                f"{self.name}: how many values fell in each bucket (rows, named by the bucket "
                f"edges) at each sample; colour from dark (0) to yellow ({self.peak:,})."
            )
        )
        self.lut = HEAT.getLookupTable(0.0, 1.0, 256, alpha=True)
        self.last = np.zeros((self.buckets, 0))
        self.setFixedHeight(max(60, 18 * self.buckets + 12))
        self.apply_colors()

    def _place_scale(self, *_args: object) -> None:
        self.scale_text.setPos(self.view_box.width() - 4, 0)

    def apply_colors(self) -> None:
        super().apply_colors()
        colors = chart_colors(self)
        if hasattr(self, "scale_text"):
            self.scale_text.setColor(colors.foreground)
            self.scale_text.fill = pg.mkBrush(colors.background)

    def redraw(self) -> None:
        x0, x1, width = self.visible_x()
        grid = heatmap_window(self.heatmap, x0, x1, width)
        self.last = grid
        index = np.where(np.isnan(grid), 0, 1 + np.round(grid / self.peak * 254)).astype(int)
        lut = np.vstack([[0, 0, 0, 0], self.lut[1:]]).astype(np.uint8)
        rgba = lut[np.clip(index, 0, 255)]  # (buckets, width, 4); index 0 is transparent
        self.image.setImage(np.ascontiguousarray(rgba.transpose(1, 0, 2)), autoLevels=False)
        self.image.setRect(QRectF(x0, 0.0, x1 - x0, float(self.buckets)))


def link_all(plots: list[LinkedPlot], timeline: pg.PlotWidget) -> None:
    """x-link ``plots`` to ``timeline``: they follow its range and redraw themselves."""
    for plot in plots:
        plot.follow(timeline)
