"""The Memory report driven through the real window: typing tiles, options, chart gestures,
details tables and exports. Expected numbers come from profiler_core.analysis.memory."""

from __future__ import annotations

import csv

import numpy as np
from PySide6.QtCore import QPointF, Qt

from popvision_py.viewmodels.memory import Layout
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.analysis.memory import memory_table, variables_on_tiles
from profiler_core.analysis.tiles import parse_tile_selection
from profiler_core.model.kinds import MemoryCategory

TYPED = "0,5,100-120"


def shown_table(model) -> tuple[list[str], list[list[str]]]:
    headers = [model.headerData(c, Qt.Orientation.Horizontal) for c in range(model.columnCount())]
    rows = [
        [model.index(r, c).data() for c in range(model.columnCount())]
        for r in range(model.rowCount())
    ]
    return headers, rows


def as_int(text: str) -> int:
    return int(text.replace(",", ""))


def type_selection(qtbot, memory, text: str) -> None:
    box = memory.control_bar.select_box
    box.clear()
    qtbot.keyClicks(box, text)
    qtbot.keyClick(box, Qt.Key.Key_Return)


def test_memory_view_selects_tiles_typed_in_the_box(qtbot, opened_window, screenshot_dir):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    assert memory.title == "Memory"
    type_selection(qtbot, memory, TYPED)
    report = window.opened[0].report
    table = memory_table(report)
    expected_tiles = np.r_[0, 5, 100:121]
    assert np.array_equal(parse_tile_selection(TYPED, table.num_tiles), expected_tiles)
    headers, rows = shown_table(memory.breakdown.model)
    assert headers == ["Category"] + [f"Tile {t} (bytes)" for t in expected_tiles]
    categories = table.categories(True)
    assert [r[0] for r in rows] == [c.label for c in categories] + ["Total"]
    shown = np.array([[as_int(v) for v in r[1:]] for r in rows])
    assert np.array_equal(shown[:-1], table.rows(True)[:, expected_tiles])
    assert np.array_equal(shown[-1], table.total(True)[expected_tiles])
    heading = memory.breakdown.heading.text()
    assert f"23 tile(s) selected: {TYPED}" in heading
    assert f"{int(table.breakdown(expected_tiles).sum()):,} bytes" in heading
    memory.grab().save(str(screenshot_dir / "memory-selected.png"))


