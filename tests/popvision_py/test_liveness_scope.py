"""The Liveness page's Scope and the report's tile selection say the same thing: tiles
picked in Memory before the page is first shown make its scope "Selected tiles", and
choosing All IPUs (or one IPU) drops the tile selection instead of keeping it unseen."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.liveness_tiles import liveness_on_tiles
from tests.popvision_py.test_liveness_view import show_liveness
from tests.popvision_py.test_memory_view import type_selection


def test_tiles_picked_before_the_first_show_are_the_scope(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    type_selection(qtbot, window.current_view(), "5,7-9")
    view = show_liveness(window)  # built now, after the tiles were picked
    controls = view.control_bar
    assert controls.scope_box.currentText() == "Selected tiles"
    assert controls.select_box.text() == "5,7-9"
    expected = liveness_on_tiles(window.opened[0].report, np.array([5, 7, 8, 9]))
    assert np.array_equal(view.chart.area.curve, expected.live_bytes(True))
    assert "4 selected tile(s)" in view.chart.title.text()


def test_choosing_all_ipus_drops_the_tile_selection_everywhere(qtbot, opened_window):
    window = opened_window
    view = show_liveness(window)
    controls = view.control_bar
    type_selection(qtbot, view, "0-3")
    assert controls.scope_box.currentText() == "Selected tiles"
    for scope in ("All IPUs", "IPU 0"):
        type_selection(qtbot, view, "0-3")
        controls.scope_box.setCurrentText(scope)
        assert controls.scope_box.currentText() == scope
        assert window.opened[0].selection.tiles.size == 0
        assert controls.select_box.text() == ""
        assert "selected tile" not in view.chart.title.text()
        whole = liveness_table(window.opened[0].report)
        assert np.array_equal(view.chart.area.curve, whole.live_bytes(True))  # one IPU: all
    window.show_view("Memory")
    memory = window.current_view()
    assert memory.model.selection.size == 0 and memory.control_bar.select_box.text() == ""
