"""The Operations page adds up, as a user sees it (issue 38): on the pipelined example the
cycle classes and the phase columns shown each add up to the Total cell, a hidden column's
cycles get a column of their own, poplin::matMul holds its cycles, grouping by phase lists
the time steps, the figures are popvision-cli's, and the totals line agrees with the
Summary, Memory and Liveness; on a ResNet-like ONNX model the memory columns say what they
add up and shared code is listed with who shares it; a report without debug contexts shows
one (none) row and says why."""

from __future__ import annotations

import re

import numpy as np
import pytest

from popvision_py.app.screenshots import _save
from popvision_py.views.operations.view import OperationsView
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.report import open_report
from profiler_core.report.summary import report_summary
from tests.operations_reports import no_debug_contexts
from tests.popvision_py.conftest import open_with_file_menu
from tests.profiler_core.cli_json import popvision_cli

CLASSES = ("Compute cycles", "Exchange cycles", "Sync cycles", "Other cycles")
PHASES = ("rampUp cycles", "steadyState cycles", "rampDown cycles", "Cycles outside phases")


def show(window, group_by: str) -> OperationsView:
    window.show_view("Operations")
    view = window.view("Operations")
    assert not view.showing_message(), view.message.text()
    box = view.control_bar.group_by
    box.setCurrentIndex(box.findData(group_by))
    return view


def headers(view: OperationsView) -> list[str]:
    return [c.header for c in view.table_model.table.columns]


def shown_headers(view: OperationsView) -> list[str]:
    return [h for i, h in enumerate(headers(view)) if not view.table.isColumnHidden(i)]


def number(view: OperationsView, row: int, header: str) -> int:
    """A count cell as the user reads it (its text), back to a number."""
    text = view.table_model.data(view.table_model.index(row, headers(view).index(header)))
    return int(text.replace(",", ""))


def raw(view: OperationsView, row: int, header: str) -> int:
    index = view.table_model.index(row, headers(view).index(header))
    return int(view.table_model.data(index, RAW_ROLE))


def rows(view: OperationsView) -> dict[str, int]:
    label = headers(view).index("Operation")
    model = view.table_model
    return {model.data(model.index(r, label)): r for r in range(model.rowCount())}


@pytest.fixture
def pipelined_window(qtbot, window, pipelined_folder, monkeypatch):
    open_with_file_menu(qtbot, window, pipelined_folder, monkeypatch)
    return window


def test_the_pipelined_columns_shown_add_up_and_matmul_holds_its_cycles(
    pipelined_window, pipelined_folder
):
    view = show(pipelined_window, "op")
    shown = shown_headers(view)
    assert set(CLASSES) | set(PHASES) <= set(shown)
    assert "Cycles in hidden classes" not in shown and "Cycles in hidden phases" not in shown
    found = rows(view)
    assert not [label for label in found if label.startswith("pipeline::")]
    for row in found.values():
        total = number(view, row, "Total cycles")
        assert sum(number(view, row, h) for h in CLASSES) == total
        assert sum(number(view, row, h) for h in PHASES) == total
    matmul = found["poplin::matMul"]
    assert number(view, matmul, "Compute cycles") > 0 and number(view, matmul, "FLOPs") > 0
    assert 0 < number(view, matmul, "steadyState cycles") < number(view, matmul, "Total cycles")
    runs = sum(run.cycles for run in report_summary(open_report(pipelined_folder)).runs)
    assert f"cycles {runs:,} = Summary: the runs' cycles {runs:,}" in view.totals.text()
    assert "≠" not in view.totals.text()
    assert "steps ran the vertices of several operations" in view.totals.text()


def test_a_hidden_cycle_column_shows_its_cycles_in_a_column_of_their_own(pipelined_window):
    view = show(pipelined_window, "op")
    actions = view.control_bar.column_actions
    actions["Sync cycles"].trigger()
    actions["rampDown cycles"].trigger()
    shown = shown_headers(view)
    assert "Sync cycles" not in shown and "rampDown cycles" not in shown
    assert {"Cycles in hidden classes", "Cycles in hidden phases"} <= set(shown)
    for row in rows(view).values():
        total = number(view, row, "Total cycles")
        classes = [h for h in (*CLASSES, "Cycles in hidden classes") if h in shown]
        phases = [h for h in (*PHASES, "Cycles in hidden phases") if h in shown]
        assert sum(number(view, row, h) for h in classes) == total
        assert sum(number(view, row, h) for h in phases) == total
    for header in PHASES:  # every phase hidden: nothing of them on screen to add up
        if header != "rampDown cycles":
            actions[header].trigger()
    assert "Cycles in hidden phases" not in shown_headers(view)
    actions["Sync cycles"].trigger()
    assert "Cycles in hidden classes" not in shown_headers(view)


def test_the_labels_stay_in_view_when_the_columns_scroll(pipelined_window):
    view = show(pipelined_window, "op")
    view.select_operation("poplin::matMul")
    bar = view.table.horizontalScrollBar()
    assert bar.maximum() > 0  # wider than the window: the columns scroll
    bar.setValue(bar.maximum())
    frozen = view.frozen
    assert frozen.isVisible() and frozen.columnWidth(0) == view.table.columnWidth(0)
    model = frozen.model()
    labels = [model.data(model.index(r, 0)) for r in range(model.rowCount())]
    assert "poplin::matMul" in labels
    selected = frozen.selectionModel().selectedRows()
    assert [model.data(i) for i in selected] == ["poplin::matMul"]  # one selection
    last = model.rowCount() - 1
    assert frozen.visualRect(model.index(last, 0)).bottom() < frozen.height()  # every row


