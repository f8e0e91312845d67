"""The Memory view model's scales without a window: the y axis fits the data, the limit is a
line or an "above" label, heat-map levels (tile limit or hottest tile) shared by the sides of
a comparison, IPU boundaries, the region split and units."""

from __future__ import annotations

import numpy as np
import pytest

from popvision_py.viewmodels.format import byte_unit_for, format_bytes
from popvision_py.viewmodels.memory import HeatScale, Layout, MemoryViewModel
from profiler_core.analysis.memory import MemoryTable
from profiler_core.model.kinds import MemoryCategory


def model_of(totals: list[int], per_ipu: int, limit: int = 1000, interleaved=None):
    by_category = np.zeros((len(MemoryCategory), len(totals)), dtype=np.int64)
    by_category[MemoryCategory.CONTROL_CODE] = totals
    split = None if interleaved is None else np.asarray(interleaved, dtype=np.int64)
    return MemoryViewModel(MemoryTable(by_category, limit, per_ipu, split))


def test_y_axis_fits_the_data_and_the_limit_above_is_named():
    model = model_of([100, 300, 200, 50], per_ipu=4)
    assert model.y_max() == pytest.approx(300 * 1.08)
    assert not model.limit_in_view()
    assert model.limit_text() == "▲ Tile limit 1,000 bytes above"
    model.set_show_max_memory(True)  # stretch the axis to the limit
    assert model.y_max() == pytest.approx(1000 * 1.08) and model.limit_in_view()
    assert model.limit_text() == "Tile limit 1,000 bytes"
    full = model_of([100, 990, 200, 50], per_ipu=4)
    assert full.limit_in_view()  # the data reaches the limit: the line is on the axis
    full.set_layout(Layout.BY_IPU)
    assert full.limit() == 4000 and full.limit_text() == "▲ IPU limit 3.9 KiB above"


def test_compared_models_share_the_y_axis_and_the_heat_scale():
    a = model_of([100, 300, 200, 50], per_ipu=4)
    b = model_of([600, 100, 100, 10], per_ipu=4, limit=2000)
    a.share_scales([a, b])
    assert a.y_max() == b.y_max() == pytest.approx(600 * 1.08)
    assert a.heat_scale is HeatScale.DATA_MAX  # the default (issue 29): from the data
    for m in (a, b):
        m.set_heat_scale(HeatScale.TILE_LIMIT)
    assert a.heat_levels() == b.heat_levels() == (0.0, 2000.0)  # the larger tile limit
    for m in (a, b):
        m.set_heat_scale(HeatScale.DATA_MAX)
    assert a.heat_levels() == b.heat_levels() == (0.0, 600.0)
    assert a.heat_fraction(1) == pytest.approx(0.5) and b.heat_fraction(0) == 1.0


def test_ipu_boundaries_only_in_tile_order():
    model = model_of([10] * 12, per_ipu=4)
    lines, labels, centres = model.ipu_boundaries()
    assert lines.tolist() == [3.5, 7.5] and labels == ["IPU 0", "IPU 1", "IPU 2"]
    assert centres.tolist() == [1.5, 5.5, 9.5]
    assert model.y_max() == pytest.approx(10 * 1.16)  # room for the IPU names
    model.set_sort_by_memory(True)
    assert model.ipu_boundaries()[0].size == 0
    model.set_sort_by_memory(False)
    model.set_layout(Layout.BY_IPU)
    assert model.ipu_boundaries()[0].size == 0


def test_region_layout_splits_interleaved_from_the_rest():
    model = model_of([100, 300, 200, 50], per_ipu=4, interleaved=[60, 300, 0, 80])
    model.set_layout(Layout.BY_REGION)
    values = model.values()
    assert values[0].tolist() == [60, 300, 0, 50]  # never more than the tile holds
    assert (values[0] + values[1]).tolist() == [100, 300, 200, 50]
    assert [label for label, _, _ in model.series()] == ["Interleaved", "Non-interleaved"]
    model.set_sort_by_memory(True)
    assert model.values()[:, 0].tolist() == [300, 0]  # the fullest tile first


@pytest.mark.parametrize(
    ("units", "value", "text", "axis"),
    [
        ("KiB", 36_900, "36.0 KiB", (1024, "KiB")),
        ("kB", 36_900, "36.9 kB", (1000, "kB")),
        ("bytes", 36_900, "36,900 bytes", (1, "bytes")),
        ("kB", 3_000_000, "3.0 MB", (1_000_000, "MB")),  # axes step up at 4 units
    ],
)
def test_units(units, value, text, axis):
    assert format_bytes(value, units=units) == text
    assert byte_unit_for(value * 1.5, units) == axis
