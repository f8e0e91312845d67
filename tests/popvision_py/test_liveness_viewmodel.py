"""The Liveness view models without a window: scopes over a synthetic 2-IPU report, the shared
selection, the details tables and the curve's pixels, checked against hand counts and
profiler_core's analyses."""

from __future__ import annotations

import numpy as np
import pytest

from popvision_py.viewmodels.curve_pixels import (
    BAND,
    EDGE,
    EMPTY,
    FILL,
    MARK,
    SELECTED,
    area_image,
    centre_columns,
    columns_of,
)
from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.liveness import ALL_IPUS, SELECTED_TILES, LivenessViewModel
from popvision_py.viewmodels.liveness_details import (
    always_live_table,
    cycles_table,
    not_always_live_table,
    vertices_table,
)
from popvision_py.viewmodels.selection import ReportSelection
from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.analysis.liveness_tiles import ipu_tiles, liveness_on_tiles
from profiler_core.model.kinds import StepKind
from tests.profiler_core.factories import make_profile


@pytest.fixture
def profile():
    return make_profile(5, num_variables=24, num_steps=14)


def shown_values(table, header: str) -> list:
    column = [c.header for c in table.columns].index(header)
    return [table.raw(r, column) for r in range(len(table))]


def test_scopes_give_the_whole_device_each_ipu_and_the_selected_tiles(profile):
    selection = ReportSelection()
    model = LivenessViewModel(profile, selection)
    events: list[str] = []
    model.changed.connect(events.append)
    assert model.scopes == [ALL_IPUS, "IPU 0", "IPU 1", SELECTED_TILES]
    whole = liveness_table(profile)
    assert np.array_equal(model.curve(), whole.live_bytes(True))
    model.set_include_always_live(False)
    assert np.array_equal(model.curve(), whole.live_bytes(False))
    model.set_include_always_live(True)
    model.set_scope("IPU 1")
    assert np.array_equal(
        model.curve(), liveness_on_tiles(profile, ipu_tiles(profile, 1)).live_bytes(True)
    )
    model.set_scope(SELECTED_TILES)
    assert not model.curve().any() and model.peak() == (-1, 0)
    assert "No tile selected" in model.peak_text()
    assert model.select_text("1,6-7")
    assert selection.tiles.tolist() == [1, 6, 7]
    on_tiles = liveness_on_tiles(profile, np.array([1, 6, 7]))
    assert np.array_equal(model.curve(), on_tiles.live_bytes(True))
    assert model.peak() == (on_tiles.peak_step, on_tiles.peak_bytes)
    selection.select_tiles([2])  # Memory selects a tile
    assert np.array_equal(model.curve(), liveness_on_tiles(profile, [2]).live_bytes(True))
    assert not model.select_text("9")
    assert "tiles go from 0 to 7" in model.selection_error
    assert selection.tiles.tolist() == [2]
    assert events.count("curve") == 6
    with pytest.raises(ValueError):
        model.set_scope("IPU 2")
    model.close()
    selection.select_tiles([3])
    assert events.count("curve") == 6  # closed models stop following


def test_peak_text_hover_and_clicks(profile):
    selection = ReportSelection()
    model = LivenessViewModel(profile, selection)
    whole = liveness_table(profile)
    step = whole.peak_step
    name = profile.graph.strings[int(profile.programs.step_name[step])]
    assert model.peak_text() == (f"Peak: {_readable(whole.peak_bytes)} at step {step:,} {name}")
    kind = StepKind(int(profile.programs.step_kind[step])).poplar_name
    hover = model.hover_text(step)
    assert hover.splitlines()[:2] == [f"Step {step:,}: {name}", f"Kind: {kind}"]
    assert f"Live: {_readable(whole.peak_bytes)}" in hover
    assert model.hover_text(-1) == "" and model.hover_text(model.num_steps) == ""
    model.click_step(3)
    model.click_step(7, add=True)
    assert selection.steps.tolist() == [3, 7]
    model.click_step(3, add=True)
    assert selection.steps.tolist() == [7]
    selection.select_operation("op", [1, 2])
    assert "In operation op" in model.hover_text(2)
    assert model.step_mask(np.array([1, 2, 99, -1])).nonzero()[0].tolist() == [1, 2]


def _readable(size: int) -> str:
    return format_bytes(size, exact=True)


def test_one_step_lists_exactly_the_variables_live_at_it(profile):
    for step in range(profile.programs.num_steps):
        live = variables_live_at(profile, step)
        table = not_always_live_table(profile, np.array([step]))
        assert shown_values(table, "Variable") == live.names
        assert shown_values(table, "Size") == live.bytes.tolist()
        assert shown_values(table, "Live to") == live.last.tolist()