def test_grouped_by_phase_the_rows_are_the_time_steps_and_equal_the_cli(
    pipelined_window, pipelined_folder
):
    view = show(pipelined_window, "phase")
    found = rows(view)
    assert set(found) == {"pipeline::rampUp", "pipeline::steadyState", "pipeline::rampDown",
                          "(no phase)"}  # fmt: skip
    assert not set(PHASES) & set(headers(view))  # the rows are the phases
    cli = popvision_cli("operations", "--group-by", "phase", pipelined_folder)
    for record in cli["operations_by_phase"]:
        row = found[record["phase"]]
        for header in ("Total cycles", *CLASSES):
            key = header.lower().replace(" ", "_")
            assert number(view, row, header) == record[key], (record["phase"], header)


def test_the_page_shows_popvision_clis_figures(pipelined_window, pipelined_folder):
    view = show(pipelined_window, "layer")
    cli = popvision_cli("operations", "--group-by", "layer", pipelined_folder)
    records = {r["layer"]: r for r in cli["operations_by_layer"]}
    found = rows(view)
    assert set(records) == set(found)
    pairs = {"Total cycles": "total_cycles", "Compute cycles": "compute_cycles",
             "steadyState cycles": "cycles_in_pipeline_steadystate", "Own code": "own_code_bytes",
             "Variables (not all live at once)": "variable_bytes",
             "Live at peak": "live_at_peak_bytes", "FLOPs": "flops"}  # fmt: skip
    for label, row in found.items():
        for header, key in pairs.items():
            assert raw(view, row, header) == records[label][key], (label, header)
    assert number(view, found["linear0"], "Compute cycles") > 0
    totals = {t["figure"]: t for t in cli["totals"]}
    assert totals["cycles"]["operations"] == totals["cycles"]["elsewhere"]


def test_the_resnet_memory_columns_say_what_they_add_up(qtbot, window, resnet_onnx_folder,
                                                         monkeypatch):  # fmt: skip
    open_with_file_menu(qtbot, window, resnet_onnx_folder, monkeypatch)
    view = show(window, "op")
    shown = shown_headers(view)
    assert {"Own code", "Variables (not all live at once)", "Live at peak"} <= set(shown)
    header = view.table_model.headerData(headers(view).index("Variables (not all live at once)"),
                                         view.table.horizontalHeader().orientation())  # fmt: skip
    assert header == "Variables\n(not all live at once)"  # on two lines: a narrower column
    found = rows(view)
    summary = report_summary(open_report(resnet_onnx_folder))
    live = sum(raw(view, r, "Live at peak") for r in found.values())
    variables = sum(raw(view, r, "Variables (not all live at once)") for r in found.values())
    assert live == summary.peak_live_bytes < variables  # what lives together is less
    conv = found["poplin::convolution"]
    assert raw(view, conv, "Live at peak") < raw(view, conv, "Variables (not all live at once)")
    text = view.totals.text()
    assert re.search(r"vertex code: own \+ shared once [\d.]+ \w+ = Memory: Vertex code", text)
    assert "Liveness: peak" in text and "≠" not in text


def test_shared_code_is_listed_with_the_operations_that_share_it(qtbot, window,
                                                                 resnet_onnx_folder, monkeypatch):  # fmt: skip
    open_with_file_menu(qtbot, window, resnet_onnx_folder, monkeypatch)
    view = show(window, "framework")
    assert view.select_operation("ONNX/Conv_block0a_conv")
    page = view.operation.sharing
    table = page.page.model.table
    sharers = table.columns[[c.header for c in table.columns].index("Shared with")].values
    assert any("ONNX/Conv_block1b_conv" in s for s in sharers)
    assert "ONNX/Conv_block0a_conv" not in " ".join(sharers)
    assert "shared with the operations below" in page.note.text()
    found = rows(view)
    own = sum(raw(view, r, "Own code") for r in found.values())
    model = view.model
    assert own + model.table.shared_code_bytes == model.totals.vertex_code


def test_a_report_without_debug_contexts_shows_one_none_row_and_says_why(
    qtbot, window, pipelined_folder, tmp_path, monkeypatch
):
    folder = no_debug_contexts(pipelined_folder, tmp_path / "pipelined")
    open_with_file_menu(qtbot, window, folder, monkeypatch)
    view = show(window, "op")
    assert list(rows(view)) == ["(none)"]
    runs = sum(r.cycles for r in report_summary(open_report(folder)).runs)
    assert number(view, 0, "Total cycles") == runs
    assert "no debug contexts" in view.totals.text()


@pytest.mark.parametrize("group_by", ["op", "phase"])
def test_pipelined_operations_screenshot(pipelined_window, screenshot_dir, group_by):
    view = show(pipelined_window, group_by)
    if group_by == "op":
        assert view.select_operation("poplin::matMul")
        view.operation.setCurrentWidget(view.operation.steps)
    path = _save(pipelined_window, screenshot_dir, f"operations-pipelined-{group_by}")
    assert path.stat().st_size > 0
    assert np.any(view.model.table.total_cycles > 0)


def test_resnet_operations_screenshot(qtbot, window, resnet_onnx_folder, monkeypatch,
                                      screenshot_dir):  # fmt: skip
    open_with_file_menu(qtbot, window, resnet_onnx_folder, monkeypatch)
    view = show(window, "framework")
    assert view.select_operation("ONNX/Conv_block0a_conv")
    view.operation.setCurrentWidget(view.operation.sharing)
    path = _save(window, screenshot_dir, "operations-resnet-shared-code")
    assert path.stat().st_size > 0
