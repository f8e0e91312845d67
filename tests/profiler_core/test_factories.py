"""The synthetic report factory is complete and self-consistent, so other tests can trust it."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.model.kinds import MemoryCategory, StepKind
from tests.profiler_core.factories import REPEAT_COUNT, element_size, make_profile, make_report


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_regions_cover_every_variable_exactly_once(seed):
    graph = make_profile(seed).graph
    for var in range(graph.num_variables):
        mine = graph.region_var == var
        starts, sizes = graph.region_start[mine], graph.region_elements[mine]
        order = np.argsort(starts)
        ends = np.cumsum(sizes[order])
        assert starts[order][0] == 0
        assert np.array_equal(starts[order][1:], ends[:-1])
        assert ends[-1] == graph.var_elements[var] == np.prod(graph.shape_of(var))
        assert graph.var_bytes[var] == graph.var_elements[var] * element_size(graph.var_type[var])


def test_variable_memory_per_tile_is_the_bytes_of_its_regions():
    profile = make_profile(5, num_variables=20)
    graph, memory = profile.graph, profile.memory
    expected = np.zeros(profile.target.num_tiles, np.int64)
    for var, tile, count in zip(
        graph.region_var, graph.region_tile, graph.region_elements, strict=True
    ):
        if graph.var_always_live[var] and not graph.var_is_constant[var]:
            expected[tile] += count * element_size(graph.var_type[var])
    assert np.array_equal(memory.by_category[MemoryCategory.ALWAYS_LIVE_VARIABLES], expected)
    total_variables = memory.by_category[:3].sum()
    assert total_variables == graph.var_bytes.sum()


def test_step_cycles_of_a_compute_set_are_its_slowest_tile_per_ipu():
    profile = make_profile(2)
    programs, tiles = profile.programs, profile.target.tiles_per_ipu
    for step in np.flatnonzero(programs.step_kind == StepKind.ON_TILE_EXECUTE):
        cs = programs.step_cs[step]
        for ipu in range(profile.target.num_ipus):
            mine = (programs.cst_cs == cs) & (programs.cst_tile // tiles == ipu)
            assert programs.step_cycles[step, ipu] == max(programs.cst_cycles[mine], default=0)


def test_liveness_counts_each_live_range_at_every_step_it_covers():
    profile = make_profile(4, num_variables=15)
    liveness, graph = profile.liveness, profile.graph
    for step, live in enumerate(liveness.step_live_bytes):
        covering = (liveness.interval_first <= step) & (step <= liveness.interval_last)
        assert live == graph.var_bytes[liveness.interval_var[covering]].sum()
    assert liveness.always_live_bytes == graph.var_bytes[graph.var_always_live].sum()


def test_runs_execute_their_program_with_the_repeat_body_repeated():
    profile = make_profile(1)
    main, host = profile.execution.runs[1], profile.execution.runs[0]
    assert (host.program, main.program) == (1, 0)
    assert host.step_ids.tolist() == [0, 1]
    assert main.step_ids.tolist() == [2, 3, 4, 5] + [6, 7, 8, 9] * REPEAT_COUNT
    slowest = profile.programs.step_cycles.max(axis=1)[main.step_ids]
    assert main.start_cycles[0] == 0
    assert np.array_equal(np.diff(main.start_cycles), slowest[:-1])
    assert main.total_cycles == slowest.sum()


def test_program_tree_parents_precede_children_and_steps_point_back():
    programs = make_profile(0).programs
    assert (programs.node_parent < np.arange(len(programs.node_parent))).all()
    assert programs.node_parent[programs.roots].tolist() == [-1, -1]
    for step, node in enumerate(programs.step_node):
        assert programs.node_step[node] == step


def test_profile_and_debug_share_a_report_id_and_seeds_differ():
    profile, debug = make_report(3)
    assert profile.header.report_id == debug.report_id
    assert make_report(4)[0].header.report_id != debug.report_id
    assert len(debug) == len(debug.parent) == len(debug.args)
    assert make_profile(0, executed=False).execution is None
