"""Memory report parity (issue 14): the y axis fits the data, the tile limit above it is
named, heat-map colours run from 0 to the tile limit and are shared in compare, IPU
boundaries, the region layout, units, the Compute Sets / Vertices / Exchanges tabs, and
Reload keeping the selection, zoom and tab. Expected values come from profiler_core."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor

from popvision_py.viewmodels.memory import REGION_LABELS, HeatScale, Layout, MemoryViewModel
from popvision_py.views.memory.chart import MemoryChart
from popvision_py.views.memory.legend import heat_lut
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.analysis.tile_contents import (
    compute_sets_on_tiles,
    exchanges_on_tiles,
    vertices_on_tiles,
)
from profiler_core.model.kinds import MemoryCategory
from tests.popvision_py.conftest import wait_loaded
from tests.popvision_py.test_memory_view import type_selection


def open_in(qtbot, window, *paths) -> object:
    window.open_paths(list(paths))
    wait_loaded(qtbot, window)
    window.show_view("Memory")
    return window.current_view()


def choose_layout(memory, layout: Layout) -> None:
    memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(layout))


def test_tutorial1_chart_y_range_fits_its_data(qtbot, window, tutorial1_report, screenshot_dir):
    memory = open_in(qtbot, window, tutorial1_report)
    chart = memory.chart
    table = memory_table(window.opened[0].report)
    largest = float(table.total(True).max())
    y0, y1 = chart.view_box.viewRange()[1]
    assert y0 == 0 and y1 == pytest.approx(largest * 1.08)
    assert y1 < table.bytes_per_tile  # not pinned to the 624 KiB limit: the bars fill it
    assert not chart.limit_line.isVisible()
    assert "above" in chart.limit_above.text() and chart.limit_above.isVisible()
    memory.grab().save(str(screenshot_dir / "memory-tutorial1-fits.png"))


def heat_chart(qtbot, totals: list[int], bytes_per_tile: int) -> MemoryChart:
    by_category = np.zeros((len(MemoryCategory), len(totals)), dtype=np.int64)
    by_category[MemoryCategory.ALWAYS_LIVE_VARIABLES] = totals
    model = MemoryViewModel(MemoryTable(by_category, bytes_per_tile, len(totals)))
    model.set_layout(Layout.HEAT_MAP)
    model.set_heat_scale(HeatScale.TILE_LIMIT)
    chart = MemoryChart(model)
    qtbot.addWidget(chart)
    chart.resize(900, 300)
    chart.show()
    qtbot.waitExposed(chart)
    return chart


def colour_at(chart: MemoryChart, x: float, y: float) -> QColor:
    point = chart.plot.mapFromScene(chart.view_box.mapViewToScene(QPointF(x, y)))
    return chart.plot.grab().toImage().pixelColor(point)


def test_heat_map_tile_at_half_its_memory_is_the_middle_colour(qtbot):
    chart = heat_chart(qtbot, [100, 200, 500, 50, 0, 1000, 300, 10], bytes_per_tile=1000)
    lut = heat_lut()
    middle = QColor(*lut[127][:3].tolist())
    assert colour_at(chart, 2, 0) == middle  # tile 2: 500 of 1,000 bytes
    assert colour_at(chart, 5, 0) == QColor(*lut[255][:3].tolist())  # at the limit: the top
    assert chart.model.heat_fraction(2) == 0.5
    assert "the tile limit" in chart.legend.scale_text.text()
    # On the data-max scale the hottest tile (1,000) is the top and 500 still the middle;
    # with the hottest at 500 it would be the top.
    chart.model.set_heat_scale(HeatScale.DATA_MAX)
    assert chart.model.heat_levels() == (0.0, 1000.0)
    assert "the hottest tile" in chart.legend.scale_text.text()


def test_compare_shares_the_colour_scale_and_the_y_axis(
    qtbot, window, tutorial4_report, tutorial4_variant_report, screenshot_dir
):
    memory = open_in(qtbot, window, tutorial4_report, tutorial4_variant_report)
    first, second = memory.charts
    tables = [memory_table(o.report) for o in window.opened]
    largest = max(float(t.total(True).max()) for t in tables)
    assert first.view_box.viewRange()[1] == second.view_box.viewRange()[1]
    assert first.view_box.viewRange()[1][1] == pytest.approx(largest * 1.08)
    choose_layout(memory, Layout.HEAT_MAP)
    memory.control_bar.heat_scale_box.setCurrentIndex(list(HeatScale).index(HeatScale.TILE_LIMIT))
    assert first.heat.levels == second.heat.levels == (0.0, float(tables[0].bytes_per_tile))
    memory.control_bar.heat_scale_box.setCurrentIndex(list(HeatScale).index(HeatScale.DATA_MAX))
    assert first.heat.levels == second.heat.levels == (0.0, largest)
    # the same bytes are the same colour on both sides
    hottest = int(np.argmax(tables[1].total(True)))
    assert second.model.heat_fraction(hottest) == 1.0
    assert first.model.heat_fraction(hottest) == pytest.approx(
        float(tables[0].total(True)[hottest]) / largest
    )
    memory.grab().save(str(screenshot_dir / "memory-compare-heat-shared.png"))


def test_reload_keeps_the_selection_zoom_and_tab(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    type_selection(qtbot, memory, "3,7,40-44")
    memory.chart.view_box.setXRange(100, 400, padding=0)
    memory.show_tab("Vertices")
    before = window.opened[0]
    window.actions.reload.trigger()
    wait_loaded(qtbot, window)
    assert window.opened[0] is not before  # a new OpenedReport, read again
    expected = [3, 7, 40, 41, 42, 43, 44]
    assert window.opened[0].selection.tiles.tolist() == expected
    assert memory.model.selection.tolist() == expected
    assert memory.control_bar.select_box.text() == "3,7,40-44"
    x0, x1 = memory.chart.view_box.viewRange()[0]
    assert (x0, x1) == pytest.approx((100, 400), abs=1)
    assert memory.details.currentWidget() is memory.vertices
    found = vertices_on_tiles(window.opened[0].report, np.array(expected))
    assert memory.vertices.model.rowCount() == len(found)
    assert "7 tile" in window.report_label.text()


def column_values(model, column: int, role=Qt.ItemDataRole.DisplayRole) -> list:
    return [model.index(r, column).data(role) for r in range(model.rowCount())]


def test_compute_sets_vertices_and_exchanges_tabs_show_the_analyses(
    qtbot, opened_window, screenshot_dir
):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    report = window.opened[0].report
    type_selection(qtbot, memory, "0-99")
    tiles = np.arange(100)
    memory.show_tab("Compute Sets")
    found = compute_sets_on_tiles(report, tiles)
    model = memory.compute_sets.model
    assert column_values(model, 0) == found.names
    assert column_values(model, 1, RAW_ROLE) == found.vertices.tolist()
    assert f"{int(found.vertices.sum()):,} vertices" in memory.compute_sets.heading.text()
    memory.grab().save(str(screenshot_dir / "memory-tab-compute-sets.png"))
    memory.show_tab("Vertices")
    codelets = vertices_on_tiles(report, tiles)
    model = memory.vertices.model
    assert column_values(model, 0) == codelets.names
    assert column_values(model, 4, RAW_ROLE) == codelets.code_bytes.tolist()
    memory.show_tab("Exchanges")
    exchanges = exchanges_on_tiles(report, tiles)
    model = memory.exchanges.model
    assert column_values(model, 3, RAW_ROLE) == exchanges.bytes_in.tolist()
    assert column_values(model, 4, RAW_ROLE) == exchanges.bytes_out.tolist()
    buffers = exchanges.memory[MemoryCategory.EXCHANGE_BUFFERS]
    assert f"exchange buffers: {buffers / 1024**2:,.1f} MiB ({buffers:,} bytes)" in (
        memory.exchanges.heading.text()
    )
    qtbot.keyClicks(memory.exchanges.search, "m5")
    assert all("m5" in name for name in column_values(model, 1))


def test_units_change_the_axis_and_the_tables(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    type_selection(qtbot, memory, "0,5")
    memory.show_tab("Variables")
    memory.control_bar.units_box.setCurrentText("kB")
    assert memory.chart.left_axis.labelText == "Memory (kB)"
    sizes = column_values(memory.variables.model, 6)  # bytes on the selected tiles
    raw = column_values(memory.variables.model, 6, RAW_ROLE)
    big = next(i for i, v in enumerate(raw) if 1000 <= v < 1_000_000)
    assert sizes[big] == f"{raw[big] / 1000:,.1f} kB"
    memory.control_bar.units_box.setCurrentText("bytes")
    assert memory.chart.left_axis.labelText == "Memory (bytes)"
    assert column_values(memory.variables.model, 6)[big] == f"{raw[big]:,} bytes"


def test_by_tile_draws_ipu_boundaries_and_labels(qtbot, window, four_shards_report):
    memory = open_in(qtbot, window, four_shards_report)
    chart = memory.chart
    per_ipu = memory.model.table.tiles_per_ipu
    assert chart.boundaries.lines.tolist() == [per_ipu - 0.5, 2 * per_ipu - 0.5, 3 * per_ipu - 0.5]
    chart.plot.grab()  # paints
    assert chart.boundaries.drawn_labels == ["IPU 0", "IPU 1", "IPU 2", "IPU 3"]
    memory.control_bar.sort.setChecked(True)  # ranks, not tiles: no IPU boundaries
    assert chart.boundaries.lines.size == 0
    memory.control_bar.sort.setChecked(False)


def test_region_layout_splits_each_tile_into_interleaved_and_the_rest(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    choose_layout(memory, Layout.BY_REGION)
    report = window.opened[0].report
    interleaved = report.memory.interleaved
    total = memory_table(report).total(True)
    values = memory.chart.bars.values
    assert values.shape == (2, total.size)
    assert np.array_equal(values[0], interleaved)
    assert np.array_equal(values[0] + values[1], total)
    assert memory.chart.legend.labels == list(reversed(REGION_LABELS))
    assert "Interleaved" in memory.model.hover_text(0)
