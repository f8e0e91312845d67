"""The System Trace shows what a Chrome trace holds beyond spans (issue 28): tracks in the
trace's sort order with the global row first and async tracks labelled, lane names elided
in the middle (never dropped) with the full name as tooltip, flow arrows that the details
panel follows, counters as steps with NaN gaps, and the trace's warnings in the banner.
Expected values are written by hand from the JSON below."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage

from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.viewmodels.trace_flows import flow_arrows
from popvision_py.viewmodels.trace_open import OpenedTrace
from popvision_py.views.system_trace.charts import SeriesPlot
from popvision_py.views.system_trace.view import SystemTraceView
from profiler_core.trace import import_chrome_file

LONG = "data_loader_worker_pool_number_seven_of_the_training_job_that_reads_shards"
EVENTS = [
    {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": LONG}},
    {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "consumers"}},
    {"ph": "M", "name": "process_sort_index", "pid": 1, "args": {"sort_index": 5}},
    {"ph": "M", "name": "process_sort_index", "pid": 2, "args": {"sort_index": 1}},
    {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 20, "args": {"sort_index": 0}},
    {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 10, "args": {"sort_index": 1}},
    {"ph": "X", "name": "producer", "ts": 0, "dur": 10, "pid": 1, "tid": 10,
     "bind_id": 7, "flow_out": True},
    {"ph": "X", "name": "consumer", "ts": 20, "dur": 10, "pid": 2, "tid": 1,
     "bind_id": 7, "flow_in": True},
    {"ph": "X", "name": "late", "ts": 40, "dur": 20, "pid": 1, "tid": 20},
    {"ph": "b", "name": "request", "cat": "net", "id": "0x1", "ts": 5, "pid": 1},
    {"ph": "e", "name": "request", "cat": "net", "id": "0x1", "ts": 35, "pid": 1},
    {"ph": "i", "name": "epoch", "ts": 50, "pid": 1, "tid": 10, "s": "g"},
    {"ph": "C", "name": "queue", "ts": 0, "pid": 1, "args": {"depth": 1}},
    {"ph": "C", "name": "queue", "ts": 10, "pid": 1, "args": {"depth": 3}},
    {"ph": "C", "name": "queue", "ts": 30, "pid": 1, "args": {"depth": 2}},
    {"ph": "N", "name": "an object", "id": "0x2", "ts": 1, "pid": 1},
]  # fmt: skip
# By hand: pid 2 (sort index 1) before pid 1 (5); in pid 1, tid 20 (thread sort 0) before
# tid 10 (1), then its async track. The global row (first among the tracks) holds only
# instants: they are drawn on the Instants chart above every lane.
LANES = [
    "consumers · Thread 1",
    f"{LONG} · Thread 20",
    f"{LONG} · Thread 10",
    f"{LONG} · async · request (0x1)",
]


@pytest.fixture
def view(qtbot, tmp_path: Path) -> SystemTraceView:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"traceEvents": EVENTS}))
    view = SystemTraceView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show_trace(OpenedTrace([path], SystemTraceModel(import_chrome_file(path))))
    view.show()
    qtbot.waitExposed(view)
    view.timeline.viewport().repaint()
    return view


def event_named(view: SystemTraceView, name: str) -> int:
    trace = view.model.trace
    return next(i for i in range(len(trace)) if trace.label_of(i) == name)


def lane_y(view: SystemTraceView, lane: int) -> int:
    """The timeline viewport's pixel row through the middle of ``lane``."""
    scene = view.timeline.view_box.mapViewToScene(QPointF(0, lane + 0.44))
    return int(view.timeline.mapFromScene(scene).y())


def test_tracks_follow_the_sort_indexes_global_first_async_labelled(view: SystemTraceView):
    assert view.model.lane_names() == LANES
    assert view.timeline.lane_axis.names == LANES
    trace = view.model.trace
    assert trace.threads[0].kind == "global"
    epoch = event_named(view, "epoch")
    assert trace.thread[epoch] == 0 and view.model.instant_events.tolist() == [epoch]
    assert view.instants.isVisible() and view.instants.item.columns.sum() == 1


