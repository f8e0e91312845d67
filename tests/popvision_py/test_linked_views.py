"""One selection across the pages of a report: what is picked on one page is shown on the
others, also on pages built only when first shown."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.report import open_report


def test_a_step_picked_in_the_program_tree_is_the_step_liveness_opens_on(
    opened_window, tutorial4_report
):
    window = opened_window
    tree = window.view("Program Tree")
    window.show_view("Program Tree")
    peak = liveness_table(open_report(tutorial4_report)).peak_step
    window.opened[0].selection.select_step(peak)
    assert tree.current_line() == tree.model.lines.line_of_step(peak)
    window.show_view("Liveness")  # built now, after the step was picked
    liveness = window.view("Liveness")
    liveness.details.setCurrentWidget(liveness.not_always_live)
    expected = variables_live_at(open_report(tutorial4_report), peak)
    model = liveness.not_always_live.model
    names = [model.data(model.index(row, 0)) for row in range(model.rowCount())]
    assert len(expected) > 0 and names == expected.names
    assert window.opened[0].selection.steps.tolist() == [peak]


def test_an_operation_picked_in_operations_is_shaded_on_the_liveness_chart(opened_window):
    window = opened_window
    window.show_view("Operations")
    window.opened[0].selection.select_operation("m5", [6, 7, 8, 9, 10, 11], "name")
    window.show_view("Liveness")
    liveness = window.view("Liveness")
    shaded = liveness.model.step_mask(window.opened[0].selection.operation_steps)
    assert np.flatnonzero(shaded).tolist() == [6, 7, 8, 9, 10, 11]
    assert "m5" in window.report_label.text()


def test_the_execution_traces_tile_map_shows_the_picked_steps_cycles(opened_window):
    window = opened_window
    window.show_view("Execution Trace")
    trace = window.view("Execution Trace")
    trace.details.setCurrentWidget(trace.tile_map)
    programs = window.opened[0].report.programs
    step = int(np.flatnonzero(programs.step_cs >= 0)[1])  # the second compute step
    window.opened[0].selection.select_step(step)  # as a click in Liveness would
    rows = programs.cst_cs == programs.step_cs[step]
    expected = np.zeros(1472, dtype=np.int64)
    expected[programs.cst_tile[rows]] = programs.cst_cycles[rows]
    assert trace.tile_map.model.values.tolist() == expected.tolist()
    assert trace.tile_map.model.label.startswith(f"Cycles of step {step}")
