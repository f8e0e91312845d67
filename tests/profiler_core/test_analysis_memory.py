"""Memory analysis: per tile by category, per IPU, over the limit, and variables on tiles,
checked against sums worked out from the factory's regions and vertex counts."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.memory import memory_table, variables_on_tiles
from profiler_core.errors import ReportError
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report
from tests.profiler_core.factories import (
    CONTROL_CODE_BYTES,
    STACK_BYTES,
    VERTEX_DESCRIPTOR_BYTES,
    VERTEX_STATE_BYTES,
    element_size,
    make_report,
)


def test_memory_per_tile_follows_the_factory_rules(report):
    profile, _ = report
    table = memory_table(profile)
    g = profile.graph
    vertices = np.zeros(table.num_tiles, np.int64)
    for tile, count in zip(g.vc_tile.tolist(), g.vc_count.tolist(), strict=True):
        vertices[tile] += count
    assert (
        table.by_category[MemoryCategory.VERTEX_STATE].tolist()
        == (vertices * VERTEX_STATE_BYTES).tolist()
    )
    assert (
        table.by_category[MemoryCategory.VERTEX_DESCRIPTORS].tolist()
        == (vertices * VERTEX_DESCRIPTOR_BYTES).tolist()
    )
    assert (table.by_category[MemoryCategory.CONTROL_CODE] == CONTROL_CODE_BYTES).all()
    assert (table.by_category[MemoryCategory.STACK] == STACK_BYTES).all()
    variables = sum(int(table.by_category[c].sum()) for c in range(3))
    assert variables == int(g.var_bytes.sum())


def test_totals_with_and_without_gaps_differ_by_the_gap_rows(report):
    table = memory_table(report[0])
    gaps = (
        table.by_category[MemoryCategory.ALIGNMENT_GAPS]
        + table.by_category[MemoryCategory.REGION_GAPS]
    )
    assert np.array_equal(table.total(True) - table.total(False), gaps)
    assert np.array_equal(table.total(True), table.by_category.sum(axis=0))
    assert len(table.categories(False)) == len(MemoryCategory) - 2
    assert table.rows(False).shape == (len(MemoryCategory) - 2, table.num_tiles)


def test_per_ipu_sums_each_ipus_tiles(report):
    profile, _ = report
    table = memory_table(profile)
    per_ipu = table.per_ipu(True)
    assert per_ipu.shape == (2, len(MemoryCategory))
    for ipu in range(2):
        tiles = range(ipu * 4, ipu * 4 + 4)
        for c in MemoryCategory:
            assert per_ipu[ipu, c] == sum(int(table.by_category[c, t]) for t in tiles)
    without_gaps = table.per_ipu(False)
    assert without_gaps.shape == (2, len(MemoryCategory) - 2)
    assert without_gaps.sum() == table.total(False).sum()


def test_tiles_over_the_limit_and_over_a_percentage(report):
    profile, _ = report
    profile.memory.by_category[MemoryCategory.STACK, 5] = 700_000
    table = memory_table(profile)
    assert table.over_limit().tolist() == [5]
    # every tile holds 256 + 512 bytes at least: more than 0.1% of 638,976
    assert table.over_limit(0.1).tolist() == list(range(8))
    assert table.percent_of_tile()[5] > 100
    assert table.breakdown(np.array([5]))[MemoryCategory.STACK] == 700_000


def test_variables_on_tiles_count_the_bytes_of_their_regions_there(report):
    profile, debug = report
    g = profile.graph
    tiles = np.array([1, 6])
    found = variables_on_tiles(profile, tiles, debug)
    expected: dict[int, int] = {}
    for var, tile, elements in zip(
        g.region_var.tolist(), g.region_tile.tolist(), g.region_elements.tolist(), strict=True
    ):
        if tile in (1, 6):
            expected[var] = expected.get(var, 0) + elements * element_size(g.var_type[var])
    assert dict(zip(found.var.tolist(), found.bytes.tolist(), strict=True)) == expected
    assert (np.diff(found.bytes) <= 0).all()  # largest first
    for row, var in enumerate(found.var.tolist()):
        assert found.always_live[row] == g.var_always_live[var]
        assert found.names[row] == g.strings[int(g.var_name[var])]
        context = int(g.var_debug[var])
        assert found.debug_names[row] == (debug.name[context] if context >= 0 else "")
        assert found.shapes[row] == "[" + ",".join(map(str, g.shape_of(var))) + "]"


def test_variables_on_every_tile_add_up_to_every_variable(report):
    profile, _ = report
    found = variables_on_tiles(profile, np.arange(profile.target.num_tiles))
    assert sorted(found.var.tolist()) == list(range(profile.graph.num_variables))
    assert np.array_equal(found.bytes, found.total_bytes)
    assert found.debug_names == [""] * len(found)  # a ProfileData has no debug contexts


def test_variables_on_tiles_take_debug_contexts_from_an_open_report(tutorial4_report):
    found = variables_on_tiles(open_report(tutorial4_report), np.arange(1472))
    rows = {name: row for row, name in enumerate(found.debug_names)}
    # bytes from the tutorial's shapes (float32), always-live from who the host reads/writes
    for name, size, always_live in [
        ("m1", 900 * 600 * 4, True),
        ("m2", 600 * 300 * 4, True),
        ("m3", 300 * 200 * 4, True),
        ("m4/m4", 900 * 300 * 4, False),
        ("m5/m5", 900 * 200 * 4, True),
    ]:
        assert found.bytes[rows[name]] == size
        assert found.always_live[rows[name]] == always_live
    assert found.ops[rows["m4/m4"]] == "poplin::matMul"
    assert list(found.matching("PARTIALS")) == [rows["m4/partials"], rows["m5/partials"]]


def test_memory_that_does_not_fit_the_target_is_a_report_error(report):
    profile, _ = report
    profile.memory.by_category = profile.memory.by_category[:, :6]
    with pytest.raises(ReportError, match="memory for 6 tiles, but section 'target' has 8"):
        memory_table(profile)
    profile.memory.by_category = np.zeros((3, 8), np.int64)
    with pytest.raises(ReportError, match="3 memory categories"):
        memory_table(profile)


def test_a_region_on_a_tile_the_target_lacks_is_a_report_error():
    profile, _ = make_report(2)
    profile.graph.region_tile[0] = 99
    with pytest.raises(ReportError, match="'region_tile' refers to tile 99, but there are 8"):
        variables_on_tiles(profile, np.array([0]))


def test_tiles_outside_the_target_are_refused(report):
    table = memory_table(report[0])
    with pytest.raises(IndexError):
        table.breakdown(np.array([8]))
    with pytest.raises(IndexError):
        variables_on_tiles(report[0], np.array([-1]))
