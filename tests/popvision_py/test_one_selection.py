"""Issue 29 point 4, one selection everywhere: tiles picked in Memory become Liveness's
"Selected tiles" scope, are outlined in the Execution Trace's tile map and marked on the
Operations cycles chart; in compare mode a step picked on one Liveness chart is shaded on
both, and B's variables are listed beside A's."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from popvision_py.viewmodels.colors import SELECTION_OUTLINE
from popvision_py.viewmodels.liveness import ALL_IPUS, SELECTED_TILES
from profiler_core.analysis.liveness_tiles import liveness_on_tiles
from profiler_core.report import open_report
from tests.popvision_py.conftest import wait_loaded

MAGENTA = QColor(*SELECTION_OUTLINE[:3])


def pick_in_memory(window, text: str) -> None:
    window.show_view("Memory")
    assert window.current_view().select_text(text)


def test_tiles_picked_in_memory_are_liveness_selected_tiles_scope(opened_window):
    window = opened_window
    window.show_view("Liveness")
    liveness = window.current_view()
    assert liveness.control_bar.scope_box.currentText() == ALL_IPUS
    pick_in_memory(window, "0,5,100-120")
    window.show_view("Liveness")
    assert liveness.control_bar.scope_box.currentText() == SELECTED_TILES
    assert liveness.model.scope == SELECTED_TILES
    tiles = np.array([0, 5, *range(100, 121)])
    table = liveness_on_tiles(window.opened[0].report, tiles)
    expected = table.live_bytes(True)  # profiler_core's liveness of exactly those tiles
    assert np.array_equal(liveness.model.curve(), expected)
    assert liveness.control_bar.select_box.text() == "0,5,100-120"
    pick_in_memory(window, "")  # nothing picked: all IPUs again
    assert liveness.control_bar.scope_box.currentText() == ALL_IPUS


def test_tiles_picked_in_memory_show_in_the_trace_and_the_operations_chart(opened_window):
    window = opened_window
    window.show_view("Operations")
    operations = window.current_view()
    operations.select_operation(operations.model.label_at(0))
    chart = operations.operation.cycles
    pick_in_memory(window, "14,700")
    trace = window.view("Execution Trace")
    assert trace.tile_map.model.selection.tolist() == [14, 700]  # outlined on its map
    xs, ys = chart.marks.getData()
    assert xs.tolist() == [14, 14, 700, 700]
    most = int(chart.values[[14, 700]].max())
    assert f"Selected tiles (2, magenta): {most:,} cycles at most." in chart.title.text()
    window.show_view("Operations")
    operations.operation.setCurrentWidget(chart)
    QApplication.processEvents()
    chart.plot.setXRange(690, 710, padding=0)
    QApplication.processEvents()
    view_box = chart.plot.getPlotItem().getViewBox()
    point = chart.plot.mapFromScene(view_box.mapViewToScene(QPointF(700, ys[1] * 0.5)))
    assert chart.plot.grab().toImage().pixelColor(point) == MAGENTA


def test_in_compare_a_step_picked_on_one_chart_is_shaded_on_both(
    qtbot, window, tutorial4_report, tutorial4_variant_report
):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    window.show_view("Liveness")
    liveness = window.current_view()
    a, b = liveness.charts
    a.model.click_step(5)
    assert b.model.selection.steps.tolist() == [5]
    assert bool(b.area.marks[5]) and int(b.area.marks.sum()) == 1
    b.model.click_step(8)  # and back: B's pick is shaded on A's chart
    assert a.model.selection.steps.tolist() == [8] and bool(a.area.marks[8])
    assert "Compare: variables" in liveness.compare_tabs.pages  # B's variables beside A's


def test_in_compare_b_variables_are_listed_beside_a(
    qtbot, window, tutorial4_report, tutorial4_variant_report
):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    window.show_view("Liveness")
    liveness = window.current_view()
    liveness.model.click_step(5)
    liveness.details.setCurrentWidget(liveness.not_always_live)
    table = liveness.not_always_live.model.table
    assert table.columns[0].header == "Report"
    owners = [table.display(r, 0) for r in range(len(table))]
    a, b = (open_report(p) for p in (tutorial4_report, tutorial4_variant_report))
    # the not-always-live variables live at step 5, counted from each report's liveness
    expected = [live_at(report, 5) for report in (a, b)]
    assert owners.count("A: tutorial4") == expected[0] > 0
    assert owners.count("B: variant") == expected[1] > 0
    liveness.details.setCurrentWidget(liveness.always_live)
    table = liveness.always_live.model.table
    owners = [table.display(r, 0) for r in range(len(table))]
    counts = [int(np.count_nonzero(r.graph.var_always_live)) for r in (a, b)]
    assert owners.count("A: tutorial4") == counts[0] and owners.count("B: variant") == counts[1]


def live_at(report, step: int) -> int:
    """How many not-always-live variables are live at ``step`` (their intervals, by hand)."""
    live = report.liveness
    first, last = np.asarray(live.interval_first), np.asarray(live.interval_last)
    at = (first <= step) & (step <= last)
    return int(np.unique(np.asarray(live.interval_var)[at]).size)