def test_pvti_tracks_keep_their_natural_name_order(pvti_epochs_trace: Path):
    from profiler_core.trace import open_trace

    trace = open_trace(pvti_epochs_trace)
    assert not trace.tracks_in_order
    model = SystemTraceModel(trace)
    names = [trace.threads[t].name for t in model.thread_order()]
    ipus = [n for n in names if n.startswith("IPU")]
    assert ipus == sorted(ipus, key=lambda n: int(n.split()[1]))


def test_a_long_lane_name_is_elided_in_the_middle_with_the_full_name_as_tooltip(
    qtbot, view: SystemTraceView
):
    axis = view.timeline.lane_axis
    assert axis.width() <= view.width() // 3 + 1  # capped at a third of the page
    shown = axis.shown_name(2)
    assert "…" in shown and shown.startswith(LONG[:4]) and shown.endswith("Thread 10")
    assert axis.metrics().horizontalAdvance(shown) <= axis.width()
    assert axis.shown_name(0) == "consumers · Thread 1"  # short names whole
    # every chart's left axis as wide, so times line up
    assert all(p.plot_item.getAxis("left").width() == axis.width() for p in view.linked_plots())
    # the name is drawn: ink in the name column on lane 3's row
    image = view.timeline.grab().toImage()
    y = lane_y(view, 2)
    background = QColor(image.pixel(2, 2))
    inked = [x for x in range(int(axis.width())) if QColor(image.pixel(x, y)) != background]
    assert len(inked) > 20
    # hovering the name column shows the whole name
    middle = axis.sceneBoundingRect().center().x()
    scene_y = view.timeline.view_box.mapViewToScene(QPointF(0, 2.4)).y()
    view.timeline._on_mouse_moved(QPointF(middle, scene_y))
    assert view.timeline.lane_tooltip == LANES[2]


def test_the_label_column_sizes_to_short_names(qtbot, tmp_path: Path):
    path = tmp_path / "short.json"
    path.write_text(json.dumps([{"ph": "X", "name": "a", "ts": 0, "dur": 1, "pid": 1, "tid": 1}]))
    view = SystemTraceView()
    qtbot.addWidget(view)
    view.resize(1200, 800)
    view.show_trace(OpenedTrace([path], SystemTraceModel(import_chrome_file(path))))
    view.show()
    qtbot.waitExposed(view)
    axis = view.timeline.lane_axis
    text = axis.metrics().horizontalAdvance("Thread 1")
    assert text < axis.width() < 140  # narrower than the old fixed column, room for the name


