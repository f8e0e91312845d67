"""A timeline chart: lanes named on the left, a time axis (cycles or seconds) below, zoom and
pan by wheel, drag, keys (W/S or +/- zoom, A/D pan, Home shows all) and a typed range.

Views give it a ``SpanSource`` and lane names; it reports hovers and clicks as the index of
the span in the item's last batch, which the view maps to its own items (steps, events).
"""

from __future__ import annotations

import heapq
import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QCursor, QFontMetrics, QKeyEvent
from PySide6.QtWidgets import QToolTip, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.timeline import pan_range, zoom_range
from popvision_py.viewmodels.trace_format import format_clock
from popvision_py.views.axes import nice_step
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.plot_menus import drop_context_menus
from popvision_py.views.timeline.spans_item import LANE_GAP, SpanLanesItem, SpanSource

ZOOM_STEP = 0.8  # W / + narrows the range to this fraction; S / - widens it by its inverse
PAN_STEP = 0.2  # A / D move the range by this fraction of its width


class TimeAxis(pg.AxisItem):
    """A bottom axis in cycles (``per_second`` None) or in seconds with readable units."""

    def __init__(self, **kwargs) -> None:
        super().__init__("bottom", **kwargs)
        self.enableAutoSIPrefix(False)
        self.units_per_second: float | None = None
        self.origin = 0.0
        self.clock_epoch_ns: float | None = None  # set_clock: wall-clock ns at value 0
        self.set_cycles()

    def set_cycles(self) -> None:
        self.units_per_second = None
        self.clock_epoch_ns = None
        self.setLabel("Cycles")

    def set_clock(self, units_per_second: float, epoch_ns: float, label: str = "Time") -> None:
        """Show values as UTC time of day: value 0 is ``epoch_ns`` (ns since the epoch)."""
        self.units_per_second, self.origin = float(units_per_second), 0.0
        self.clock_epoch_ns = float(epoch_ns)
        self.setLabel(label)

    def set_seconds(
        self, units_per_second: float, origin: float = 0.0, label: str = "Time"
    ) -> None:
        """Show values as time: ``units_per_second`` (a clock in Hz, or 1e9 for ns)."""
        self.units_per_second, self.origin = float(units_per_second), float(origin)
        self.clock_epoch_ns = None
        self.setLabel(label)

    def tickSpacing(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, float]]:
        major = nice_step((maxVal - minVal) / max(size / 110.0, 1.0))
        if self.units_per_second is None:
            major = max(major, 1.0)
        return [(major, 0.0), (major / 5, 0.0)]

    def tickValues(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, list[float]]]:
        """Ticks at round times after ``origin`` (not round raw values, which would be
        labelled with rounded, wrong times)."""
        shift = self.origin if self.units_per_second and self.clock_epoch_ns is None else 0.0
        ticks = super().tickValues(minVal - shift, maxVal - shift, size)
        return [(spacing, [v + shift for v in values]) for spacing, values in ticks]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.units_per_second is None:
            return [f"{v:,.0f}" for v in values]
        step = spacing / self.units_per_second
        if self.clock_epoch_ns is not None:
            ns = 1e9 / self.units_per_second
            return [format_clock(self.clock_epoch_ns + v * ns, step) for v in values]
        return [format_time(v - self.origin, self.units_per_second, step) for v in values]


def format_time(value: float, units_per_second: float, step_seconds: float) -> str:
    """``value`` units as time in the unit of the tick step, with the decimals it needs."""
    seconds = value / units_per_second
    scale, unit = next(
        ((scale, unit) for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))
         if step_seconds >= scale / 100),
        (1e-9, "ns"),
    )  # fmt: skip
    ratio = step_seconds / scale
    decimals = 0 if ratio >= 1 else min(3, math.ceil(-math.log10(ratio) - 1e-9))
    return f"{seconds / scale:,.{decimals}f} {unit}"


