"""Issue 29 point 3: the Tile Map at full height on its first show (it was a ~20 px strip
until a resize), a picked tile outlined so it is seen on any colour, labels not clipped; the
Memory heat map scaled to the data by default (the tile limit marked on its legend) and its
selected tiles marked."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from popvision_py.app.main_window import HOME
from popvision_py.viewmodels.colors import SELECTION_OUTLINE
from popvision_py.viewmodels.memory import HeatScale, Layout
from popvision_py.views.memory.legend import heat_lut
from profiler_core.analysis.memory import memory_table
from tests.popvision_py.test_tile_map import centre_of

MAGENTA = QColor(*SELECTION_OUTLINE[:3])


def choose(memory, layout: Layout) -> None:
    memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(layout))


def first_pages_grabbed(window) -> None:
    """As ``make run`` and a user's first minutes do: pages shown (and painted) one by one
    before Memory, whose chart area was then laid out at its minimum."""
    for title in (HOME, "Summary", "Insights", "Memory"):
        window.show_view(title)
        window.grab()


def test_the_tile_map_takes_the_charts_height_on_its_first_show(qtbot, opened_window, tmp_path):
    window = opened_window
    first_pages_grabbed(window)
    memory = window.current_view()
    choose(memory, Layout.TILE_MAP)
    canvas = memory.tile_map.canvas
    qtbot.waitUntil(lambda: canvas.image is not None and canvas.height() > 100, timeout=3000)
    qtbot.wait(50)
    window.grab().save(str(tmp_path / "tile-map.png"))
    top, details = memory.splitter.sizes()
    assert top >= 0.55 * (top + details)  # chart on top: 3/5 of the page
    assert canvas.height() >= 0.4 * (top + details)
    # the controls row and the colour bar are whole, not cut by a squeezed layout
    for widget in (memory.tile_map.metric_box, memory.tile_map.color_bar):
        assert widget.height() >= widget.sizeHint().height()


def test_a_picked_tile_is_outlined_two_pixels_deep_in_magenta(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    choose(memory, Layout.TILE_MAP)
    canvas = memory.tile_map.canvas
    qtbot.waitUntil(lambda: canvas.image is not None and canvas.image.width() == canvas.width())
    w, h = canvas.width(), canvas.height()
    x, y = centre_of(canvas.model, 700, w, h)
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert window.opened[0].selection.tiles.tolist() == [700]
    canvas.repaint()
    image = canvas.image
    index = canvas.model.tile_index_image(w, h)
    ys, xs = np.nonzero(index == 700)
    left, top = int(xs.min()), int(ys.min())
    # the cell's outer two pixels are magenta, its middle keeps the tile's colour
    assert image.pixelColor(left, y) == MAGENTA and image.pixelColor(left + 1, y) == MAGENTA
    assert image.pixelColor(x, top) == MAGENTA and image.pixelColor(x, top + 1) == MAGENTA
    assert image.pixelColor(x, y) != MAGENTA
    # and nothing else is
    others = (index != 700) & (index >= 0)
    ys, xs = np.nonzero(others)
    sample = [(int(a), int(b)) for a, b in zip(xs[::97], ys[::97], strict=True)]
    assert all(image.pixelColor(a, b) != MAGENTA for a, b in sample)


def heat_colour(chart, x: float, y: float) -> QColor:
    """The colour drawn at tile ``x``, zoomed so that the tile is many pixels wide."""
    chart.plot.setXRange(x - 20, x + 20, padding=0)
    QApplication.processEvents()
    point = chart.plot.mapFromScene(chart.view_box.mapViewToScene(QPointF(x, y)))
    return chart.plot.grab().toImage().pixelColor(point)


def test_the_heat_map_scales_to_the_data_and_marks_the_limit_and_the_selection(
    qtbot, opened_window
):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    choose(memory, Layout.HEAT_MAP)
    chart = memory.chart
    table = memory_table(window.opened[0].report)
    totals = np.asarray(table.total(True), dtype=np.float64)
    hottest = int(np.argmax(totals))
    assert memory.control_bar.heat_scale() is HeatScale.DATA_MAX
    assert chart.heat.levels == (0.0, float(totals.max()))
    lut = heat_lut()
    QApplication.processEvents()
    assert heat_colour(chart, hottest, 0) == QColor(*lut[255][:3].tolist())  # red, not navy
    coldest = int(np.argmin(totals))
    level = totals[coldest] / totals.max() * 255  # one LUT step either way: rounding
    near = {QColor(*lut[k][:3].tolist()).name() for k in (int(level), int(level) + 1)}
    assert heat_colour(chart, coldest, 0).name() in near
    # tutorial 4 is far below 624 KiB a tile: the legend says the limit is above the scale
    share = totals.max() / table.bytes_per_tile
    assert "Tile limit: 624.0 KiB (above the scale: the fullest tile uses " in (
        chart.legend.scale_text.text()
    )
    assert f"uses {share:.0%} of it)" in chart.legend.scale_text.text()
    # with the scale at the tile limit, the limit is the scale's end: marked on the strip
    memory.control_bar.heat_scale_box.setCurrentIndex(list(HeatScale).index(HeatScale.TILE_LIMIT))
    assert "(the mark on the scale)" in chart.legend.scale_text.text()
    strip = chart.legend.scale.pixmap().toImage()
    assert strip.pixelColor(strip.width() - 1, 7) == MAGENTA
    assert strip.pixelColor(20, 7) != MAGENTA
    # selected tiles: a magenta line through each one's cell
    memory.control_bar.heat_scale_box.setCurrentIndex(0)
    memory.select_text("5,900")
    xs, ys = chart.heat_marks.getData()
    assert xs.tolist() == [5, 5, 900, 900] and ys.tolist() == [-0.5, 0.5, -0.5, 0.5]
    assert heat_colour(chart, 900, 0.2) == MAGENTA
    assert heat_colour(chart, 905, 0.2) != MAGENTA
    memory.select_text("")
    assert chart.heat_marks.getData()[0] is None or len(chart.heat_marks.getData()[0]) == 0


@pytest.fixture(autouse=True)
def _light(opened_window):
    opened_window.set_theme("light")
