"""The Qt-free view models: pixel aggregation, memory state, summary content, tables."""

from __future__ import annotations

import numpy as np
import pytest

from popvision_py.viewmodels.memory import Layout, MemoryViewModel
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.pixels import column_ranges, column_tiles, stacked_column_image
from popvision_py.viewmodels.summary import summary_sections
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report


@pytest.mark.parametrize("width", [1, 7, 100, 333, 1000, 5000])
@pytest.mark.parametrize(("x0", "x1"), [(-0.5, 999.5), (100.2, 160.7), (-30.0, 40.0)])
def test_each_pixel_column_shows_the_largest_tile_it_covers(width, x0, x1):
    totals = np.random.default_rng(width).integers(0, 10_000, 1000)
    shown = column_tiles(totals, x0, x1, width)
    lo, hi = column_ranges(1000, x0, x1, width)
    for column in range(width):
        if hi[column] == lo[column]:
            assert shown[column] == -1
            continue
        covered = np.arange(lo[column], hi[column])
        assert shown[column] == covered[np.argmax(totals[covered])]
    # Every tile in the visible range belongs to exactly one column when zoomed out.
    if (x1 - x0) / width > 1:
        visible = np.arange(max(0, int(np.ceil(x0 + 0.5))), min(1000, int(np.ceil(x1 + 0.5))))
        assert np.array_equal(
            np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)]), visible
        )


def test_a_hot_tile_is_never_averaged_away():
    totals = np.full(23_552, 100)
    totals[12_345] = 1_000_000
    shown = column_tiles(totals, -0.5, 23_551.5, 800)
    assert 12_345 in shown


def test_stacked_image_heights_follow_the_values():
    values = np.array([[10, 0], [20, 40]])
    colors = np.array([[255, 0, 0, 255], [0, 0, 255, 255]], np.uint8)
    image = stacked_column_image(values, np.array([0, 1]), 40.0, 40, colors)
    red = (image[:, :, 0] == 255).sum(axis=0)
    blue = (image[:, :, 2] == 255).sum(axis=0)
    assert red.tolist() == [10, 0] and blue.tolist() == [20, 40]
    assert image[0, 0, 0] == 255  # row 0 is the bottom of the stack


def small_table() -> MemoryTable:
    by_category = np.zeros((len(MemoryCategory), 8), np.int64)
    by_category[MemoryCategory.ALWAYS_LIVE_VARIABLES] = [10, 20, 30, 40, 50, 60, 70, 80]
    by_category[MemoryCategory.ALIGNMENT_GAPS] = [1, 0, 0, 5, 0, 0, 0, 9]
    return MemoryTable(by_category, bytes_per_tile=75, tiles_per_ipu=4)


def test_memory_view_model_selects_typed_tiles_and_reports_bad_text():
    model = MemoryViewModel(small_table())
    seen = []
    model.changed.connect(seen.append)
    assert model.select_text("0,2-3")
    assert model.selection.tolist() == [0, 2, 3]
    assert not model.select_text("3-1")
    assert "lower tile to the higher" in model.selection_error
    assert model.selection.tolist() == [0, 2, 3]  # a bad entry keeps the selection
    assert not model.select_text("0,8")
    assert "tiles go from 0 to 7" in model.selection_error
    assert seen == ["selection"] * 3


def test_memory_view_model_breakdown_sorting_and_layouts():
    model = MemoryViewModel(small_table())
    model.select_tiles(np.array([3, 7]))
    breakdown = model.breakdown()
    assert breakdown.headers == ["Tile 3", "Tile 7"]
    assert breakdown.totals.tolist() == [45, 89]
    model.set_include_gaps(False)
    assert model.breakdown().totals.tolist() == [40, 80]
    model.set_sum_selection(True)
    assert model.breakdown().headers == ["Sum of 2 tiles"]
    model.set_sort_by_memory(True)
    assert model.order().tolist() == [7, 6, 5, 4, 3, 2, 1, 0]
    assert model.tile_of(0) == 7
    assert "Tile 7 (IPU 1, tile 3 on the IPU)" in model.hover_text(0)
    model.set_layout(Layout.BY_IPU)
    assert model.values().sum(axis=0).tolist() == [100, 260]
    assert model.tiles_at(1).tolist() == [4, 5, 6, 7]
    model.set_layout(Layout.HEAT_MAP)
    assert model.heat_map().tolist() == [[10, 20, 30, 40], [50, 60, 70, 80]]
    assert small_table().over_limit().tolist() == [7] and model.over_limit_count() == 1


def test_column_table_sorts_and_searches_by_index_arrays():
    table = ColumnTable(
        [
            Column("name", ["b", "a", "c", "a"]),
            Column("bytes", np.array([5, 9, 1, 9]), kind="count"),
        ]
    )
    table.sort(1, descending=True)
    assert table.rows.tolist() == [1, 3, 0, 2]  # ties keep their order
    table.sort(0)
    assert [table.display(r, 0) for r in range(4)] == ["a", "a", "b", "c"]
    table.search("A")
    assert table.rows.tolist() == [1, 3]


def test_summary_numbers_come_from_the_report(tutorial4_report):
    report = open_report(tutorial4_report)
    sections = {
        s.title: {r.label: r.value for r in s.rows} for s in summary_sections(OpenedReport(report))
    }
    table = memory_table(report)
    total = int(table.total(True).sum())
    capacity = report.target.bytes_per_tile * report.target.num_tiles
    assert (
        f"({total:,} bytes), {100 * total / capacity:.2f}% of capacity"
        in sections["Memory"]["Total memory used"]
    )
    assert sections["Memory"]["Tiles over the limit"] == "0"
    assert sections["Target"]["IPUs"] == "1" and sections["Target"]["Total tiles"] == "1,472"
    run = report.execution.runs[0]
    assert sections["Execution"]["Run 0 (tutorial4)"].startswith(f"{run.total_cycles:,} cycles")
    peak = report.liveness.always_live_bytes + int(report.liveness.step_live_bytes.max())
    assert f"({peak:,} bytes)" in sections["Liveness"]["Peak liveness"]
    # the serialized graph (autoReport.all writes it since issue 41) is a report file too
    files = {"profile.pop", "debug.cbor", "serialized_graph.bundle"}
    assert set(sections["Report files"]) == files
    assert memory_table(report).num_tiles == 1472
