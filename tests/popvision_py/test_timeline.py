"""The shared timeline: spans to pixel columns, picking, ranges, and the chart drawing them."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from popvision_py.viewmodels.timeline import (
    NO_KEY,
    RangeError,
    SpanBatch,
    lane_pixels,
    pan_range,
    parse_range,
    span_at,
    zoom_range,
)
from popvision_py.views.timeline.plot import TimelinePlot, format_time

RED, BLUE, GREEN = (220, 40, 40, 255), (40, 60, 220, 255), (40, 180, 60, 255)


def _batch() -> SpanBatch:
    # lane 0: [0, 40) red, [40, 40.2) blue (far below a pixel at 100 px for 100 units)
    # lane 1: [10, 30) green
    return SpanBatch(
        lane=np.array([0, 0, 1], np.int32),
        start=np.array([0.0, 40.0, 10.0]),
        end=np.array([40.0, 40.2, 30.0]),
        color=np.array([RED, BLUE, GREEN], np.uint8),
        key=np.array([7, 8, NO_KEY]),
        labels=["compute", "sync", "exchange"],
    )


def test_each_pixel_column_shows_the_span_over_it() -> None:
    shown = lane_pixels(_batch(), lanes=2, x0=0, x1=100, width=100)
    assert (shown[0, :40] == 0).all()
    assert shown[0, 40] == 1  # a span shorter than a pixel still gets its column
    assert (shown[0, 41:] == -1).all()
    assert (shown[1, 10:30] == 2).all() and (shown[1, :10] == -1).all()
    assert (shown[1, 30:] == -1).all()


def test_zoomed_in_a_span_covers_many_columns_and_others_are_clipped() -> None:
    shown = lane_pixels(_batch(), lanes=2, x0=35, x1=45, width=100)
    assert (shown[0, :50] == 0).all()  # [35, 40) is half of the window
    assert (shown[0, 50:52] == 1).all()  # 0.2 units = 2 columns
    assert (shown[0, 52:] == -1).all()
    assert (shown[1] == -1).all()


def test_picking_prefers_the_shortest_span_and_respects_lanes() -> None:
    batch = _batch()
    assert span_at(batch, 0, 20.0) == 0
    assert span_at(batch, 0, 40.1) == 1
    assert span_at(batch, 0, 40.5, tolerance=1.0) == 1  # within a pixel of the short span
    assert span_at(batch, 1, 5.0) == -1
    assert span_at(batch, 1, 12.0) == 2


def test_zoom_and_pan_stay_inside_the_data() -> None:
    assert zoom_range(0, 100, 0.5, 50, (0, 100)) == (25, 75)
    assert zoom_range(0, 100, 0.5, 0, (0, 100)) == (0, 50)
    assert zoom_range(20, 80, 4.0, 50, (0, 100)) == (0, 100)
    assert pan_range(0, 50, 0.2, (0, 100)) == (10, 60)
    assert pan_range(0, 50, -0.2, (0, 100)) == (0, 50)
    assert pan_range(40, 90, 0.5, (0, 100)) == (50, 100)


def test_typed_ranges() -> None:
    assert parse_range("1,000 - 25,000") == (1000, 25000)
    assert parse_range("1000..2500.5") == (1000, 2500.5)
    assert parse_range("10 to 20") == (10, 20)
    with pytest.raises(RangeError, match="two numbers"):
        parse_range("soon")
    with pytest.raises(RangeError, match="after the start"):
        parse_range("20-10")


def test_time_ticks_use_the_unit_of_their_step() -> None:
    assert format_time(1_330_000, 1.33e9, 1e-3) == "1 ms"
    assert format_time(2_500, 1e9, 0.5e-6) == "2.5 µs"
    assert format_time(3e9, 1e9, 1.0) == "3 s"
    assert format_time(12, 1e9, 2e-9) == "12 ns"


@pytest.fixture
def plot(qtbot) -> TimelinePlot:
    widget = TimelinePlot(lambda x0, x1, width: _batch())
    qtbot.addWidget(widget)
    widget.resize(800, 300)
    widget.set_lanes(["IPU 0", "IPU 1"], lambda x0, x1, width: _batch(), (0, 100))
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _pixel_at(widget: TimelinePlot, x: float, y: float) -> tuple[int, int, int]:
    image = widget.grab().toImage()
    point = widget.mapFromScene(widget.view_box.mapViewToScene(QPointF(x, y)))
    color = image.pixelColor(point.x(), point.y())
    return color.red(), color.green(), color.blue()


def test_the_chart_draws_spans_in_their_lanes_and_colours(plot: TimelinePlot) -> None:
    assert _pixel_at(plot, 20, 0.4) == RED[:3]
    assert _pixel_at(plot, 20, 1.4) == GREEN[:3]
    assert _pixel_at(plot, 60, 0.4) == (255, 255, 255)  # nothing there: the background
    assert plot.lane_axis.names == ["IPU 0", "IPU 1"]


def test_clicks_and_keys(qtbot, plot: TimelinePlot) -> None:
    clicked: list[tuple[int, bool]] = []
    plot.span_clicked.connect(lambda i, shift: clicked.append((i, shift)))
    point = plot.mapFromScene(plot.view_box.mapViewToScene(QPointF(20, 1.4)))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseClick(
        plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, point
    )
    assert clicked == [(2, False), (2, True)]
    plot.setFocus()
    qtbot.keyClick(plot, Qt.Key.Key_W)
    x0, x1 = plot.x_range
    assert x1 - x0 == pytest.approx(80)
    assert (x0, x1) == pytest.approx((10, 90))  # about the centre
    qtbot.keyClick(plot, Qt.Key.Key_A)
    assert plot.x_range == pytest.approx((0, 80))  # 16 to the left, stopped at the start
    qtbot.keyClick(plot, Qt.Key.Key_D)
    assert plot.x_range == pytest.approx((16, 96))
    qtbot.keyClick(plot, Qt.Key.Key_Home)
    assert plot.x_range == pytest.approx((0, 100))


def test_a_clock_axis_shows_utc_time_of_day(plot: TimelinePlot) -> None:
    axis = plot.time_axis
    # 2026-01-02 03:04:05 UTC as epoch ns; value 1.5e9 ns later is 03:04:06.5
    epoch_ns = 1_767_323_045 * 10**9
    axis.set_clock(1e9, epoch_ns, "Wall clock (UTC)")
    assert axis.tickStrings([1.5e9], 1.0, 0.5e9) == ["03:04:06.500"]
    assert axis.tickStrings([2e9], 1.0, 1e9) == ["03:04:07"]
    axis.set_seconds(1e9)
    assert axis.clock_epoch_ns is None and axis.tickStrings([2e9], 1.0, 1e9) == ["2 s"]


def test_scrolled_lanes_are_drawn_in_their_own_colours(qtbot) -> None:
    """Only the lanes on screen are turned into pixels; scrolled ones keep their spans."""
    widget = TimelinePlot(lambda x0, x1, width: _batch())
    qtbot.addWidget(widget)
    widget.resize(800, 300)
    widget.set_lanes(["a", "b", "c"], lambda x0, x1, width: _batch(), (0, 100))
    widget.show()
    qtbot.waitExposed(widget)
    widget.view_box.setYRange(1, 3, padding=0)  # lane 0 scrolled off the top
    assert _pixel_at(widget, 20, 1.4) == GREEN[:3]
    assert _pixel_at(widget, 20, 2.4) == (255, 255, 255)  # lane 2 has no spans
