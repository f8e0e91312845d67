"""The System Trace page driven through the window on the trace of the bundled
pvti_epochs.py example: what the timeline, instants, series, heatmap, search, details and
call tree show, the ways in (File > Open trace…, drag-and-drop, command line, a report's
folder), bad input, and screenshots."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from popvision_py.app.main_window import MainWindow
from popvision_py.app.screenshots import save_system_trace_screenshots
from popvision_py.views.system_trace.view import SystemTraceView
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import export_chrome, open_trace
from tests.popvision_py.conftest import open_with_file_menu
from tests.popvision_py.test_system_trace_model import write_half_written_trace

ROOT = Path(__file__).resolve().parents[2]


def wait_trace(qtbot, window: MainWindow, timeout: int = 20_000) -> None:
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=timeout)


def open_trace_with_menu(qtbot, window: MainWindow, path: Path) -> SystemTraceView:
    """File > Open trace…, ``path`` picked in the dialog, then wait for the worker."""
    window.traces.action.trigger()
    dialog = window.traces.dialog
    assert dialog.isVisible()
    dialog.selectFile(str(path))
    dialog.accept()
    assert window.traces.loader.busy  # read off the GUI thread
    wait_trace(qtbot, window)
    return window.traces.view


@pytest.fixture
def trace_window(qtbot, window: MainWindow, pvti_epochs_trace: Path) -> MainWindow:
    view = open_trace_with_menu(qtbot, window, pvti_epochs_trace)
    assert window.current_view() is view and view.model is not None
    qtbot.wait(50)
    window.grab()  # paint once, so the timeline has drawn its spans
    return window


def drawn_keys(view: SystemTraceView) -> np.ndarray:
    view.window().grab()
    batch = view.timeline.spans.batch
    return batch.key


def click_data(qtbot, plot, x: float, y: float, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    scene = plot.getPlotItem().getViewBox().mapViewToScene(QPointF(x, y))
    pos = plot.mapFromScene(scene)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, modifier, pos)


def test_tracks_and_their_spans_equal_the_trace(trace_window: MainWindow, pvti_epochs_trace):
    view = trace_window.traces.view
    trace = open_trace(pvti_epochs_trace)
    names = [n for n in view.timeline.lane_axis.names if not n.startswith("↳")]
    assert names == sorted(t.name for t in trace.threads)
    keys = drawn_keys(view)
    assert (keys >= 0).all()  # the whole trace at 1400 px: no span shares a pixel
    lane = view.timeline.spans.batch.lane
    for t, thread in enumerate(trace.threads):
        spans = (trace.thread == t) & (trace.kind != EventKind.INSTANT)
        first = view.timeline.lane_axis.names.index(thread.name)
        lanes = int(trace.max_depth()[t]) + 1
        shown = keys[(lane >= first) & (lane < first + lanes)]
        # Same number of spans per track, and the same labels and starts.
        assert len(shown) == spans.sum()
        got = sorted(
            (view.model.trace.label_of(int(k)), int(view.model.trace.start_ns[k])) for k in shown
        )
        expected = sorted(
            (trace.label_of(int(e)), int(trace.start_ns[e])) for e in np.flatnonzero(spans)
        )
        assert got == expected


def test_series_and_heatmap_show_the_traces_values(trace_window: MainWindow, pvti_epochs_trace):
    view = trace_window.traces.view
    trace = open_trace(pvti_epochs_trace)
    (series,) = view.series_plots
    x, y = series.shown_points("Training Loss")
    t, values = trace.series["Loss"]["Training Loss"]
    assert y.tolist() == values.tolist()  # 12 samples: drawn as they are
    assert (x - x.min()).tolist() == (t - t.min()).tolist()
    (heat,) = view.heatmap_plots
    assert heat.names == ["< 0", "0 – 0.5", "0.5 – 1", "≥ 1"]
    shown = heat.last[:, ~np.isnan(heat.last).any(axis=0)]
    counts = trace.heatmaps["weights"].counts
    assert {tuple(c) for c in shown.T.astype(int).tolist()} == {tuple(c) for c in counts.tolist()}
    view.control_bar.area.setChecked(True)
    assert series.curves["Training Loss"].opts["fillLevel"] == 0.0


def test_search_steps_through_every_epoch_in_time_order(qtbot, trace_window: MainWindow):
    view = trace_window.traces.view
    trace = view.model.trace
    qtbot.keyClicks(view.control_bar.search_box, "epoch")
    labels = np.array([trace.label_of(i).lower() for i in range(len(trace))])
    expected = np.flatnonzero(np.char.find(labels.astype(str), "epoch") >= 0)
    expected = expected[np.argsort(trace.start_ns[expected], kind="stable")]
    visited = []
    for k in range(len(expected)):
        qtbot.keyClick(view.control_bar.search_box, Qt.Key.Key_Return)
        event = view.selected
        visited.append(event)
        x0, x1 = view.timeline.x_range
        assert x0 <= trace.start_ns[event] <= x1  # scrolled and zoomed to it
        assert view.control_bar.matches.text() == f"{k + 1} of {len(expected)}"
        assert view.event_details.value("Label") == trace.label_of(event)
    assert visited == expected.tolist()
    spans = [trace.label_of(e) for e in visited if trace.kind[e] != EventKind.INSTANT]
    assert spans == ["Epoch:0", "Epoch:1", "Epoch:2"]
    qtbot.mouseClick(view.control_bar.previous, Qt.MouseButton.LeftButton)
    assert view.selected == expected[-2]


def test_clicking_a_span_and_an_instant_shows_their_details(qtbot, trace_window: MainWindow):
    view = trace_window.traces.view
    trace = view.model.trace
    epoch = int(view.model.search("Epoch:1")[0])
    row = view.model.row_of(epoch)
    middle = (trace.start_ns[epoch] + trace.end_ns[epoch]) / 2
    click_data(qtbot, view.timeline, middle, row + 0.4)
    assert view.selected == epoch
    assert view.event_details.value("Label") == "Epoch:1"
    assert view.event_details.value("Children") == "4"
    assert epoch in view.timeline.spans.highlight_keys
    instant = int(view.model.search("Epoch 2 begin")[0])
    click_data(qtbot, view.instants, float(trace.start_ns[instant]), 0.5)
    assert view.selected == instant
    assert view.event_details.value("Kind") == "instant"


def test_call_tree_of_all_and_of_a_selected_range(qtbot, trace_window: MainWindow):
    view = trace_window.traces.view
    trace = view.model.trace
    view.details.setCurrentWidget(view.call_tree)
    tree = view.call_tree.tree
    rows = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    assert {"Epoch:0", "Epoch:1", "Epoch:2", "Load batch"} <= set(rows)
    epoch = int(view.model.search("Epoch:0")[0])
    node = rows["Epoch:0"].data(0, Qt.ItemDataRole.UserRole)
    assert view.call_tree.call_tree.total[node] == trace.end_ns[epoch] - trace.start_ns[epoch]
    assert rows["Epoch:0"].child(0).text(0) == "Step" and rows["Epoch:0"].child(0).text(3) == "4"
    qtbot.mouseClick(view.control_bar.select_range, Qt.MouseButton.LeftButton)
    assert view.region is not None
    t0, t1 = float(trace.start_ns[epoch]), float(trace.end_ns[epoch])
    view.set_selection_range(t0, t1)
    assert view.call_tree.scope.text().startswith("The selected range")
    top = {tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())}
    assert "Epoch:0" in top and "Epoch:2" not in top
    count = view.model.range_summary(t0, t1)[1]
    assert view.control_bar.range_info.text().endswith(f"{count:,} events")


def test_pin_collapse_merge_and_channels_from_the_menus(trace_window: MainWindow):
    view = trace_window.traces.view
    names = lambda: [n for n in view.timeline.lane_axis.names if not n.startswith("↳")]  # noqa: E731
    view.track_action("Pin Prefetch").setChecked(True)
    assert names()[0] == "Prefetch"
    view.track_action("Pin Prefetch").setChecked(False)
    view.track_action("Collapse").setChecked(True)
    assert len(view.timeline.lane_axis.names) == 1 and names()[0].startswith("▸ pvti_epochs")
    view.track_action("Collapse").setChecked(False)
    view.control_bar.merge_all.setChecked(True)
    assert view.timeline.lane_axis.names == ["All threads", "↳ depth 1"]
    view.control_bar.merge_all.setChecked(False)
    view.channel_action("Data").setChecked(False)
    assert names() == ["MainThread"]
    keys = drawn_keys(view)
    assert not any(view.model.trace.label_of(int(k)) == "Load batch" for k in keys if k >= 0)


def test_typed_range_keys_and_absolute_time(qtbot, trace_window: MainWindow):
    view = trace_window.traces.view
    lo, _ = view.model.time_limits()
    view.control_bar.range_box.setText("0.5-1.5")
    qtbot.keyClick(view.control_bar.range_box, Qt.Key.Key_Return)
    x0, x1 = view.timeline.x_range
    assert x0 == pytest.approx(lo + 0.5e6) and x1 == pytest.approx(lo + 1.5e6)
    view.timeline.setFocus()
    qtbot.keyClick(view.timeline, Qt.Key.Key_W)
    assert view.timeline.x_range[1] - view.timeline.x_range[0] == pytest.approx(0.8e6)
    view.type_range("nonsense")
    assert "not a range" in view.control_bar.range_error.text()
    view.control_bar.absolute.setChecked(True)
    axis = view.timeline.time_axis
    text = axis.tickStrings([x0], 1.0, 1e5)[0]
    assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{6}", text)  # 0.1 ms ticks: µs digits
    view.control_bar.absolute.setChecked(False)
    assert axis.tickStrings([lo + 1e6], 1.0, 1e5)[0] == "1.0 ms"


def test_a_sub_microsecond_span_is_drawn_and_says_under_a_microsecond(qtbot, window, tmp_path):
    doc = {
        "traceEvents": [
            {
                "ph": "X",
                "name": "long",
                "ts": 0,
                "dur": 5000,
                "pid": 1,
                "tid": 1,
                "args": {"step": 7, "phase": "fwd"},
            },
            {"ph": "X", "name": "tiny", "ts": 2500, "dur": 0.3, "pid": 1, "tid": 2},
        ]
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc))
    view = open_trace_with_menu(qtbot, window, path)
    tiny = int(view.model.search("tiny")[0])
    assert tiny in drawn_keys(view).tolist()  # one pixel wide at 5 ms over ~1200 px
    row = view.model.row_of(tiny)
    scene = view.timeline.view_box.mapViewToScene(QPointF(2_500_150.0, row + 0.4))
    qtbot.mouseMove(view.timeline.viewport(), view.timeline.mapFromScene(scene))
    qtbot.waitUntil(lambda: view.hover_text != "", timeout=2000)
    assert view.hover_text == "tiny\n<1 µs (300 ns)"  # the tooltip
    view.select_event(tiny)
    assert view.event_details.value("Duration") == "<1 µs (300 ns)"
    long = int(view.model.search("long")[0])
    view.select_event(long)
    assert view.event_details.value("Argument step") == "7"
    assert view.event_details.value("Argument phase") == '"fwd"'


def test_a_chrome_export_reopens_with_the_same_spans(qtbot, window, pvti_epochs_trace, tmp_path):
    trace = open_trace(pvti_epochs_trace)
    path = export_chrome(trace, tmp_path / "epochs.json")
    view = open_trace_with_menu(qtbot, window, path)
    again = view.model.trace
    keys = drawn_keys(view)
    got = sorted(
        (again.label_of(int(k)), int(again.start_ns[k] - again.start_ns.min())) for k in keys
    )
    spans = np.flatnonzero(trace.kind != EventKind.INSTANT)
    first = trace.start_ns.min()
    assert got == sorted((trace.label_of(int(e)), int(trace.start_ns[e] - first)) for e in spans)


def test_drop_and_command_line_open_traces(qtbot, window, pvti_epochs_trace, tmp_path):
    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(pvti_epochs_trace))])
    drop = QDropEvent(
        QPoint(300, 300), Qt.DropAction.CopyAction, data, Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )  # fmt: skip
    window.dropEvent(drop)
    wait_trace(qtbot, window)
    assert window.traces.opened is not None and window.current_view() is window.traces.view
    result = subprocess.run(
        [sys.executable, "-m", "popvision_py", str(pvti_epochs_trace.parent),
         "--screenshot-dir", str(tmp_path / "shots")],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "systrace-flame-light.png" in result.stdout


def test_a_report_folder_shows_the_traces_beside_it(
    qtbot, window, tutorial4_report, pvti_epochs_trace, tmp_path, monkeypatch
):
    report = tmp_path / "report" / "tutorial4"
    shutil.copytree(tutorial4_report, report)
    shutil.copy(pvti_epochs_trace, report.parent / pvti_epochs_trace.name)
    open_with_file_menu(qtbot, window, report, monkeypatch)
    wait_trace(qtbot, window)
    view = window.traces.view
    assert view.model is not None and not view.showing_message()
    assert window.current_view() is window.view("Summary")  # the report's page stays


def test_a_half_written_trace_is_shown_and_called_incomplete(qtbot, window, tmp_path):
    path = write_half_written_trace(tmp_path)
    view = open_trace_with_menu(qtbot, window, path)
    assert view.banner.isVisible() and "incomplete" in view.banner.text()
    assert window.message_box is not None and "incomplete" in window.message_box.text()
    labels = sorted(view.model.trace.label_of(int(k)) for k in drawn_keys(view))
    assert labels == ["epoch", "step", "step", "step"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"hello": 1}', "traceEvents"),
        ("[" * 50_000 + "]" * 50_000, "no trace event could be read"),
        ("x" * 64, "neither"),
    ],
)
def test_bad_json_says_why_without_blocking(qtbot, window, tmp_path, content, expected):
    path = tmp_path / "bad.json"
    path.write_text(content)
    if expected == "neither":
        path = path.rename(tmp_path / "bad.pvti")
    open_trace_with_menu(qtbot, window, path)
    box = window.message_box
    assert box is not None and box.isVisible() and expected in box.text(), box.text()
    assert not box.isModal() or box.windowModality() == Qt.WindowModality.WindowModal
    window.show_view("System Trace")  # the window still answers
    assert window.current_view() is window.traces.view


def test_huge_json_is_refused_before_it_is_read(qtbot, window, tmp_path, monkeypatch):
    monkeypatch.setattr("popvision_py.viewmodels.trace_open.MAX_JSON_BYTES", 1000)
    path = tmp_path / "huge.json"
    path.write_text(json.dumps({"traceEvents": [{"ph": "i", "ts": i} for i in range(200)]}))
    open_trace_with_menu(qtbot, window, path)
    assert "over the" in window.message_box.text()


def test_a_truncated_pvti_shows_its_committed_events_and_says_it_is_incomplete(
    qtbot, window, pvti_epochs_trace, tmp_path
):
    path = tmp_path / "cut.pvti"
    data = pvti_epochs_trace.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])
    view = open_trace_with_menu(qtbot, window, path)
    expected = open_trace(path)
    assert 0 < len(expected) <= len(open_trace(pvti_epochs_trace))
    assert view.model is not None and len(view.model.trace) == len(expected)
    box = window.message_box
    assert box.windowTitle() == "The trace is incomplete"
    assert f"{path.name}: incomplete: the file is truncated" in box.text()
    assert view.banner.isVisible() and "truncated" in view.banner.text()


def test_theme_and_screenshots(qtbot, trace_window: MainWindow, screenshot_dir: Path):
    view = trace_window.traces.view
    saved = save_system_trace_screenshots(trace_window, screenshot_dir)
    assert len(saved) == 8 and all(p.stat().st_size > 10_000 for p in saved)
    trace_window.set_theme("dark")
    qtbot.wait(20)
    image = view.timeline.grab().toImage()
    corner = image.pixelColor(3, image.height() - 3)  # below the lane names
    assert corner.lightness() < 80  # dark chart background
    trace_window.set_theme("light")


def test_cancel_stops_a_trace_load_and_keeps_what_is_shown(qtbot, window, pvti_epochs_trace):
    window.open_paths([pvti_epochs_trace])
    assert window.traces.loader.busy and window.cancel_button.isVisible()
    qtbot.mouseClick(window.cancel_button, Qt.MouseButton.LeftButton)
    wait_trace(qtbot, window)
    assert window.traces.opened is None and window.traces.view.model is None
    assert "cancelled" in window.statusBar().currentMessage()
    assert not window.cancel_button.isVisible()


def test_many_threads_scroll_through_their_lanes(qtbot, window, tmp_path):
    events = [
        {"ph": "X", "name": f"work {t}", "ts": t, "dur": 100, "pid": 1, "tid": t} for t in range(40)
    ]
    path = tmp_path / "threads.json"
    path.write_text(json.dumps({"traceEvents": events}))
    view = open_trace_with_menu(qtbot, window, path)
    assert len(view.timeline.lane_axis.names) == 40
    assert view.timeline.lane_axis.names[:3] == ["Thread 0", "Thread 1", "Thread 2"]  # not 10
    assert not view.instants.isVisible()  # no instants: no empty marker row
    assert view.lane_scroll.isVisible() and view.lane_scroll.maximum() == 40 - 24
    (_, (y0, y1)) = view.timeline.view_box.viewRange()
    assert (y0, y1) == pytest.approx((0, 24))
    view.lane_scroll.setValue(16)
    (_, (y0, y1)) = view.timeline.view_box.viewRange()
    assert (y0, y1) == pytest.approx((16, 40))
    keys = drawn_keys(view)
    labels = {view.model.trace.label_of(int(k)) for k in keys}
    assert "work 39" in labels and "work 0" not in labels  # only the lanes on screen
