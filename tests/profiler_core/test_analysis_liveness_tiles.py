"""Liveness of chosen tiles and where variables live; expected values from Python loops over
the regions and live ranges, and the whole-device table for all tiles."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.liveness_tiles import (
    ipu_tiles,
    liveness_on_tiles,
    variable_bytes_on_tiles,
    variable_tiles,
)
from profiler_core.analysis.vertices import compute_set_vertices
from profiler_core.report import open_report
from tests.profiler_core.factories import element_size, make_profile


def _loop_liveness(profile, tiles: set[int]) -> tuple[list[int], int]:
    """Live bytes per step and always-live bytes on ``tiles``, one region at a time."""
    g, live = profile.graph, profile.liveness
    on_tiles = [0] * g.num_variables
    for var, tile, elements in zip(g.region_var, g.region_tile, g.region_elements, strict=True):
        if int(tile) in tiles:
            on_tiles[int(var)] += int(elements) * element_size(int(g.var_type[var]))
    steps = [0] * len(live.step_live_bytes)
    for var, first, last in zip(
        live.interval_var, live.interval_first, live.interval_last, strict=True
    ):
        for step in range(int(first), int(last) + 1):
            steps[step] += on_tiles[int(var)]
    always = sum(b for v, b in enumerate(on_tiles) if g.var_always_live[v])
    return steps, always


@pytest.mark.parametrize("seed", [0, 4, 11])
def test_liveness_on_tiles_counts_the_regions_on_those_tiles(seed):
    profile = make_profile(seed, num_variables=20, num_steps=12)
    for tiles in ([0], [1, 2, 7], list(range(4)), list(range(4, 8))):
        table = liveness_on_tiles(profile, np.array(tiles))
        steps, always = _loop_liveness(profile, set(tiles))
        assert table.live_bytes(False).tolist() == steps
        assert table.always_live_bytes == always
        assert np.array_equal(table.live_bytes(True), np.array(steps) + always)


@pytest.mark.parametrize("seed", [1, 5])
def test_the_ipus_add_up_to_the_whole_device(seed):
    profile = make_profile(seed, num_variables=20, num_steps=12)
    whole = liveness_table(profile)
    parts = [liveness_on_tiles(profile, ipu_tiles(profile, ipu)) for ipu in range(2)]
    assert np.array_equal(sum(p.not_always_live for p in parts), whole.not_always_live)
    assert sum(p.always_live_bytes for p in parts) == whole.always_live_bytes
    assert ipu_tiles(profile, 1).tolist() == [4, 5, 6, 7]
    with pytest.raises(IndexError):
        ipu_tiles(profile, 2)


def test_all_tiles_of_tutorial4_equal_the_liveness_table_exactly(tutorial4_report):
    report = open_report(tutorial4_report)
    whole = liveness_table(report)
    everything = liveness_on_tiles(report, np.arange(report.target.num_tiles))
    assert np.array_equal(everything.not_always_live, whole.not_always_live)
    assert everything.always_live_bytes == whole.always_live_bytes
    assert everything.peak_step == whole.peak_step
    assert everything.peak_bytes == whole.peak_bytes
    # and a single IPU's tiles hold it all on a one-IPU report
    assert report.target.num_ipus == 1
    assert np.array_equal(
        liveness_on_tiles(report, ipu_tiles(report, 0)).not_always_live, whole.not_always_live
    )


def test_variable_bytes_on_tiles_rejects_tiles_outside_the_target():
    profile = make_profile(2)
    with pytest.raises(IndexError):
        variable_bytes_on_tiles(profile, np.array([8]))
    assert variable_bytes_on_tiles(profile, np.zeros(0, np.int64)).sum() == 0


def test_variable_tiles_counts_and_lists_each_variables_tiles():
    profile = make_profile(3, num_variables=15)
    g = profile.graph
    var = np.array([4, 0, 9])
    found = variable_tiles(profile, var)
    assert len(found) == 3
    texts = [found.text(i) for i in range(3)]
    for i, (v, count, text) in enumerate(
        zip(var.tolist(), found.counts.tolist(), texts, strict=True)
    ):
        tiles = sorted({int(t) for r, t in zip(g.region_var, g.region_tile, strict=True) if r == v})
        assert count == len(tiles)
        expanded = []
        for part in text.split(","):
            a, _, b = part.partition("-")
            expanded += list(range(int(a), int(b or a) + 1))
        assert expanded == tiles
        assert found.of(i).tolist() == tiles


def test_compute_set_vertices_by_type():
    profile = make_profile(6, num_compute_sets=4)
    g = profile.graph
    for cs in range(4):
        found = compute_set_vertices(profile, cs)
        counts: dict[int, int] = {}
        tiles: dict[int, set[int]] = {}
        for c, t, tile, n in zip(g.vc_cs, g.vc_type, g.vc_tile, g.vc_count, strict=True):
            if c == cs:
                counts[int(t)] = counts.get(int(t), 0) + int(n)
                tiles.setdefault(int(t), set()).add(int(tile))
        assert dict(zip(found.vertex_type.tolist(), found.count.tolist(), strict=True)) == counts
        assert {t: len(s) for t, s in tiles.items()} == dict(
            zip(found.vertex_type.tolist(), found.tiles.tolist(), strict=True)
        )
        assert (np.diff(found.count) <= 0).all()
        names = g.strings.take(g.vt_name)
        assert found.names == [names[t] for t in found.vertex_type.tolist()]
    with pytest.raises(IndexError):
        compute_set_vertices(profile, 4)
