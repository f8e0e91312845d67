"""The Runs page as a user meets it: File > Open a sweep's folder shows a row per report
(filling as they are read), a scatter of cycles against peak memory coloured by fit, a line
over the runs; filtering, sorting, colouring by a sweep value, picking one report to open and
two to compare; a damaged report is its row saying so. Screenshots go to screenshots/."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog

import popvision_py.app.runs_opening as runs_opening
import profiler_core.tables.build as build_module
from popvision_py.views.runs.view import NO_RUNS, RunsView
from profiler_core.report import open_report
from profiler_core.tables.build import build_tables
from tests.popvision_py.conftest import wait_loaded
from tests.profiler_core.many_reports import write_fake_sweep, write_report

PARAMETERS = {"batch": ["1", "2", "4"], "dtype": ["float32", "float16"]}


@pytest.fixture
def sweep(tmp_path):
    out = tmp_path / "sweep"
    write_fake_sweep(out, PARAMETERS, failed={"batch=4,dtype=float32"},
                     over={"batch=4,dtype=float16"})  # fmt: skip
    return out


def open_runs(qtbot, window, path, monkeypatch) -> RunsView:
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(path))
    window.actions.open.trigger()
    assert window.runs.loader.busy  # read off the GUI thread
    qtbot.waitUntil(lambda: not window.runs.loader.busy, timeout=30_000)
    view = window.current_view()
    assert isinstance(view, RunsView)
    return view


def cells(view: RunsView, column: str) -> list[str]:
    table = view.panel.model.table
    index = [c.header for c in table.columns].index(column)
    return [view.panel.model.data(view.panel.model.index(r, index)) for r in range(len(table))]


def legend(view: RunsView) -> list[str]:
    return view.scatter.entries


def test_a_sweep_folder_opens_on_the_runs_page(qtbot, window, sweep, monkeypatch, screenshot_dir):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    assert cells(view, "Report") == [
        "batch=1,dtype=float32/report", "batch=1,dtype=float16/report",
        "batch=2,dtype=float32/report", "batch=2,dtype=float16/report",
        "batch=4,dtype=float32", "batch=4,dtype=float16/report",
    ]  # fmt: skip
    assert cells(view, "batch") == ["1", "1", "2", "2", "4", "4"]
    assert cells(view, "dtype") == ["float32", "float16"] * 3
    assert cells(view, "Fits") == ["Fits"] * 4 + ["No report", "Does not fit"]
    assert cells(view, "Tiles over")[4:] == ["—", "1"]
    warnings = cells(view, "Warnings")
    assert warnings[4] == "Out of memory on tile 3: 700,000 bytes used"
    assert warnings[5].startswith("the run failed: Out of memory on tile 3")
    # the figures are the reports' own
    reports = build_tables([sweep], ["reports"])["reports"].to_pydict()
    expected = [f"{c:,}" if c is not None else "—" for c in reports["total_cycles"]]
    assert cells(view, "Total cycles") == expected
    # five points (the failed run has none), coloured by fit; six names on the line's axis
    assert view.scatter.point_count() == 5 and view.line.point_count() == 5
    assert legend(view) == ["Fits (4)", "Does not fit (1)"]
    assert view.panel.count.text() == "6 of 6 reports"
    assert view.control_bar.loaded.text() == (
        "6 of 6 reports (1 could not be read or wrote no report)"
    )
    assert window.rail.currentItem().text() == "Runs"
    assert window.rail.currentItem().flags() & Qt.ItemFlag.ItemIsEnabled
    assert not view.control_bar.open_button.isEnabled()
    window.grab().save(str(screenshot_dir / "runs-sweep.png"))


def test_filtering_and_show_choose_the_rows_and_points(qtbot, window, sweep, monkeypatch):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    view.panel.search.setText("float16")
    assert cells(view, "Report") == [
        "batch=1,dtype=float16/report", "batch=2,dtype=float16/report",
        "batch=4,dtype=float16/report",
    ]  # fmt: skip
    assert view.scatter.point_count() == 3 and legend(view) == ["Fits (2)", "Does not fit (1)"]
    view.panel.search.setText("")
    view.control_bar.show_choice.setCurrentText("Does not fit")
    assert cells(view, "Report") == ["batch=4,dtype=float16/report"]
    assert view.scatter.point_count() == 1 and view.line.point_count() == 1
    view.control_bar.show_choice.setCurrentText("No report")
    assert cells(view, "Report") == ["batch=4,dtype=float32"]
    assert view.scatter.point_count() == 0


def test_a_sweep_value_as_colour_and_as_axis(qtbot, window, sweep, monkeypatch, screenshot_dir):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    bar = view.control_bar
    bar.color_choice.setCurrentIndex(bar.color_choice.findData("dtype"))
    assert legend(view) == ["float16 (3)", "float32 (2)"]
    bar.x_choice.setCurrentIndex(bar.x_choice.findData("batch"))
    xs = sorted(x for item in view.scatter.items for x in item.data["x"].tolist())
    assert xs == [1, 1, 2, 2, 4]
    assert view.scatter.plot.getAxis("bottom").labelText == "batch"
    assert [bar.x_choice.itemText(i) for i in range(bar.x_choice.count())] == [
        "Total cycles",
        "Peak live memory",
        "Fullest tile",
        "Tiles over",
        "batch",
    ]  # fmt: skip (dtype is text: a colour, never an axis)
    window.grab().save(str(screenshot_dir / "runs-by-dtype.png"))


def test_sorting_is_kept_as_rows_arrive(qtbot, window, sweep, monkeypatch):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    header = [c.header for c in view.panel.model.table.columns]
    view.panel.table.sortByColumn(header.index("Total cycles"), Qt.SortOrder.DescendingOrder)
    first = cells(view, "Total cycles")
    numbers = [int(c.replace(",", "")) for c in first if c != "—"]
    assert numbers == sorted(numbers, reverse=True) and first[-1] == "—"
    model = view.model
    view.add_rows({"report": ["late"], "path": [None], "warnings": [""], "error": ["gone"],
                   "batch": [8], "dtype": ["float32"], "total_cycles": [10**9],
                   "peak_live_bytes": [1], "fullest_tile_bytes": [1], "tiles_over": [0],
                   "fits": [True]})  # fmt: skip
    assert len(model) == 7
    assert cells(view, "Report")[0] == "late"  # sorted in, not appended
    assert view.panel.table.horizontalHeader().sortIndicatorOrder() == Qt.SortOrder.DescendingOrder


def test_picking_one_opens_it_and_two_compare(qtbot, window, sweep, monkeypatch):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    view.pick_row(2)  # a click on batch=2,dtype=float32's point
    assert view.picked == [2]
    assert view.panel.table.selectionModel().selectedRows()[0].row() == 2
    assert len(view.scatter.picked.data) == 1 and len(view.line.picked.data) == 1
    assert view.control_bar.open_button.isEnabled()
    assert not view.control_bar.compare_button.isEnabled()
    view.control_bar.open_button.click()
    wait_loaded(qtbot, window)
    assert [o.folder for o in window.opened] == [sweep / "batch=2,dtype=float32" / "report"]
    assert window.current_view().title == "Summary"
    window.show_view("Runs")
    assert len(cells(view, "Report")) == 6  # the runs stay while a report is open
    selection = view.panel.table.selectionModel()
    model = view.panel.model
    flags = selection.SelectionFlag
    selection.select(model.index(0, 0), flags.ClearAndSelect | flags.Rows)  # a click
    selection.select(model.index(3, 0), flags.Select | flags.Rows)  # Ctrl+click
    assert view.picked == [0, 3]
    assert view.control_bar.compare_button.isEnabled()
    view.control_bar.compare_button.click()
    wait_loaded(qtbot, window)
    assert [o.folder.parent.name for o in window.opened] == [
        "batch=1,dtype=float32",
        "batch=2,dtype=float16",
    ]


def test_a_damaged_report_is_its_row_and_the_rest_load(qtbot, window, tmp_path, monkeypatch):
    root = tmp_path / "ci"
    for i in range(3):
        write_report(root / f"build-{i}", seed=i)
    (root / "build-1" / "profile.pop").write_bytes(b"garbage" * 20)
    view = open_runs(qtbot, window, root, monkeypatch)
    assert cells(view, "Report") == ["build-0", "build-1", "build-2"]
    assert cells(view, "Fits") == ["Fits", "No report", "Fits"]
    assert cells(view, "Warnings")[1].startswith(str(root / "build-1" / "profile.pop"))
    assert view.line.point_count() == 2
    truth = [open_report(root / f"build-{i}").execution for i in (0, 2)]
    totals = [sum(r.total_cycles for r in e.runs) for e in truth]
    assert [cells(view, "Total cycles")[i] for i in (0, 2)] == [f"{t:,}" for t in totals]


def test_a_folder_of_many_reports_fills_as_they_are_read(qtbot, window, tmp_path, monkeypatch):
    """Sixty reports, each read in at least 10 ms here, handed over as they are read (the page
    drains them every 20 ms here): the table grows while the loader works, and the window's
    event loop keeps turning."""
    root = tmp_path / "many"
    for i in range(60):
        write_report(root / f"run-{i}", seed=i)
    read = build_module.read_report

    def slowly(*args, **kwargs):
        time.sleep(0.01)
        return read(*args, **kwargs)

    monkeypatch.setattr(build_module, "read_report", slowly)
    monkeypatch.setattr(runs_opening, "BATCH_SECONDS", 0.0)
    monkeypatch.setattr(runs_opening, "DRAIN_MS", 20)
    window.runs.loader.timer.setInterval(20)
    sizes: list[int] = []  # rows shown after each hand-over while the loader works
    shown = window.runs.view.add_rows

    def add_rows(batch: dict) -> None:
        shown(batch)
        if window.runs.loader.busy:
            sizes.append(len(window.runs.view.model))

    monkeypatch.setattr(window.runs.view, "add_rows", add_rows)
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    view = open_runs(qtbot, window, root, monkeypatch)
    timer.stop()
    assert len(view.model) == 60
    assert len(sizes) >= 3 and sizes == sorted(sizes) and sizes[0] < 60  # filled as read
    assert cells(view, "Report")[:3] == ["run-0", "run-1", "run-2"]
    assert cells(view, "Report")[-1] == "run-59"  # run-10 after run-9: names in number order
    assert max(gaps) < 1.0, max(gaps)


def test_the_charts_follow_the_theme(qtbot, window, sweep, monkeypatch):
    view = open_runs(qtbot, window, sweep, monkeypatch)
    light = view.scatter.plot.backgroundBrush().color().name()
    window.set_theme("dark")

    def background(chart) -> str:
        return chart.plot.backgroundBrush().color().name()

    qtbot.waitUntil(lambda: background(view.scatter) != light, timeout=5_000)
    assert (light, background(view.scatter), background(view.line)) == (
        "#ffffff", "#1e1f22", "#1e1f22",
    )  # fmt: skip


def test_without_runs_the_page_says_how_to_get_them(window):
    view = next(v for v in window.views if isinstance(v, RunsView))
    assert view.showing_message() and view.message.text() == NO_RUNS
    assert np.array_equal(view.shown_rows(), np.zeros(0))
