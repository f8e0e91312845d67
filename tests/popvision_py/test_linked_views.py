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
