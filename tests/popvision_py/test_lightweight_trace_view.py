"""The Execution Trace's Lightweight mode (issue 43) as a user drives it: offered only for
reports with blocks, it draws every execution (runs x blocks) per IPU -- the spans and their
labels counted by hand from the tutorial's pipeline -- with a Blocks tab of totals; a report
with a lightweight profile alone opens in it; a damaged blocks section is said there while
the detailed trace and the other pages still work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from popvision_py.views.execution_trace.lightweight import DETAILED, LIGHTWEIGHT
from popvision_py.views.execution_trace.view import ExecutionTraceView
from profiler_core.formats.profile_pop import read_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message
from tests.lightweight_reports import example, lightweight_report
from tests.popvision_py.conftest import SCREENSHOTS, open_with_file_menu


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lightweight")
    return {name: lightweight_report(folder, name) for name in ("pipeline", "streamed")}


def trace_of(qtbot, window, folder, monkeypatch) -> ExecutionTraceView:
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    window.show_view("Execution Trace")
    view = window.view("Execution Trace")
    assert not view.showing_message(), view.message.text()
    return view


def drawn(view: ExecutionTraceView):
    """What the Lightweight chart drew on its last paint (laid out as the user sees it)."""
    QApplication.processEvents()
    plot = view.lightweight.trace.plot
    plot.show_all()
    plot.grab()
    return plot.spans.batch


def test_lightweight_mode_draws_every_execution_per_ipu(qtbot, window, reports, monkeypatch):
    view = trace_of(qtbot, window, reports["pipeline"], monkeypatch)
    mode = view.lightweight
    assert mode.box.isVisible() and mode.box.currentText() == DETAILED  # offered, not forced
    assert view.plot.isVisible() and not mode.trace.isVisible()
    mode.set_mode(LIGHTWEIGHT)
    assert mode.trace.isVisible() and not view.plot.isVisible()
    assert not view.control_bar.isVisible()
    plot = mode.trace.plot
    assert plot.lane_axis.names == ["Runs", "IPU 0", "IPU 0 level 2", "IPU 1", "IPU 1 level 2"]
    batch = drawn(view)
    # by hand: one run; 5 repeats x (stage1 on IPU 0, op2 inside it; stage2 on IPU 1, op2)
    assert len(batch) == 1 + 4 * 5
    lanes = batch.lane.tolist()
    assert [lanes.count(lane) for lane in range(5)] == [1, 5, 5, 5, 5]
    labels = list(batch.labels)
    assert labels[0] == "Run 0: pipeline"
    assert sorted(set(labels[1:])) == ["op2", "stage1", "stage2"]
    assert {labels[i] for i in np.flatnonzero(batch.lane == 1)} == {"stage1"}
    assert {labels[i] for i in np.flatnonzero(batch.lane == 3)} == {"stage2"}
    assert {labels[i] for i in np.flatnonzero((batch.lane == 2) | (batch.lane == 4))} == {"op2"}
    work = example().WORK_CYCLES
    stage = batch.end[batch.lane == 1] - batch.start[batch.lane == 1]
    assert stage.tolist() == [2 * work] * 5
    # the Blocks tab: totals per block and IPU
    table = mode.panel.table_model.table
    assert view.details.currentWidget() is mode.panel
    rows = {(table.display(r, 0), table.display(r, 2)): r for r in range(len(table))}
    assert set(rows) == {("op2", "0"), ("op2", "1"), ("stage1", "0"), ("stage2", "1")}
    assert table.display(rows[("stage1", "0")], 3) == "5"
    assert table.display(rows[("stage1", "0")], 4) == f"{5 * 2 * work:,}"
    mode.set_mode(DETAILED)
    assert view.plot.isVisible() and view.control_bar.isVisible()
    assert view.details.currentWidget() is not mode.panel


def test_zoomed_out_executions_merge_below_a_pixel_and_hover_names_one(
    qtbot, window, reports, monkeypatch
):
    view = trace_of(qtbot, window, reports["streamed"], monkeypatch)
    view.lightweight.set_mode(LIGHTWEIGHT)
    plot = view.lightweight.trace.plot
    assert plot.lane_axis.names == ["Runs", "IPU 0", "IPU 0 StreamCopy"]
    batch = drawn(view)
    copies = np.flatnonzero(batch.lane == 2)
    # five Copy(stream, in1), each in three phases, every one drawn (a 1-cycle
    # StreamCopyMid is a pixel wide between its Begin and End)
    assert [batch.labels[i] for i in copies[:3]] == ["Begin in", "Mid in", "End in"]
    assert len(copies) == 15
    # 20 pixels for the run: phases shorter than a pixel and under a pixel apart merge
    model = view.lightweight.trace.model
    narrow = model.spans(*model.x_limits, 20)
    merged = np.flatnonzero((narrow.lane == 2) & (narrow.key < 0))
    assert len(merged) and {narrow.labels[i] for i in merged} <= {
        f"{n} executions" for n in range(2, 16)
    }
    assert sum(model.last_count[i] for i in np.flatnonzero(narrow.lane == 2)) == 15
    batch = drawn(view)
    # zoomed to the first operation, it is one span with its name and cycles on hover
    first = int(np.flatnonzero(batch.lane == 1)[0])
    start, end = batch.start[first], batch.end[first]
    plot.set_x_range(start - 10, end + 10)
    plot.grab()
    batch = plot.spans.batch
    index = int(np.flatnonzero(batch.lane == 1)[0])
    assert batch.labels[index] == "operation"
    text = model.tooltip(index)
    assert text.startswith("operation (Program): execution 0 in run 0")
    assert f"{example().WORK_CYCLES:,} cycles" in text


def test_a_report_without_blocks_offers_no_lightweight_mode(opened_window):
    opened_window.show_view("Execution Trace")
    view = opened_window.view("Execution Trace")
    assert not view.lightweight.box.isVisible() and not view.lightweight.label.isVisible()
    assert view.lightweight.panel not in [view.details.widget(i) for i in _visible_tabs(view)]


def _visible_tabs(view) -> list[int]:
    return [i for i in range(view.details.count()) if view.details.isTabVisible(i)]


def test_a_lightweight_profile_alone_opens_in_the_lightweight_mode(
    qtbot, window, tmp_path, monkeypatch
):
    engine = example().run_example("growing")  # no autoReport: write only the blocks
    profile = engine.profile()
    profile.execution = None
    folder = tmp_path / "growing"
    folder.mkdir()
    write_message(folder / "profile.pop", build_message(profile))
    view = trace_of(qtbot, window, folder, monkeypatch)
    mode = view.lightweight
    assert mode.on and mode.trace.isVisible() and not mode.box.isVisible()
    assert mode.label.text() == "Mode: Lightweight"
    batch = drawn(view)
    assert list(batch.labels) == ["Run 0: growing"] + ["operation"] * 5
    cycles = (batch.end - batch.start)[1:]
    assert (np.diff(cycles) > 0).all()  # every execution, each longer than the last


def test_a_damaged_blocks_section_is_said_in_the_mode_and_the_rest_works(
    qtbot, window, reports, tmp_path, monkeypatch
):
    folder = tmp_path / "damaged"
    folder.mkdir()
    message = build_message(read_profile(reports["pipeline"] / "profile.pop"))
    message.blocks.execStart.dtype = ">i8"  # a dtype no reader accepts
    write_message(folder / "profile.pop", message)
    view = trace_of(qtbot, window, folder, monkeypatch)
    assert "lightweight profile" in window.statusBar().currentMessage()
    assert len(view.plot.spans.batch) or view.model is not None  # the detailed trace works
    view.lightweight.set_mode(LIGHTWEIGHT)
    trace = view.lightweight.trace
    assert trace.message.isVisible() and not trace.plot.isVisible()
    assert "section 'blocks'" in trace.message.text()
    window.show_view("Summary")
    assert window.view("Summary").value("Program", "Program") == "pipeline"
    for page in ("Memory", "Program Tree"):
        window.show_view(page)
        assert not window.view(page).showing_message(), page


def test_screenshot_of_the_lightweight_trace(qtbot, window, reports, monkeypatch):
    view = trace_of(qtbot, window, reports["pipeline"], monkeypatch)
    view.lightweight.set_mode(LIGHTWEIGHT)
    plot = view.lightweight.trace.plot
    plot.show_all()
    batch = drawn(view)
    index = int(np.flatnonzero(batch.lane == 1)[0])
    point = plot.mapFromScene(plot.view_box.mapViewToScene(QPointF(batch.start[index] + 10, 1.4)))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert view.lightweight.panel.selected.text().startswith("stage1 (Block): execution 0")
    SCREENSHOTS.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        window.set_theme(theme)
        plot.apply_colors()
        QApplication.processEvents()
        path = SCREENSHOTS / f"lightweight-trace-pipeline-{theme}.png"
        assert window.grab().save(str(path))


def test_screenshots_of_two_runs_and_of_stream_copies(
    qtbot, window, reports, tmp_path, monkeypatch
):
    engine = example().run_example("growing", str(tmp_path))
    engine.run(0)  # a second kept run: the report is written again with both
    for name, folder, lanes in (
        ("growing", Path(engine.report_folder), ["Runs", "IPU 0"]),
        ("streamed", reports["streamed"], ["Runs", "IPU 0", "IPU 0 StreamCopy"]),
    ):
        view = trace_of(qtbot, window, folder, monkeypatch)
        view.lightweight.set_mode(LIGHTWEIGHT)
        assert view.lightweight.trace.plot.lane_axis.names == lanes
        batch = drawn(view)
        if name == "growing":  # two runs of five executions, each longer than the last
            assert list(batch.labels[:2]) == ["Run 0: growing", "Run 1: growing"]
            assert len(batch) == 2 + 10
        QApplication.processEvents()
        assert window.grab().save(str(SCREENSHOTS / f"lightweight-trace-{name}-light.png"))
