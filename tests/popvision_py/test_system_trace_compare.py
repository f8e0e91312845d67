"""System Trace compare: ``--compare A B`` of two traced tutorial-4 runs stacks A's and B's
host traces on one synced time axis from each one's first event, labelled with the A/B
names and colours; search, details and the call tree work on either side; a side without
a trace is named."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from popvision_py.app.main_window import MainWindow
from popvision_py.app.screenshots import save_system_trace_screenshots
from popvision_py.viewmodels.compare import A_COLOR, B_COLOR, pair_of
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import open_trace
from tests.conftest import run_example
from tests.popvision_py.conftest import wait_loaded


def run_traced(directory: Path, *args: str) -> Path:
    """Tutorial 4 with autoReport and PVTI_OPTIONS both on, as ``make run`` runs it: the
    report folder, with the .pvti written beside it."""
    options = {
        "POPLAR_ENGINE_OPTIONS": {"autoReport.all": "true", "autoReport.directory": str(directory)},
        "PVTI_OPTIONS": {"enable": "true", "directory": str(directory)},
    }
    run_example("tutorial4_matmul.py", options, *args)
    assert list(directory.glob("*.pvti")), "the run wrote no trace"
    return next(p for p in directory.iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def traced_reports(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    a = run_traced(tmp_path_factory.mktemp("traced_a"))
    b = run_traced(
        tmp_path_factory.mktemp("traced_b"), "--m1", "1600x700", "--m2", "700x300",
        "--name", "variant",
    )  # fmt: skip
    return a, b


def check_drawn(plot, model) -> None:
    """Every span the plot drew on its own is one of its lane's thread's spans, and every
    span at least 3 pixels wide is drawn on its own (narrower ones may merge)."""
    batch = plot.spans.batch
    trace = model.trace
    single = batch.key >= 0
    keys = batch.key[single]
    lanes_thread = np.array([model.rows[lane].thread for lane in batch.lane[single].tolist()])
    assert (trace.thread[keys] == lanes_thread).all()
    assert (trace.kind[keys] != EventKind.INSTANT).all()
    x0, x1 = plot.spans.batch_x  # the window the batch was drawn for
    pixel = (x1 - x0) / plot.spans.batch_width
    wide = np.flatnonzero((trace.kind != EventKind.INSTANT) & (trace.duration_ns >= 3 * pixel))
    assert len(wide) and set(wide.tolist()) <= set(keys.tolist())


def open_compared(qtbot, window: MainWindow, a: Path, b: Path):
    window.open_paths([a, b])
    wait_loaded(qtbot, window)
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=30_000)
    window.show_view("System Trace")
    view = window.traces.view
    window.grab()
    return view


def test_both_traces_stack_on_one_relative_synced_axis(qtbot, window, traced_reports):
    a, b = traced_reports
    view = open_compared(qtbot, window, a, b)
    assert view.compare is not None, view.banner.text()
    stacked = view.compare.stacked
    names = pair_of(*window.opened).names
    for title, letter, name, color in zip(
        stacked.titles, "AB", names, (A_COLOR, B_COLOR), strict=True
    ):
        assert f"{letter}: {name}" in title.text() and color in title.text()
    for k, folder in enumerate((a, b)):
        (pvti,) = sorted(folder.parent.glob("*.pvti"))
        expected = open_trace(pvti)  # profiler_core's own reading of that side's file
        model = view.compare.traces[k].model
        assert [t.name for t in model.trace.threads] == [t.name for t in expected.threads]
        spans = expected.kind != EventKind.INSTANT
        per_track = np.bincount(expected.thread[spans], minlength=len(expected.threads))
        shown = model.trace.kind != EventKind.INSTANT
        assert (np.bincount(model.trace.thread[shown], minlength=len(per_track)) == per_track).all()
        plot = stacked.plots[k]
        assert plot.lane_axis.names == model.lane_names()
        assert len(plot.spans.batch.start) > 0  # drawn
        check_drawn(plot, model)
        first = model.time_limits()[0]
        assert plot.time_axis.origin == first == float(expected.time_range()[0])
        assert plot.time_axis.tickStrings([first], 1.0, 1e6)[0].strip("0. ") in ("", "s", "ms")
        assert stacked.relative_range(k)[0] == pytest.approx(0.0, abs=1.0)  # both from 0
    longest = max(float(np.ptp(m.model.time_limits())) for m in view.compare.traces)
    assert stacked.relative_range(0) == pytest.approx((0.0, longest), abs=1.0)
    assert stacked.relative_range(1) == pytest.approx(stacked.relative_range(0))
    # Zooming or panning one side moves the other: the same time after each one's start.
    stacked.plots[1].zoom(0.25, anchor=stacked.sides[1].origin + longest / 2)
    stacked.plots[1].pan(0.1)
    zoomed = stacked.relative_range(1)
    assert zoomed[1] - zoomed[0] < longest / 2
    assert stacked.relative_range(0) == pytest.approx(zoomed, abs=1.0)
    stacked.plots[0].zoom(2.0)
    assert stacked.relative_range(1) == pytest.approx(stacked.relative_range(0), abs=1.0)


def test_search_details_and_call_tree_work_on_either_side(qtbot, window, traced_reports):
    view = open_compared(qtbot, window, *traced_reports)
    assert view.compare is not None
    for side in (1, 0):
        view.compare.side_box.setCurrentIndex(side)
        model = view.compare.traces[side].model
        assert view.model is model and view.timeline is view.compare.stacked.plots[side]
        label = model.trace.labels[int(model.trace.label[0])]
        view.control_bar.search_box.setText(label)
        view.step_match(1)
        matches = model.search(label)
        assert len(matches) and view.selected == int(matches[0])
        assert view.event_details.value("Label") == label
        assert view.event_details.value("Thread") == model.thread_title(
            int(model.trace.thread[matches[0]])
        )
        view.details.setCurrentWidget(view.call_tree)
        shown = view.call_tree.tree.topLevelItem(0)
        assert shown is not None and view.call_tree.call_tree is not None
        assert view.call_tree.call_tree is not None and len(model.trace.labels) > 0
        view.details.setCurrentWidget(view.event_details)


def test_a_side_without_a_trace_is_named(qtbot, window, traced_reports, tutorial4_variant_report):
    view = open_compared(qtbot, window, traced_reports[0], tutorial4_variant_report)
    names = pair_of(*window.opened).names
    assert view.compare is None and view.model is not None  # A's trace alone
    assert view.banner.isVisible()
    assert f"Report B ({names[1]}) has no host trace" in view.banner.text()


def test_compare_screenshots_light_and_dark(qtbot, window, traced_reports, screenshot_dir):
    view = open_compared(qtbot, window, *traced_reports)
    saved = save_system_trace_screenshots(window, screenshot_dir, "compare-")
    assert [p.name for p in saved] == [
        "compare-systrace-compare-light.png", "compare-systrace-compare-dark.png",
        "compare-systrace-compare-zoomed-light.png", "compare-systrace-compare-zoomed-dark.png",
    ]  # fmt: skip
    assert all(p.stat().st_size > 10_000 for p in saved)
    assert view.compare is not None


def test_popvision_compare_on_the_command_line_stacks_the_traces(traced_reports, tmp_path):
    """``popvision --compare A B --screenshot-dir``: the window opens both reports and their
    traces and saves the System Trace compare screenshots (no page fails)."""
    a, b = traced_reports
    result = subprocess.run(
        [sys.executable, "-m", "popvision_py", "--compare", str(a), str(b),
         "--screenshot-dir", str(tmp_path), "--settings", str(tmp_path / "settings.ini")],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("systrace-compare-light", "systrace-compare-zoomed-dark"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000


def test_a_single_trace_opened_after_a_comparison_gets_the_one_timeline_back(
    qtbot, window, traced_reports
):
    view = open_compared(qtbot, window, *traced_reports)
    assert view.compare is not None
    (pvti,) = sorted(traced_reports[0].parent.glob("*.pvti"))
    window.traces.open([pvti])
    qtbot.waitUntil(lambda: not window.traces.loader.busy, timeout=30_000)
    assert view.compare is None and view.timeline is view.single_timeline
    assert view.timeline.isVisible() and view.control_bar.merge_all.isEnabled()
    assert len(view.model.trace) == len(open_trace(pvti))