def test_flow_arrow_runs_from_the_source_end_to_the_target_start(view: SystemTraceView):
    arrows = view.flow_item.arrows
    assert len(arrows) == 1
    origin = view.model.time_limits()[0]  # the first event, ts 0
    assert arrows.x0[0] - origin == 10_000 and arrows.x1[0] - origin == 20_000  # ns, by hand
    assert (int(arrows.row0[0]), int(arrows.row1[0])) == (2, 0)  # Thread 10 -> consumers
    # drawn: the arrow's middle (15 µs, on lane 1 whose span starts at 40 µs) is inked
    image = view.timeline.grab().toImage()
    vb = view.timeline.view_box
    a = view.timeline.mapFromScene(vb.mapViewToScene(QPointF(arrows.x0[0], 2.44)))
    b = view.timeline.mapFromScene(vb.mapViewToScene(QPointF(arrows.x1[0], 0.44)))
    mid_x, mid_y = (a.x() + b.x()) // 2, (a.y() + b.y()) // 2
    background = QColor(image.pixel(mid_x, mid_y + 15))  # lane 1, empty before 40 µs
    assert background == QColor(image.pixel(2, lane_y(view, 1)))
    near = [QColor(image.pixel(mid_x + dx, mid_y + dy)) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
    assert any(c != background for c in near)


def test_details_list_a_spans_flows_and_a_click_goes_to_the_other_end(qtbot, view):
    producer, consumer = event_named(view, "producer"), event_named(view, "consumer")
    view.select_event(producer)
    details = view.event_details
    assert details.value("Flow out →").startswith("consumer on consumers · Thread 1")
    assert view.flow_item.selected_flows.tolist() == [0]
    row = next(r for r in range(details.rowCount()) if details.item(r, 0).text() == "Flow out →")
    view.timeline.set_x_range(*view.model.time_limits())
    details.cellClicked.emit(row, 1)
    assert view.selected == consumer
    assert details.value("Flow in ←").startswith("producer on")
    x0, x1 = view.timeline.x_range
    assert x0 <= view.model.trace.start_ns[consumer] <= x1


def test_counters_are_drawn_as_steps(view: SystemTraceView):
    (plot,) = view.series_plots
    x, y = plot.drawn_steps("depth")
    origin = view.model.time_limits()[0]
    end = 60_000  # the trace ends with "late": 40 + 20 µs
    assert (x - origin).tolist() == [0, 10_000, 10_000, 30_000, 30_000, end]
    assert y.tolist() == [1, 1, 3, 3, 2, 2]


def test_a_nan_counter_value_is_a_gap(qtbot):
    t = np.array([0, 100, 200, 300], np.int64)
    values = np.array([1.0, np.nan, 2.0, 2.0])
    plot = SeriesPlot("g", "", {"s": (t, values)}, until=400)
    qtbot.addWidget(plot)
    plot.resize(500, 120)
    plot.show()
    qtbot.waitExposed(plot)
    plot.view_box.setXRange(0, 400, padding=0)
    plot.redraw()
    x, y = plot.drawn_steps("s")
    assert x.tolist() == [0, 100, 100, 200, 200, 300, 300, 400]
    assert np.isnan(y[2:4]).all() and y[[0, 1, 4, 5]].tolist() == [1, 1, 2, 2]
    image: QImage = plot.grab().toImage()

    def inked(v0: float, v1: float) -> int:
        a = plot.mapFromScene(plot.view_box.mapViewToScene(QPointF(v0, 0)))
        b = plot.mapFromScene(plot.view_box.mapViewToScene(QPointF(v1, 0)))
        background = QColor(image.pixel(a.x() + 3, 2))
        return sum(
            QColor(image.pixel(px, py)) != background
            for px in range(a.x() + 4, b.x() - 4)
            for py in range(4, image.height() - 4)
        )

    assert inked(0, 100) > 0 and inked(200, 300) > 0
    assert inked(100, 200) == 0  # the NaN interval draws nothing


def test_the_banner_says_what_the_trace_could_not_show(view: SystemTraceView):
    assert view.banner.isVisible()
    assert "tools.json: not shown: 1 object events (N/O/D)" in view.banner.text()


def test_screenshots_of_tools_traces(qtbot, view: SystemTraceView, screenshot_dir: Path):
    view.select_event(event_named(view, "producer"))
    view.timeline.viewport().repaint()
    for name in ("system_trace_chrome_tracks", "system_trace_flow_arrows"):
        assert view.grab().save(str(screenshot_dir / f"{name}.png"))


def test_many_flows_between_the_same_pixels_are_one_arrow_with_their_count(tmp_path: Path):
    # 300 producer/consumer pairs 1 µs apart, each bound by its own flow
    evs = []
    for i in range(300):
        evs.append({"ph": "X", "name": "p", "ts": i, "dur": 0.5, "pid": 1, "tid": 1,
                    "bind_id": i, "flow_out": True})  # fmt: skip
        evs.append({"ph": "X", "name": "c", "ts": i + 0.6, "dur": 0.3, "pid": 1, "tid": 2,
                    "bind_id": i, "flow_in": True})  # fmt: skip
    path = tmp_path / "many.json"
    path.write_text(json.dumps(evs))
    model = SystemTraceModel(import_chrome_file(path))
    trace = model.trace
    assert len(trace.flows) == 300
    lo, hi = model.time_limits()
    arrows = flow_arrows(trace, model.rows_of, lo, hi, 10, range(0, 24))
    # by hand: 10 px over 299.9 µs; tails at i + 0.5 µs, heads at i + 0.6 µs -> each
    # arrow's ends fall in the pixel of i (or the next), so at most ~2 arrows a pixel
    assert int(arrows.count.sum()) == 300 and len(arrows) <= 20
    assert set(arrows.row0.tolist()) == {0} and set(arrows.row1.tolist()) == {1}
    zoomed = flow_arrows(trace, model.rows_of, lo, lo + 10_000, 1000, range(0, 24))
    assert len(zoomed) == 10 and zoomed.count.tolist() == [1] * 10  # 10 µs: one each
    off_screen = flow_arrows(trace, model.rows_of, lo, hi, 10, range(1, 24))
    assert len(off_screen) == 0  # the tails' row is scrolled away