class LaneAxis(pg.AxisItem):
    """The left axis: each lane's name at the middle of its spans. A name wider than the
    axis is elided in the middle (its start and end both tell), never dropped; the full
    name is the lane's tooltip (``TimelinePlot.lane_tooltip``)."""

    MARGIN = 10  # px between a name and the plot

    def __init__(self, **kwargs) -> None:
        super().__init__("left", **kwargs)
        self.names: list[str] = []
        self.enableAutoSIPrefix(False)

    def metrics(self) -> QFontMetrics:
        font = self.style.get("tickFont") or self.font()
        return QFontMetrics(font)

    def names_width(self) -> int:
        """Pixels the widest name needs (with the margin)."""
        metrics = self.metrics()
        longest = heapq.nlargest(64, self.names, key=len)  # 100k lanes: measure a few
        widest = max((metrics.horizontalAdvance(n) for n in longest if n), default=0)
        # +1: the advance is rounded, the elision (shown_name) measures the exact width,
        # so a name given exactly its advance was cut ("threa…69224")
        return widest + self.MARGIN + 4 + 1

    def shown_name(self, lane: int) -> str:
        """Lane ``lane``'s name as drawn: elided in the middle to the axis's width."""
        if not 0 <= lane < len(self.names):
            return ""
        room = max(int(self.width()) - self.MARGIN - 4, 12)
        return self.metrics().elidedText(self.names[lane], Qt.TextElideMode.ElideMiddle, room)

    def lane_at(self, y: float) -> int:
        """The lane at view y (-1 outside every lane)."""
        lane = math.floor(y)
        return lane if 0 <= lane < len(self.names) else -1

    def tickValues(  # pyqtgraph's names
        self,
        minVal: float,  # noqa: N803
        maxVal: float,  # noqa: N803
        size: float,
    ) -> list[tuple[float, list[float]]]:
        low, high = sorted((minVal, maxVal))  # the view box inverts y
        first, last = max(int(low), 0), min(int(high) + 1, len(self.names))
        every = max(1, int((last - first) / max(size / 16.0, 1.0)))
        middle = (1 - LANE_GAP) / 2
        return [(1.0, [lane + middle for lane in range(first, last, every)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [self.shown_name(int(v)) for v in values]


class TimelinePlot(pg.PlotWidget):
    """Lanes of spans over a time axis. ``span_hovered`` / ``span_clicked`` carry the index of
    a span in ``spans.batch`` (-1 for none) and, for clicks, whether shift was held."""

    span_hovered = Signal(int, QPointF)
    span_clicked = Signal(int, bool)
    range_changed = Signal(float, float)

    def __init__(self, source: SpanSource, parent: QWidget | None = None) -> None:
        self.lane_axis = LaneAxis()
        self.time_axis = TimeAxis()
        super().__init__(parent, axisItems={"left": self.lane_axis, "bottom": self.time_axis})
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.hideButtons()
        drop_context_menus(self)
        self.view_box = self.getPlotItem().getViewBox()
        self.view_box.invertY(True)
        self.view_box.setMouseEnabled(x=True, y=False)
        self.view_box.setDefaultPadding(0.0)
        self.spans = SpanLanesItem(source)
        self.addItem(self.spans)
        self.lane_axis.setWidth(140)
        self.lane_tooltip = ""  # the full name of the lane last hovered on the name column
        self.lane_axis.setStyle(tickLength=0)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        self.view_box.sigXRangeChanged.connect(self._on_x_range)
        self.apply_colors()

    # -- data -----------------------------------------------------------------------------
    def set_lanes(self, names: list[str], source: SpanSource, limits: tuple[float, float]) -> None:
        """Show ``names`` lanes of ``source`` over ``limits``, zoomed out to all of it."""
        self.lane_axis.names = list(names)
        self.spans.set_data(source, len(names), limits)
        lo, hi = self.spans.x_limits
        self.view_box.setLimits(xMin=lo, xMax=hi, yMin=0, yMax=max(len(names), 1))
        self.view_box.setYRange(0, max(len(names), 1), padding=0)
        self.show_all()

    def refresh(self) -> None:
        """Redraw after the source's answers changed (a filter, a layout)."""
        self.spans.invalidate()

    # -- range ----------------------------------------------------------------------------
    @property
    def x_range(self) -> tuple[float, float]:
        (x0, x1), _ = self.view_box.viewRange()
        return float(x0), float(x1)

    def set_x_range(self, x0: float, x1: float) -> None:
        lo, hi = self.spans.x_limits
        x0, x1 = max(x0, lo), min(x1, hi)
        if x1 > x0:
            self.view_box.setXRange(x0, x1, padding=0)

    def show_all(self) -> None:
        self.view_box.setXRange(*self.spans.x_limits, padding=0)

    def zoom(self, factor: float, anchor: float | None = None) -> None:
        x0, x1 = self.x_range
        anchor = (x0 + x1) / 2 if anchor is None else anchor
        self.set_x_range(*zoom_range(x0, x1, factor, anchor, self.spans.x_limits))

    def pan(self, fraction: float) -> None:
        self.set_x_range(*pan_range(*self.x_range, fraction, self.spans.x_limits))

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        if key in (Qt.Key.Key_W, Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(ZOOM_STEP)
        elif key in (Qt.Key.Key_S, Qt.Key.Key_Minus):
            self.zoom(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_A:
            self.pan(-PAN_STEP)
        elif key == Qt.Key.Key_D:
            self.pan(PAN_STEP)
        elif key == Qt.Key.Key_Home:
            self.show_all()
        else:
            super().keyPressEvent(event)

    def _on_x_range(self, _box: object, x_range: tuple[float, float]) -> None:
        self.range_changed.emit(float(x_range[0]), float(x_range[1]))

    # -- mouse ----------------------------------------------------------------------------
    def size_lane_names(self, max_width: int) -> int:
        """Make the name column as wide as its widest name, at most ``max_width`` (and at
        least 60 px); the width set."""
        width = int(min(max(self.lane_axis.names_width(), 60), max(max_width, 60)))
        if int(self.lane_axis.width()) != width:
            self.lane_axis.setWidth(width)
            self.lane_axis.picture = None  # pyqtgraph caches the drawn names
            self.lane_axis.update()
        return width

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        if self.lane_axis.sceneBoundingRect().contains(scene_pos):
            y = self.view_box.mapSceneToView(scene_pos).y()
            lane = self.lane_axis.lane_at(y)
            self.lane_tooltip = self.lane_axis.names[lane] if lane >= 0 else ""
            if self.lane_tooltip:
                QToolTip.showText(QCursor.pos(), plain_tooltip(self.lane_tooltip), self)
            return
        if not self.view_box.sceneBoundingRect().contains(scene_pos):
            return
        point = self.view_box.mapSceneToView(scene_pos)
        self.span_hovered.emit(self.spans.span_at(point.x(), point.y()), scene_pos)

    def _on_mouse_clicked(self, event: object) -> None:
        if event.double():
            self.show_all()
            return
        if event.button() != Qt.MouseButton.LeftButton:
            return
        point = self.view_box.mapSceneToView(event.scenePos())
        shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        self.span_clicked.emit(self.spans.span_at(point.x(), point.y()), shift)

    def changeEvent(self, event: QEvent) -> None:
        # the light / dark theme switched (not during construction, before the plot item)
        if event.type() == QEvent.Type.PaletteChange and "spans" in self.__dict__:
            self.apply_colors()
        super().changeEvent(event)

    def apply_colors(self) -> None:
        colors = chart_colors(self)
        self.setBackground(colors.background)
        for axis in (self.lane_axis, self.time_axis):
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
