"""The Execution Trace marks the selected step apart from the rest of its operation: with
m4 (steps 0-5 of tutorial 4) selected in Operations and step 2 clicked, step 2 has the
selection's outline and steps 1 and 3 the operation's yellow one, as Graph Analyser does."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF

from popvision_py.viewmodels.colors import SELECTION_OUTLINE
from tests.popvision_py.test_execution_trace_view import click_at, trace

YELLOW = (255, 212, 0)  # the operation's outline
MAGENTA = tuple(SELECTION_OUTLINE[:3])


def outline_colours(view, x0: float, x1: float, inset: int = 4) -> set[tuple[int, int, int]]:
    """The outline colours found in lane 0 between cycles x0 and x1, ``inset`` pixels in from
    either end (so a neighbour's outline is not counted)."""
    plot = view.plot
    image = plot.grab().toImage()
    box = plot.view_box

    def pixel(x: float, y: float):
        return plot.mapFromScene(box.mapViewToScene(QPointF(x, y)))

    left, right = pixel(x0, 0).x() + inset, pixel(x1, 0).x() - inset
    top, bottom = pixel(x0, 0.0).y(), pixel(x0, 0.88).y()
    found = set()
    for y in range(min(top, bottom), max(top, bottom) + 1):
        for x in range(left, right + 1):
            c = image.pixelColor(x, y)
            rgb = (c.red(), c.green(), c.blue())
            if rgb in (YELLOW, MAGENTA):
                found.add(rgb)
    return found


def test_the_selected_step_is_outlined_apart_from_its_operations_other_steps(
    qtbot, opened_window, screenshot_dir
):
    view = trace(opened_window)
    opened = opened_window.opened[0]
    run = opened.report.execution.runs[0]
    starts = run.start_cycles.astype(np.float64)
    ends = np.append(starts[1:], run.total_cycles)
    view.plot.set_x_range(0, float(ends[5]))  # m4's steps, 0 to 5
    opened.selection.select_operation("m4", [0, 1, 2, 3, 4, 5], "name")
    click_at(qtbot, view, float(starts[2] + 3000), 0.4)  # inside step 2, m4/Conv_1/Convolve
    assert opened.selection.steps.tolist() == [2]
    assert opened.selection.operation == "m4"  # the click keeps the operation
    assert view.plot.spans.selected_keys.tolist() == [2]
    assert MAGENTA in outline_colours(view, starts[2], ends[2])
    for step in (1, 3):
        colours = outline_colours(view, starts[step], ends[step])
        assert colours == {YELLOW}, (step, colours)
    opened_window.grab().save(str(screenshot_dir / "execution-trace-selected-step.png"))
    # shift-click a second step: both selected steps stand apart
    click_at(qtbot, view, float(starts[4] + 500), 0.4, shift=True)
    assert view.plot.spans.selected_keys.tolist() == [2, 4]
    assert MAGENTA in outline_colours(view, starts[4], ends[4])
    assert outline_colours(view, starts[3], ends[3]) == {YELLOW}