def test_several_steps_get_a_column_each_and_the_difference(profile):
    steps = np.array([9, 2, 5])
    table = not_always_live_table(profile, steps)
    headers = [c.header for c in table.columns]
    assert headers[-4:] == ["Step 9", "Step 2", "Step 5", "Difference"]
    live = {s: variables_live_at(profile, s) for s in steps.tolist()}
    every = set().union(*(set(v.var.tolist()) for v in live.values()))
    assert len(table) == len(every)
    per_step = {
        s: dict(zip(v.var.tolist(), v.bytes.tolist(), strict=True)) for s, v in live.items()
    }
    names = profile.graph.strings.take(profile.graph.var_name)
    expected = sorted((names[v], per_step[5].get(v, 0) - per_step[9].get(v, 0)) for v in every)
    shown = sorted(
        zip(shown_values(table, "Variable"), shown_values(table, "Difference"), strict=True)
    )
    assert shown == expected


def test_always_live_table_is_every_always_live_variable_largest_first(profile):
    table = always_live_table(profile)
    g = profile.graph
    always = np.flatnonzero(g.var_always_live)
    assert sorted(shown_values(table, "Size")) == sorted(g.var_bytes[always].tolist())
    assert shown_values(table, "Size") == sorted(shown_values(table, "Size"), reverse=True)
    tiles = {
        v: sorted({int(t) for r, t in zip(g.region_var, g.region_tile, strict=True) if r == v})
        for v in always.tolist()
    }
    counts = sorted(len(t) for t in tiles.values())
    assert sorted(shown_values(table, "Tiles")) == counts
    table.search(shown_values(table, "Variable")[0])
    assert len(table) >= 1


def test_vertices_and_cycles_of_steps(profile):
    p = profile.programs
    compute = np.flatnonzero(p.step_cs >= 0)
    other = np.flatnonzero(p.step_cs < 0)
    assert compute.size and other.size
    message = vertices_table(profile, other[:1])
    assert isinstance(message, str) and "OnTileExecute" in message
    step = int(compute[0])
    table = vertices_table(profile, np.array([step]))
    g = profile.graph
    cs = int(p.step_cs[step])
    expected: dict[str, int] = {}
    for c, t, n in zip(g.vc_cs, g.vc_type, g.vc_count, strict=True):
        if c == cs:
            name = g.strings[int(g.vt_name[t])]
            expected[name] = expected.get(name, 0) + int(n)
    shown = dict(
        zip(shown_values(table, "Vertex type"), shown_values(table, "Vertices"), strict=True)
    )
    assert shown == expected
    cycles = cycles_table(profile, np.array([step, int(other[0])]))
    assert shown_values(cycles, "Cycles") == [
        *p.step_cycles[step].tolist(),
        *p.step_cycles[int(other[0])].tolist(),
    ]
    assert shown_values(cycles, "IPU") == ["IPU 0", "IPU 1"] * 2
    for ipu in range(2):  # each IPU's tiles (4 a IPU) with vertices in the compute set
        on_ipu = (p.cst_cs == cs) & (p.cst_tile // 4 == ipu)
        tile_cycles = p.cst_cycles[on_ipu]
        assert shown_values(cycles, "Tiles computing")[ipu] == int(on_ipu.sum())
        if tile_cycles.size:
            assert shown_values(cycles, "Max tile cycles")[ipu] == int(tile_cycles.max())
            assert shown_values(cycles, "Min tile cycles")[ipu] == int(tile_cycles.min())
            mean = shown_values(cycles, "Mean tile cycles")[ipu]
            assert mean == round(float(tile_cycles.mean()))
    assert shown_values(cycles, "Max tile cycles")[-1] == 0  # no compute set


def test_curve_pixels_by_hand():
    values = np.array([5, 1, 9, 2, 0, 7, 3, 3])
    # 4 columns over 8 positions: two positions each, the larger shown
    shown, (band, selected) = columns_of(
        values, -0.5, 7.5, 4, np.array([0, 0, 0, 1, 0, 0, 0, 0], bool), np.eye(8, dtype=bool)[6]
    )
    assert shown.tolist() == [0, 2, 5, 6]
    assert band.tolist() == [False, True, False, False]
    assert selected.tolist() == [False, False, False, True]
    assert centre_columns(np.array([6]), -0.5, 7.5, 4).tolist() == [False, False, False, True]
    colors = np.arange(24, dtype=np.uint8).reshape(6, 4)
    heights = np.array([4.0, 10.0, np.nan, 2.0])
    image = area_image(
        heights,
        0.0,
        10.0,
        10,
        colors,
        np.array([0, 0, 1, 0], bool),
        np.array([0, 0, 0, 1], bool),
        np.array([1, 0, 0, 0], bool),
    )
    ids = image[:, :, 0] // 4  # colour slot of each pixel, row 0 at the bottom
    assert ids[:, 0].tolist() == [MARK] * 10
    assert ids[:, 1].tolist() == [FILL] * 8 + [EDGE] * 2
    assert ids[:, 2].tolist() == [BAND] * 10
    assert ids[:, 3].tolist() == [EDGE] * 2 + [SELECTED] * 8
    top_down = area_image(heights, 0.0, 10.0, 10, colors, *(np.zeros(4, bool),) * 3, True)
    assert (
        top_down[::-1] == area_image(heights, 0.0, 10.0, 10, colors, *(np.zeros(4, bool),) * 3)
    ).all()
    assert (top_down[:, 2, 0] // 4 == EMPTY).all()
