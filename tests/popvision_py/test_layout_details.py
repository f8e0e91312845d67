"""Issue 29 point 6, what a user sees in the first hour: the Insights histogram inside the
window, compare's Δ axis readable ("Δ Memory (KiB)" whole, several ticks), the Execution
Trace's kind table and Run box showing whole names, the "(none)" operation not flooding the
flame, a legend for the Program Tree's step colours, and no empty box on Home."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from popvision_py.viewmodels.execution_trace import TraceLayout
from popvision_py.viewmodels.step_colors import STEP_CLASS_COLORS, StepClass
from popvision_py.views.execution_trace.controls import RUN_BOX_MAX
from popvision_py.views.program_tree.model import COLOR_ROLE
from profiler_core.model.kinds import StepKind
from tests.popvision_py.conftest import wait_loaded


def test_the_insights_histogram_ends_inside_the_window(opened_window):
    window = opened_window
    window.show_view("Insights")
    histogram = window.current_view().histogram
    QApplication.processEvents()
    right = histogram.mapTo(window, QPoint(histogram.width(), 0)).x()
    assert right <= window.centralWidget().width() - 8  # a margin, not flush with the edge
    axis = histogram.getAxis("bottom")
    axis_right = axis.mapToScene(axis.boundingRect().topRight()).x()
    assert axis_right <= histogram.width()  # its x axis is drawn whole


def test_compares_delta_axis_names_memory_in_kib_with_ticks_both_sides(
    qtbot, window, tutorial4_report, tutorial4_variant_report
):
    window.open_paths([tutorial4_report, tutorial4_variant_report])
    wait_loaded(qtbot, window)
    window.show_view("Memory")
    memory = window.current_view()
    curves = memory.compare_tabs.curves["Compare: tiles"]
    memory.details.setCurrentWidget(memory.compare_tabs.pages["Compare: tiles"])
    QApplication.processEvents()
    axis = curves.bottom_axis
    assert axis.labelText == "Δ Memory<br>(KiB)"
    label = axis.label.mapRectToScene(axis.label.boundingRect())
    assert label.height() <= curves.bottom.height()  # the whole label is drawn
    low, high = curves.bottom.getViewBox().viewRange()[1]
    values = [v for _, level in axis.tickValues(low, high, axis.height())[:1] for v in level]
    assert len(values) >= 3 and min(values) < 0 < max(values)


def test_the_kind_table_and_the_run_box_show_whole_names(opened_window):
    window = opened_window
    window.show_view("Execution Trace")
    view = window.current_view()
    QApplication.processEvents()
    table = view.summary.table
    metrics = table.fontMetrics()
    widest = max(metrics.horizontalAdvance(k) for k in ("OnTileExecute", "DoExchange"))
    assert table.columnWidth(0) >= widest + 12 + 16  # the swatch, the text, the margins
    box = view.control_bar.run_box
    text = box.currentText()
    assert text.startswith("Run 0: tutorial4 (") and text.endswith("cycles)")
    assert box.width() >= box.fontMetrics().horizontalAdvance(text) + 20
    assert box.width() <= RUN_BOX_MAX
    box.setItemText(0, "Run 0: " + "a very long program name " * 8)
    box.adjustSize()
    QApplication.processEvents()
    assert box.width() <= RUN_BOX_MAX  # past the limit it elides instead of widening


def test_selecting_the_none_operation_does_not_outline_every_step(opened_window):
    window = opened_window
    window.show_view("Execution Trace")
    view = window.current_view()
    view.control_bar.layout_box.setCurrentText(TraceLayout.FLAME.value)
    selection = window.opened[0].selection
    steps = np.arange(window.opened[0].report.programs.num_steps, dtype=np.int64)
    # what Operations writes for "(none)" when steps have no debug context: all of them here
    selection.select_operation("(none)", steps, view.model.group_by)
    assert view.plot.spans.highlight_keys.size == 0
    selection.select_operation("m4", np.array([2, 3]), view.model.group_by)
    assert {2, 3} <= set(view.plot.spans.highlight_keys.tolist())  # a real one still is


def test_the_program_tree_has_a_legend_of_its_step_colours(opened_window):
    window = opened_window
    window.show_view("Program Tree")
    view = window.current_view()
    legend = view.legend
    assert legend.isVisible()
    assert list(legend.swatches) == [c.value for c in StepClass]
    swatch = legend.swatches["Compute"].pixmap().toImage().pixelColor(5, 5)
    assert swatch == QColor(STEP_CLASS_COLORS[StepClass.COMPUTE])
    # the same colour the tree gives a compute step's line
    view.expand_all()
    programs = window.opened[0].report.programs
    step = int(np.flatnonzero(programs.step_kind == StepKind.ON_TILE_EXECUTE)[0])
    line = view.model.lines.line_of_step(step)
    index = view.tree_model.index_of_line(line)
    assert QColor(view.tree_model.data(index, COLOR_ROLE)) == swatch


def test_home_ends_under_its_last_recent_report(opened_window):
    window = opened_window
    window.show_view("Home")
    QApplication.processEvents()
    recent = window.start_page.recent
    assert recent.count() == 1
    row = recent.sizeHintForRow(0)
    assert recent.height() <= row * 1 + 2 * recent.frameWidth() + 8  # no empty box below
    assert recent.visualItemRect(recent.item(0)).height() == row
