"""The Tile Map as a user rests the mouse on it: the tile's own numbers stay (the map's help,
set on the widget around it, shows only off the tiles), said once; and a step whose every
tile runs the same cycles (tutorial 4's m4/Reduce exchange: 1,697 on all 1,472 tiles) is
one colour that is not the hottest, with a scale that says every tile is equal."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip

from popvision_py.viewmodels.tile_map import ONE_VALUE_INDEX
from popvision_py.viewmodels.tile_map_metrics import STEP_CYCLES
from popvision_py.views.memory.legend import heat_lut
from popvision_py.views.tile_map.widget import HELP
from profiler_core.analysis.memory import memory_table
from tests.popvision_py.test_tile_map import centre_of, show_tile_map

LUT = heat_lut()


def rest_on(canvas, point: QPoint) -> str:
    """The tooltip Qt shows when the mouse rests at ``point``: the ToolTip event it sends to
    the widget under the pointer (passed on to the parents while ignored)."""
    QToolTip.hideText()
    event = QHelpEvent(QEvent.Type.ToolTip, point, canvas.mapToGlobal(point))
    QApplication.sendEvent(canvas, event)
    return QToolTip.text() if QToolTip.isVisible() else ""


def test_at_rest_a_tile_keeps_its_numbers_and_says_total_memory_once(
    qtbot, opened_window, screenshot_dir
):
    memory, canvas = show_tile_map(qtbot, opened_window)
    table = memory_table(opened_window.opened[0].report)
    total = int(table.total(True)[14])
    x, y = centre_of(canvas.model, 14, canvas.width(), canvas.height())
    qtbot.mouseMove(canvas, QPoint(x, y))
    shown = rest_on(canvas, QPoint(x, y))
    assert shown.startswith("Tile 14 (IPU 0")
    assert HELP not in shown
    assert shown.count("Total memory") == 1
    assert f"Total memory: {total:,} bytes (5.8% of 638,976)" in shown
    tips = [w for w in QApplication.topLevelWidgets() if w.inherits("QTipLabel") and w.isVisible()]
    tips[0].grab().save(str(screenshot_dir / "tile-map-tooltip-at-rest.png"))
    # off the plan (the margin left of IPU 0's first column), the map's help
    assert canvas.model.tile_at(1, 1, canvas.width(), canvas.height()) == -1
    qtbot.mouseMove(canvas, QPoint(1, 1))  # (and the pointer leaves tile 14 for later tests)
    assert "floor plan" in rest_on(canvas, QPoint(1, 1))


def test_a_step_whose_tiles_all_run_the_same_cycles_is_one_calm_colour_and_said_so(
    qtbot, opened_window, screenshot_dir
):
    window = opened_window
    memory, canvas = show_tile_map(qtbot, window)
    report = window.opened[0].report
    widget = memory.tile_map
    widget.set_metric(STEP_CYCLES)
    step = 4  # m4/Reduce/ExchangePre: every tile exchanges for 1,697 cycles
    window.opened[0].selection.select_steps([step])
    values = canvas.model.values
    assert values.min() == values.max() == 1697
    canvas.repaint()
    w, h = canvas.width(), canvas.height()
    for tile in (0, 14, 1471):
        x, y = centre_of(canvas.model, tile, w, h)
        colour = canvas.image.pixelColor(x, y).getRgb()
        assert colour == tuple(int(v) for v in LUT[ONE_VALUE_INDEX])
        assert colour != tuple(int(v) for v in LUT[255])  # not the hottest tiles' red
    low, high, title = widget.color_bar.labels()
    assert (low, high) == ("", "")
    assert title.endswith("1,697 cycles on every tile")
    name = report.graph.strings[int(report.programs.step_name[step])]
    assert name == "m4/Reduce/ExchangePre" and name in title
    bar = widget.color_bar.grab().toImage()
    middle = bar.pixelColor(bar.width() // 2, 10).getRgb()
    assert middle == tuple(int(v) for v in LUT[ONE_VALUE_INDEX])
    window.grab().save(str(screenshot_dir / "tile-map-one-value.png"))
    # a step with a spread of cycles keeps the scale from its least to its most
    window.opened[0].selection.select_steps([2])
    assert widget.color_bar.labels()[0] == "0 cycles"
    assert not canvas.model.one_value
    assert np.asarray(canvas.model.values).max() == 7034