def test_include_gaps_changes_the_totals_by_exactly_the_gaps(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    type_selection(qtbot, memory, TYPED)
    memory.breakdown.sum_box.setChecked(True)
    _, with_gaps = shown_table(memory.breakdown.model)
    qtbot.mouseClick(memory.control_bar.include_gaps, Qt.MouseButton.LeftButton)
    assert not memory.control_bar.include_gaps.isChecked()
    _, without = shown_table(memory.breakdown.model)
    table = memory_table(window.opened[0].report)
    tiles = parse_tile_selection(TYPED, table.num_tiles)
    gaps = sum(int(table.by_category[c, tiles].sum()) for c in MemoryCategory if c.is_gap)
    assert gaps > 0
    assert as_int(with_gaps[-1][1]) - as_int(without[-1][1]) == gaps
    assert "Gaps (alignment)" not in [row[0] for row in without]
    assert "excluding gaps" in memory.breakdown.heading.text()
    # The chart's bars lose the gap rows too.
    assert memory.chart.bars.values.shape[0] == len(MemoryCategory) - 2


def test_variables_tab_lists_the_variables_on_the_selection(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    type_selection(qtbot, memory, "0,5")
    memory.details.setCurrentWidget(memory.variables)
    report = window.opened[0].report
    expected = variables_on_tiles(report, np.array([0, 5]), report.debug_or_none())
    model = memory.variables.model
    assert model.rowCount() == len(expected)
    names = [model.index(r, 0).data() for r in range(model.rowCount())]
    on_tiles = [model.index(r, 6).data(RAW_ROLE) for r in range(model.rowCount())]
    assert names == expected.names and on_tiles == expected.bytes.tolist()
    assert model.index(0, 1).data() == expected.debug_names[0]
    assert {model.index(r, 9).data() for r in range(model.rowCount())} <= {"yes", "no"}
    memory.variables.table.sortByColumn(6, Qt.SortOrder.AscendingOrder)
    ascending = [model.index(r, 6).data(RAW_ROLE) for r in range(model.rowCount())]
    assert ascending == sorted(expected.bytes.tolist())
    qtbot.keyClicks(memory.variables.search, "m5")
    shown = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert shown and all("m5" in name for name in shown)
    assert memory.variables.count.text() == f"{len(shown)} of {len(expected)} variables"


def chart_point(chart, x: float, y: float):
    scene = chart.view_box.mapViewToScene(QPointF(x, y))
    return chart.plot.mapFromScene(scene)


def test_shift_click_adds_tiles_and_hover_names_the_tile(qtbot, opened_window):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    chart = memory.chart
    chart.view_box.setXRange(99.5, 109.5, padding=0)  # ten tiles, so a click hits one
    qtbot.wait(20)
    chart.plot.grab()
    qtbot.mouseClick(
        chart.plot.viewport(), Qt.MouseButton.LeftButton, pos=chart_point(chart, 102, 1000)
    )
    assert memory.model.selection.tolist() == [102]
    qtbot.mouseClick(
        chart.plot.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ShiftModifier,
        chart_point(chart, 106, 1000),
    )
    assert memory.model.selection.tolist() == [102, 106]
    assert memory.control_bar.select_box.text() == "102,106"
    table = memory_table(window.opened[0].report)
    text = chart.text_under(chart.view_box.mapViewToScene(QPointF(104, 1000)))
    assert text.startswith("Tile 104 (IPU 0, tile 104 on the IPU)")
    assert f"Total: {int(table.total(True)[104]) / 1024:.1f} KiB" in text
    assert "Exchange buffers" in text


def test_zoom_is_kept_within_the_tiles_and_redraws_to_the_pixels(qtbot, opened_window):
    memory = opened_window.view("Memory")
    opened_window.show_view("Memory")
    chart = memory.chart
    chart.plot.grab()
    before = chart.bars.paint_count
    chart.view_box.scaleBy(x=0.5)
    chart.view_box.setXRange(-500, 3000, padding=0)  # limits keep the range on the tiles
    chart.plot.grab()
    (x0, x1), _ = chart.view_box.viewRange()
    assert x0 >= -0.5 and x1 <= 1471.5
    assert chart.bars.paint_count > before
    assert chart.bars.shown.size <= chart.plot.width()


def test_layouts_sorting_and_limit_line(qtbot, opened_window, screenshot_dir):
    window = opened_window
    window.show_view("Memory")
    memory = window.current_view()
    chart = memory.chart
    table = memory_table(window.opened[0].report)
    # Issue 14: the y axis fits the data by default; tutorial 4's tiles use ~6% of their
    # memory, so the limit is above the axis and a label at the top says so.
    assert not memory.control_bar.show_max.isChecked()
    assert chart.view_box.viewRange()[1][1] < table.bytes_per_tile
    assert not chart.limit_line.isVisible() and not chart.limit_label.isVisible()
    assert chart.limit_above.isVisible()
    assert chart.limit_above.text() == "▲ Tile limit 624.0 KiB above"
    # named in the title row, above the plot: it cannot cover the bars
    above = chart.limit_above.mapTo(chart, chart.limit_above.rect().bottomLeft()).y()
    assert above <= chart.plot.mapTo(chart, chart.plot.rect().topLeft()).y()
    qtbot.mouseClick(memory.control_bar.show_max, Qt.MouseButton.LeftButton)
    assert chart.limit_line.isVisible() and chart.limit_line.value() == table.bytes_per_tile
    assert not chart.limit_above.isVisible() and chart.limit_label.isVisible()
    assert chart.limit_label.textItem.toPlainText() == "Tile limit 624.0 KiB"
    qtbot.mouseClick(memory.control_bar.sort, Qt.MouseButton.LeftButton)
    assert chart.bars.totals[0] == table.total(True).max()
    assert chart.bottom_axis.labelText.startswith("Tiles, sorted by memory")
    memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(Layout.BY_IPU))
    assert np.array_equal(chart.bars.totals, table.per_ipu(True).sum(axis=1))
    memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(Layout.HEAT_MAP))
    assert chart.heat.isVisible() and not chart.bars.isVisible()
    assert chart.heat.image.shape == (1, 1472)
    assert chart.legend.scale.isVisible()
    memory.grab().save(str(screenshot_dir / "memory-heat-map.png"))
    memory.control_bar.layout_box.setCurrentIndex(0)
    assert chart.legend.labels == [c.label for c in reversed(table.categories(True))]


def test_export_png_and_csv(qtbot, opened_window, tmp_path):
    window = opened_window
    window.show_view("Memory")
    assert window.export_png(tmp_path / "memory.png")
    assert (tmp_path / "memory.png").stat().st_size > 10_000
    assert window.export_csv(tmp_path / "memory.csv")
    with open(tmp_path / "memory.csv", newline="") as stream:
        rows = list(csv.reader(stream))
    table = memory_table(window.opened[0].report)
    assert rows[0][:3] == ["tile", "ipu", "Always-live variables"] and rows[0][-1] == "total"
    assert len(rows) == table.num_tiles + 1
    assert [int(v) for v in rows[1 + 14][2:-1]] == table.rows(True)[:, 14].tolist()
    assert int(rows[1 + 14][-1]) == int(table.total(True)[14])
