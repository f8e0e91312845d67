"""The Tile Map: its view model without a window (plan, pixels, picking, 16 IPUs side by
side), and as the Memory report's "Tile map" layout on tutorial 4 -- tile 14 drawn in the
top colour, hover numbers equal to profiler_core's, click and drag select tiles."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication

from popvision_py.viewmodels.memory import Layout
from popvision_py.viewmodels.tile_map import TileMapModel
from popvision_py.viewmodels.tile_map_metrics import STEP_CYCLES, VARIABLE
from popvision_py.views.memory.legend import heat_lut
from profiler_core.analysis.memory import memory_table
from profiler_core.analysis.tile_values import variable_bytes_per_tile
from profiler_core.model.kinds import MemoryCategory

LUT = heat_lut()
BACK, EDGE = (0, 0, 0, 255), (255, 255, 255, 255)


def centre_of(model: TileMapModel, tile: int, width: int, height: int) -> tuple[int, int]:
    """The pixel at the centre of ``tile``'s cell, from the plan's geometry (by hand)."""
    g = model.geometry(width, height)
    ipu, row, column = model.tile_place(tile)
    x0, y0 = g.ipu_origin(ipu, model.layout)
    return int(x0 + (column + 0.5) * g.scale), int(y0 + (row + 0.5) * g.scale)


def test_every_tile_of_one_ipu_is_drawn_once_on_its_place():
    model = TileMapModel(1, 1472)
    index = model.tile_index_image(920, 640)
    assert set(np.unique(index).tolist()) - {-1} == set(range(1472))
    for tile in (0, 1, 14, 32, 1471):
        x, y = centre_of(model, tile, 920, 640)
        assert index[y, x] == tile
    assert model.tile_place(33) == (0, 1, 1)  # tiles run down each column of 32


def test_colours_scale_to_the_largest_tile_and_selection_is_outlined():
    model = TileMapModel(1, 1472)
    values = np.arange(1472, dtype=np.float64)
    model.set_values(values, "Test", "bytes")
    image = model.rgba(920, 640, LUT, BACK, EDGE)
    assert image.dtype == np.uint8 and image.shape == (640, 920, 4)
    x, y = centre_of(model, 1471, 920, 640)
    assert tuple(image[y, x]) == tuple(LUT[255])
    x, y = centre_of(model, 736, 920, 640)
    assert tuple(image[y, x]) == tuple(LUT[round(736 / 1471 * 255)])
    model.select_tiles([736])
    image = model.rgba(920, 640, LUT, BACK, EDGE)
    index = model.tile_index_image(920, 640)
    outline = np.all(image == EDGE, axis=2)
    assert outline.any() and set(np.unique(index[outline]).tolist()) == {736}


def test_sixteen_ipus_sit_side_by_side_and_a_drag_picks_a_rectangle():
    model = TileMapModel(16, 1472)
    g = model.geometry(1400, 600)
    assert g.ipu_columns * g.ipu_rows >= 16 and g.ipu_columns > 1
    index = model.tile_index_image(1400, 600)
    assert np.unique(index[index >= 0]).size == 16 * 1472
    # a drag over IPU 5's first two columns picks its tiles 0-63
    x0, y0 = centre_of(model, 5 * 1472, 1400, 600)
    x1, y1 = centre_of(model, 5 * 1472 + 63, 1400, 600)
    tiles = model.tiles_in_rect(x0, y0, x1, y1, 1400, 600)
    assert tiles.tolist() == list(range(5 * 1472, 5 * 1472 + 64))
    assert "IPU 5" in model.hover_text(5 * 1472 + 40)


def show_tile_map(qtbot, window):
    window.show_view("Memory")
    memory = window.current_view()
    memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(Layout.TILE_MAP))
    assert memory.tile_map.isVisible() and not memory.chart.isVisible()
    canvas = memory.tile_map.canvas
    qtbot.waitUntil(lambda: canvas.image is not None and canvas.image.width() == canvas.width())
    return memory, canvas


def test_tile_14_is_the_hottest_and_its_hover_equals_profiler_core(
    qtbot, opened_window, screenshot_dir
):
    window = opened_window
    memory, canvas = show_tile_map(qtbot, window)
    table = memory_table(window.opened[0].report)
    total = table.total(True)
    w, h = canvas.width(), canvas.height()
    x, y = centre_of(canvas.model, 14, w, h)
    assert canvas.image.pixelColor(x, y).getRgb() == tuple(int(v) for v in LUT[255])
    x0, y0 = centre_of(canvas.model, 0, w, h)
    level = round((total[0] - total.min()) / (total.max() - total.min()) * 255)
    assert canvas.image.pixelColor(x0, y0).getRgb() == tuple(int(v) for v in LUT[level])
    qtbot.mouseMove(canvas, QPoint(x, y))
    assert canvas.hover_text.startswith("Tile 14 (IPU 0")
    assert f"Total memory: {int(total[14]):,} bytes" in canvas.hover_text
    buffers = int(table.by_category[MemoryCategory.EXCHANGE_BUFFERS, 14])
    assert f"Exchange buffers: {buffers / 1024:,.1f} KiB" in canvas.hover_text
    low, high, title = memory.tile_map.color_bar.labels()
    assert (low, high) == (f"{total.min() / 1024:,.1f} KiB", f"{total.max() / 1024:,.1f} KiB")
    assert title == "Total memory"
    # click selects the tile in the shared selection, and the Memory details follow
    qtbot.mouseClick(canvas, Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    assert window.opened[0].selection.tiles.tolist() == [14]
    assert memory.model.selection.tolist() == [14]
    window.grab().save(str(screenshot_dir / "tile-map-1-ipu.png"))
    window.set_theme("dark")
    QApplication.processEvents()
    canvas.repaint()
    dark_back = canvas.image.pixelColor(2, 2).name()
    assert dark_back == "#1e1f22"  # the dark chart background around the plan
    window.grab().save(str(screenshot_dir / "tile-map-1-ipu-dark.png"))
    window.set_theme("light")


def test_colour_by_a_variable_or_the_selected_step(qtbot, opened_window):
    window = opened_window
    memory, canvas = show_tile_map(qtbot, window)
    widget = memory.tile_map
    report = window.opened[0].report
    widget.set_metric(VARIABLE)
    qtbot.keyClicks(widget.variable_box, "m1")
    qtbot.keyClick(widget.variable_box, Qt.Key.Key_Return)
    names = report.graph.strings.take(report.graph.var_name)
    expected = variable_bytes_per_tile(report, names.index("m1"))
    assert canvas.model.values.tolist() == expected.tolist()
    assert canvas.model.label == "Bytes of m1"
    widget.set_metric(STEP_CYCLES)
    assert "Select a program step" in widget.problem.text()
    compute = int(np.flatnonzero(report.programs.step_cs >= 0)[0])
    window.opened[0].selection.select_steps([compute])
    cs = report.programs.step_cs[compute]
    rows = report.programs.cst_cs == cs
    assert int(canvas.model.values.max()) == int(report.programs.cst_cycles[rows].max())
    assert widget.color_bar.labels()[1].endswith("cycles")


def test_metrics_come_from_profiler_core_without_a_window(tutorial4_report):
    from popvision_py.viewmodels.tile_map_metrics import (
        TOTAL,
        find_variable,
        memory_details,
        metric_names,
        metric_values,
    )
    from profiler_core.report import open_report

    report = open_report(tutorial4_report)
    table = memory_table(report)
    names = metric_names()
    assert names[0] == TOTAL and MemoryCategory.EXCHANGE_BUFFERS.label in names
    by_category = np.asarray(report.memory.by_category)
    assert metric_values(report, table, TOTAL).values.tolist() == by_category.sum(0).tolist()
    buffers = metric_values(report, table, MemoryCategory.EXCHANGE_BUFFERS.label)
    assert buffers.values.tolist() == by_category[MemoryCategory.EXCHANGE_BUFFERS].tolist()
    assert metric_values(report, table, VARIABLE).problem == "Type a variable's name."
    var_names = report.graph.strings.take(report.graph.var_name)
    assert find_variable(report, "M2") == var_names.index("m2")
    # two variables are named "partials": the larger (m4's) is picked
    partials = [i for i, n in enumerate(var_names) if n == "partials"]
    largest = max(partials, key=lambda i: int(report.graph.var_bytes[i]))
    assert find_variable(report, "partials") == largest
    assert find_variable(report, "no such variable") == -1
    lines = memory_details(table)(14)
    assert lines[0] == f"Total memory: {int(by_category[:, 14].sum()):,} bytes (5.8% of 638,976)"
    assert len(lines) == 5


def test_the_widget_alone_follows_the_selected_step_for_the_execution_trace(qtbot, opened_window):
    """As the Execution Trace's step detail would embed it: step cycles, following the
    shared selection's current step, with no Memory report involved."""
    from popvision_py.views.tile_map.widget import TileMapWidget

    opened = opened_window.opened[0]
    report = opened.report
    widget = TileMapWidget(metrics=[STEP_CYCLES])
    qtbot.addWidget(widget)
    assert widget.show_report(opened) == ""
    assert widget.problem.text() == "Select a program step first."
    steps = np.flatnonzero(report.programs.step_cs >= 0)
    for step in steps[:2].tolist():
        opened.selection.select_steps([step])
        rows = report.programs.cst_cs == report.programs.step_cs[step]
        expected = np.zeros(1472, dtype=np.int64)
        expected[report.programs.cst_tile[rows]] = report.programs.cst_cycles[rows]
        assert widget.model.values.tolist() == expected.tolist()
        assert widget.model.label.startswith(f"Cycles of step {step} (OnTileExecute")
    widget.clear()
    opened.selection.select_steps([int(steps[0])])  # no longer followed: nothing breaks
    assert widget.model is None
