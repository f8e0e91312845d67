"""Export CSV on the two pages that had none (issue 29): the Program Tree's lines as the CLI
lists them, and the System Trace's events, all or those of the selected range; and clearing
the System Trace's Range box shows the whole trace."""

from __future__ import annotations

import csv
import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from profiler_core.formats.pvti import EventKind
from profiler_core.report import open_report
from profiler_core.trace import open_trace
from tests.popvision_py.test_system_trace_view import open_trace_with_menu


@pytest.fixture
def trace_window(qtbot, window, pvti_epochs_trace):
    open_trace_with_menu(qtbot, window, pvti_epochs_trace)
    return window


def read_csv(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as stream:
        return list(csv.reader(stream))


def test_program_tree_exports_every_line_as_the_cli_lists_it(opened_window, tutorial4_report,
                                                              tmp_path):  # fmt: skip
    window = opened_window
    window.show_view("Program Tree")
    assert window.export_csv(tmp_path / "tree.csv")
    assert window.statusBar().currentMessage() == f"Saved {tmp_path / 'tree.csv'}"
    rows = read_csv(tmp_path / "tree.csv")
    assert rows[0] == ["Section", "Depth", "Name", "Kind", "Executions", "Cycles", "% of cycles"]
    done = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "program-tree", "--json", str(tutorial4_report)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    nodes = json.loads(done.stdout)["program_tree"]
    programs = open_report(tutorial4_report).programs
    assert len(rows) - 1 == len(nodes) + programs.num_steps  # every node and every step
    node_rows = [r for r in rows[1:] if r[3].lower() in {n["kind"] for n in nodes}]
    by_name = {(n["name"], n["kind"]): n for n in nodes}
    for row in node_rows:
        node = by_name[(row[2], row[3].lower())]
        assert (int(row[4]), int(row[5])) == (node["executions"], node["cycles"])
    # steps: cycles of the slowest IPU; together they are all the cycles, 100 %
    step_rows = [r for r in rows[1:] if (r[2], r[3].lower()) not in by_name]
    assert len(step_rows) == programs.num_steps
    expected = programs.step_cycles.max(axis=1)
    assert sum(int(r[5]) for r in step_rows) == int(expected.sum())
    assert sum(float(r[6]) for r in step_rows) == pytest.approx(100.0, abs=0.01)
    # parents come before their children: a depth grows by one at most
    depths = [int(r[1]) for r in rows[1:]]
    assert depths[0] == 0 and all(b <= a + 1 for a, b in itertools.pairwise(depths))


def test_system_trace_exports_all_events_then_those_of_the_selected_range(
    trace_window,
    pvti_epochs_trace,
    tmp_path,
):
    window = trace_window
    view = window.traces.view
    assert window.export_csv(tmp_path / "all.csv")
    rows = read_csv(tmp_path / "all.csv")
    trace = open_trace(pvti_epochs_trace)  # read again, apart from the window's
    assert rows[0][:4] == ["Process", "Thread", "Channel", "Label"]
    assert len(rows) - 1 == len(trace)
    assert sorted(r[3] for r in rows[1:]) == sorted(trace.label_of(i) for i in range(len(trace)))
    starts = [int(r[6]) for r in rows[1:]]
    assert starts == sorted(starts)
    assert sum(int(r[8]) for r in rows[1:]) == int((trace.end_ns - trace.start_ns).sum())
    lo, hi = view.model.time_limits()
    t0, t1 = lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.6
    view.set_selection_range(t0, t1)
    assert window.export_csv(tmp_path / "range.csv")
    picked = read_csv(tmp_path / "range.csv")[1:]
    instant = trace.kind == EventKind.INSTANT
    overlap = (trace.start_ns < t1) & np.where(instant, trace.start_ns >= t0, trace.end_ns > t0)
    assert 0 < len(picked) == int(overlap.sum()) < len(trace)


def test_clearing_the_range_box_shows_the_whole_trace_without_an_error(
    qtbot,
    trace_window,
):
    view = trace_window.traces.view
    box, error = view.control_bar.range_box, view.control_bar.range_error
    lo, hi = view.model.time_limits()
    box.setText("0.5-1.5")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert view.timeline.x_range[1] - view.timeline.x_range[0] == pytest.approx(1e6)
    box.setText("")  # emptied, then Enter
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert error.text() == ""
    x0, x1 = view.timeline.x_range
    assert x0 <= lo and x1 >= hi  # all of it
    box.setText("0.5-1.5")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.keyClick(box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(box, Qt.Key.Key_Delete)  # the text deleted: the whole trace at once
    assert box.text() == "" and error.text() == ""
    x0, x1 = view.timeline.x_range
    assert x0 <= lo and x1 >= hi
