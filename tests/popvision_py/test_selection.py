"""The one selection of a report: what views write, what they are told, what the bar says."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.selection import ReportSelection


def _recorder(selection: ReportSelection) -> list[str]:
    seen: list[str] = []
    selection.changed.connect(seen.append)
    return seen


def test_shift_click_toggles_steps_in_the_order_picked() -> None:
    selection = ReportSelection()
    seen = _recorder(selection)
    selection.select_step(7)
    selection.select_step(3, add=True)
    selection.select_step(9, add=True)
    assert selection.steps.tolist() == [7, 3, 9]
    assert selection.step == 7
    selection.select_step(3, add=True)  # a second shift-click drops it
    assert selection.steps.tolist() == [7, 9]
    selection.select_step(5)
    assert selection.steps.tolist() == [5]
    assert seen == ["steps"] * 5


def test_only_real_changes_are_announced() -> None:
    selection = ReportSelection()
    seen = _recorder(selection)
    selection.select_tiles([5, 0, 5])
    selection.select_tiles(np.array([0, 5]))
    selection.select_operation("matmul", [4, 2, 2])
    selection.select_operation("matmul", [2, 4])
    selection.select_run(0)
    assert selection.tiles.tolist() == [0, 5]
    assert selection.operation_steps.tolist() == [2, 4]
    assert seen == ["tiles", "operation"]


def test_a_new_run_forgets_the_cycle_range() -> None:
    selection = ReportSelection()
    selection.select_range((900, 100))
    assert selection.cycle_range == (100, 900)
    selection.select_run(2)
    assert selection.cycle_range is None and selection.run == 2


def test_the_status_line_names_what_is_selected() -> None:
    selection = ReportSelection()
    assert selection.describe() == "run 0"
    selection.select_tiles(range(23))
    selection.select_steps([1, 2, 3, 4, 5])
    selection.select_operation("poplin::matMul", [1])
    selection.select_range((0, 12000))
    assert selection.describe() == (
        "run 0 · 23 tiles · steps 1, 2, 3, 4, … · operation poplin::matMul · cycles 0-12,000"
    )
    selection.clear()
    assert selection.describe() == "run 0"


def test_memory_tile_selection_reaches_the_report_selection(opened_window) -> None:
    memory = opened_window.view("Memory")
    opened_window.show_view("Memory")
    assert memory.select_text("0,5,100-120")
    selection = opened_window.opened[0].selection
    assert selection.tiles.tolist() == [0, 5, *range(100, 121)]
    assert "23 tiles" in opened_window.report_label.text()
