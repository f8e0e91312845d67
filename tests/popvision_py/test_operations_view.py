"""The Operations page on tutorial 4 as a user drives it: the second matmul's numbers equal
popvision-cli's, selecting it highlights its steps in the Program Tree, its steps tab
selects steps, columns, sort, filter, runs, missing debug information, screenshots."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from popvision_py.app.screenshots import _save
from popvision_py.views.operations.view import OperationsView
from popvision_py.views.program_tree.model import HIGHLIGHT_ROLE
from profiler_core.formats.profile_pop import read_profile
from profiler_core.formats.profile_pop.writer import build_message, write_message
from profiler_core.model.profile import RunData
from profiler_core.report import open_report
from tests.popvision_py.conftest import open_with_file_menu


def cli_operations(report: Path, group_by: str) -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "operations", "--group-by", group_by,
         "--json", str(report)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)[f"operations_by_{group_by}"]


def second_matmul(report: Path) -> str:
    """The debug name of the second poplin::matMul call, read from debug.cbor."""
    debug = open_report(report).debug
    calls = [i for i in range(len(debug)) if debug.api[i] == debug.op[i] == "poplin::matMul"]
    return debug.name[calls[1]]


def show_operations(window, group_by: str = "name") -> OperationsView:
    window.show_view("Operations")
    view = window.view("Operations")
    assert isinstance(view, OperationsView)
    assert not view.showing_message(), view.message.text()
    box = view.control_bar.group_by
    box.setCurrentIndex(box.findData(group_by))
    return view


def cell(view: OperationsView, row: int, header: str) -> str:
    headers = [c.header for c in view.table_model.table.columns]
    return view.table_model.data(view.table_model.index(row, headers.index(header)))


def click_row(qtbot, view: OperationsView, row: int) -> None:
    rect = view.table.visualRect(view.table_model.index(row, 0))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_the_second_matmul_shows_the_cli_cycles_and_highlights_its_steps(
    qtbot, opened_window, tutorial4_report
):
    label = second_matmul(tutorial4_report)
    expected = next(r for r in cli_operations(tutorial4_report, "name") if r["name"] == label)
    view = show_operations(opened_window)
    row = view.model.shown_row_of(label)
    click_row(qtbot, view, row)
    selection = opened_window.opened[0].selection
    assert selection.operation == label and selection.operation_group_by == "name"
    for header, key in [("Total cycles", "total_cycles"), ("Compute cycles", "compute_cycles"),
                        ("Exchange cycles", "exchange_cycles"), ("Sync cycles", "sync_cycles"),
                        ("FLOPs", "flops"), ("Step executions", "step_executions")]:  # fmt: skip
        assert cell(view, row, header) == f"{expected[key]:,}"
    summary = view.operation.summary.model.table
    rows = dict(zip(summary.columns[0].values, summary.columns[1].values, strict=True))
    assert rows["Total cycles"] == f"{expected['total_cycles']:,}"
    # its steps: those whose debug context is under the call (a hand walk up the parents)
    report = open_report(tutorial4_report)
    debug, programs = report.debug, report.programs
    call = debug.name.index(label)

    def under_call(context: int) -> bool:
        while context >= 0:
            if context == call:
                return True
            context = int(debug.parent[context])
        return False

    steps = [s for s in range(programs.num_steps) if under_call(int(programs.step_debug[s]))]
    assert selection.operation_steps.tolist() == steps
    shown = view.operation.steps.model.table
    assert [int(shown.raw(r, 0)) for r in range(len(shown))] == steps
    cycles = sum(int(shown.raw(r, 4)) for r in range(len(shown)))
    assert cycles == expected["total_cycles"]
    # the Program Tree highlights exactly those steps
    opened_window.show_view("Program Tree")
    tree = opened_window.view("Program Tree")
    tree.expand_all()
    lines = tree.model.lines
    highlighted = [
        s for s in range(programs.num_steps)
        if tree.tree_model.data(tree.tree_model.index_of_line(lines.line_of_step(s)), HIGHLIGHT_ROLE)
    ]  # fmt: skip
    assert highlighted == steps


def test_a_step_of_the_operation_selects_it_in_the_program_tree_and_back(qtbot, opened_window):
    view = show_operations(opened_window)
    click_row(qtbot, view, view.model.shown_row_of("m4"))
    view.operation.setCurrentWidget(view.operation.steps)
    table = view.operation.steps.table
    rect = table.visualRect(view.operation.steps.model.index(2, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    selection = opened_window.opened[0].selection
    step = int(view.operation.steps.model.table.raw(2, 0))
    assert selection.steps.tolist() == [step]
    tree = opened_window.view("Program Tree")
    assert tree.current_line() == tree.model.lines.line_of_step(step)
    selection.select_operation("m5", [6], "name")  # picked elsewhere: the row follows
    assert view.model.label_at(view.table.currentIndex().row()) == "m5"


def test_columns_sort_and_filter(qtbot, opened_window):
    view = show_operations(opened_window, "context")
    headers = [c.header for c in view.table_model.table.columns]
    action = view.control_bar.column_actions["FLOPs"]
    action.trigger()
    assert view.table.isColumnHidden(headers.index("FLOPs"))
    action.trigger()
    assert not view.table.isColumnHidden(headers.index("FLOPs"))
    # every cycle class is shown, so the columns add up to the total; hiding one shows
    # its cycles in a column of their own
    assert not view.table.isColumnHidden(headers.index("Other cycles"))
    assert view.table.isColumnHidden(headers.index("Cycles in hidden classes"))
    view.control_bar.column_actions["Other cycles"].trigger()
    assert not view.table.isColumnHidden(headers.index("Cycles in hidden classes"))
    for r in range(view.table_model.rowCount()):
        assert cell(view, r, "Cycles in hidden classes") == cell(view, r, "Other cycles")
    view.control_bar.column_actions["Other cycles"].trigger()
    assert view.table.isColumnHidden(headers.index("Cycles in hidden classes"))
    totals = [int(cell(view, r, "Total cycles").replace(",", "")) for r in range(5)]
    assert totals == sorted(totals, reverse=True)  # most cycles first
    header = view.table.horizontalHeader()
    click_row(qtbot, view, 0)
    chosen = view.model.label_at(0)
    memory_header = "Variables (not all live at once)"
    x = header.sectionViewportPosition(headers.index(memory_header)) + 5
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))

    def memory() -> list[int]:
        column = headers.index(memory_header)
        return [int(view.model.columns.raw(r, column)) for r in range(len(view.model.columns))]

    assert memory() == sorted(memory()) and memory()[0] < memory()[-1]
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert memory() == sorted(memory(), reverse=True)
    assert view.model.label_at(view.table.selectionModel().selectedRows()[0].row()) == chosen
    qtbot.keyClicks(view.control_bar.filter, "REDUCE")
    shown = [cell(view, r, "Operation") for r in range(view.table_model.rowCount())]
    assert sorted(shown) == ["m4/Reduce", "m5/Reduce"]
    assert view.control_bar.count.text() == "2 of 11 operations"


def test_the_cycles_tab_draws_no_more_bars_than_pixels(qtbot, opened_window):
    view = show_operations(opened_window)
    click_row(qtbot, view, view.model.shown_row_of("m4"))
    view.operation.setCurrentWidget(view.operation.cycles)
    qtbot.wait(10)
    chart = view.operation.cycles
    chart.redraw()
    assert 0 < chart.bar_count() <= chart.pixel_width()
    assert chart.values.max() == view.model.tile_cycles(view.model.parts("m4")).max() > 0


def two_run_report(source: Path, folder: Path) -> Path:
    folder.mkdir()
    profile = read_profile(source / "profile.pop")
    first = profile.execution.runs[0]
    keep = first.step_ids < 6  # the second run executes m4 only
    profile.execution.runs.append(
        RunData(1 - 1, "second", first.step_ids[keep], first.start_cycles[keep], first.total_cycles)
    )
    write_message(folder / "profile.pop", build_message(profile))
    (folder / "debug.cbor").write_bytes((source / "debug.cbor").read_bytes())
    return folder


def test_a_report_with_two_runs_counts_the_run_picked(
    qtbot, window, tutorial4_report, tmp_path, monkeypatch
):
    folder = two_run_report(tutorial4_report, tmp_path / "tutorial4")
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    view = show_operations(window)
    assert view.control_bar.run.isVisibleTo(view) and view.control_bar.run.count() == 2
    row = view.model.shown_row_of("m5")
    assert cell(view, row, "Total cycles") != "0"
    view.control_bar.run.setCurrentIndex(1)
    assert window.opened[0].selection.run == 1
    assert cell(view, view.model.shown_row_of("m5"), "Total cycles") == "0"
    expected = next(r for r in cli_operations(tutorial4_report, "name") if r["name"] == "m4")
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "operations", "--group-by", "name", "--run", "1",
         "--json", str(folder)], capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    run1 = next(r for r in json.loads(result.stdout)["operations_by_name"] if r["name"] == "m4")
    assert cell(view, view.model.shown_row_of("m4"), "Total cycles") == f"{run1['total_cycles']:,}"
    assert run1["total_cycles"] == expected["total_cycles"]  # m4 ran as in the one-run report


def test_without_debug_information_the_option_is_named(
    qtbot, window, tutorial4_report, tmp_path, monkeypatch
):
    folder = tmp_path / "tutorial4"
    folder.mkdir()
    (folder / "profile.pop").write_bytes((tutorial4_report / "profile.pop").read_bytes())
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    window.show_view("Operations")
    view = window.view("Operations")
    assert view.showing_message() and "autoReport.outputDebugInfo" in view.message.text()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_operations_screenshot_with_a_selected_operation(
    qtbot, opened_window, screenshot_dir, theme
):
    opened_window.set_theme(theme)
    view = show_operations(opened_window)
    click_row(qtbot, view, view.model.shown_row_of("m5"))
    view.operation.setCurrentWidget(view.operation.cycles)
    path = _save(opened_window, screenshot_dir, f"operations-selected-{theme}")
    assert path.stat().st_size > 0
    assert np.array_equal(opened_window.opened[0].selection.operation_steps, np.arange(6, 12))


def test_the_group_without_a_debug_context_can_be_selected(qtbot, opened_window):
    view = show_operations(opened_window, "op")
    row = view.model.shown_row_of("")
    assert cell(view, row, "Operation") == "(none)"
    click_row(qtbot, view, row)
    selection = opened_window.opened[0].selection
    assert selection.operation == "(none)" and selection.operation_steps.size == 0
    summary = view.operation.summary.model.table
    assert summary.display(0, 1) == "(none)"
    click_row(qtbot, view, view.model.shown_row_of("poplin::matMul"))
    selection.select_operation("(none)", [], "op")  # picked elsewhere: the row follows
    assert view.model.label_at(view.table.currentIndex().row()) == ""


def test_a_report_that_never_ran_lists_operations_and_names_the_option(
    qtbot, window, tutorial4_report, tmp_path, monkeypatch
):
    folder = tmp_path / "tutorial4"
    folder.mkdir()
    profile = read_profile(tutorial4_report / "profile.pop")
    profile.execution = None
    write_message(folder / "profile.pop", build_message(profile))
    (folder / "debug.cbor").write_bytes((tutorial4_report / "debug.cbor").read_bytes())
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    view = show_operations(window)
    assert "autoReport.outputExecutionProfile" in view.control_bar.note.text()
    row = view.model.shown_row_of("m5")
    assert cell(view, row, "Total cycles") == "0" and cell(view, row, "FLOPs") != "0"
    assert not view.control_bar.run.isVisibleTo(view)
