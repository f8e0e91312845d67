"""Per-tile values for the Tile Map, the floor plan of an IPU, and the op call owning a
debug context, against hand counts over the tutorial-4 report's columns."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.debug_groups import op_call_owners, operation_contexts
from profiler_core.analysis.tile_values import step_cycles_per_tile, variable_bytes_per_tile
from profiler_core.model.kinds import StepKind
from profiler_core.model.tile_layout import tile_layout
from profiler_core.report import open_report


def test_a_variables_bytes_per_tile_add_up_to_the_variable(tutorial4_report):
    report = open_report(tutorial4_report)
    graph = report.graph
    for var in range(graph.num_variables):
        per_tile = variable_bytes_per_tile(report, var)
        assert int(per_tile.sum()) == int(graph.var_bytes[var])
        tiles = set(graph.region_tile[graph.region_var == var].tolist())
        assert set(np.flatnonzero(per_tile).tolist()) <= tiles
    with pytest.raises(IndexError):
        variable_bytes_per_tile(report, graph.num_variables)


def test_step_cycles_per_tile_of_compute_and_other_steps(tutorial4_report):
    report = open_report(tutorial4_report)
    programs = report.programs
    kinds = programs.step_kind.tolist()
    compute = kinds.index(StepKind.ON_TILE_EXECUTE)
    cycles = step_cycles_per_tile(report, compute)
    cs = programs.step_cs[compute]
    for tile, value in zip(
        programs.cst_tile[programs.cst_cs == cs].tolist(),
        programs.cst_cycles[programs.cst_cs == cs].tolist(),
        strict=True,
    ):
        assert cycles[tile] == value
    assert int(cycles.max()) <= int(programs.step_cycles[compute].max())
    sync = kinds.index(StepKind.SYNC)
    assert set(step_cycles_per_tile(report, sync).tolist()) == {int(programs.step_cycles[sync][0])}


def test_the_mk2_plan_places_every_tile_once():
    layout = tile_layout(1472)
    assert (layout.rows, layout.columns) == (32, 46)
    grid = layout.tile_grid()
    assert sorted(grid[grid >= 0].tolist()) == list(range(1472))
    assert grid[0, 0] == 0 and grid[1, 0] == 1 and grid[0, 1] == 32
    assert "approximation" in layout.source
    small = tile_layout(7)
    assert small.rows * small.columns >= 7
    assert sorted(small.tile_grid()[small.tile_grid() >= 0].tolist()) == list(range(7))


def test_op_call_owners_equal_the_whole_walk(tutorial4_report):
    debug = open_report(tutorial4_report).debug
    ids = np.arange(-1, len(debug) + 1)
    expected = operation_contexts(debug)
    owners = op_call_owners(debug, ids)
    assert owners[0] == -1 and owners[-1] == -1  # no context, and an id past the contexts
    assert owners[1:-1].tolist() == expected.tolist()
