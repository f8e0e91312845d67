"""The analyses behind the libpva facade, on synthetic reports, each against Python loops:
shares of per-tile code over steps, lowered variables and their liveness classes, operation
members, vertex types per tile, subtree ends."""

from __future__ import annotations

import numpy as np

from profiler_core.analysis.debug_groups import operation_contexts
from profiler_core.analysis.lowered_variables import lowered_variables
from profiler_core.analysis.operation_members import operation_members
from profiler_core.analysis.program_tree import subtree_ends
from profiler_core.analysis.step_code import control_code_of_step, share_out
from profiler_core.analysis.vertices import vertex_state_sizes, vertex_types_by_tile
from profiler_core.model.kinds import MemoryCategory
from tests.profiler_core.factories import element_size, make_report


def test_share_out_splits_each_total_by_weight_in_whole_units() -> None:
    owner = np.array([0, 1, 0, 0, 2])
    weight = np.array([1, 5, 1, 2, 3])
    totals = np.array([10, 7, 0, 99])  # owner 3 has no rows: nothing to give
    shares = share_out(owner, weight, totals)
    # owner 0: 10 x 1/4 = 2, 10 x 1/4 = 2, 10 x 2/4 = 5 + the 1 rounding left -> 6
    assert shares.tolist() == [2, 7, 2, 6, 0]
    assert share_out(np.zeros(0, int), np.zeros(0, int), totals).tolist() == []


def test_control_code_of_every_step_adds_up_to_the_tile_category() -> None:
    profile, _ = make_report(3)
    control = profile.memory.by_category[MemoryCategory.CONTROL_CODE]
    steps = [control_code_of_step(profile, s) for s in range(profile.programs.num_steps)]
    assert np.sum(steps, axis=0).tolist() == control.tolist()
    assert steps[0].tolist() == (control // profile.programs.num_steps).tolist()


def test_lowered_variables_are_regions_with_classes_of_equal_live_ranges() -> None:
    profile, _ = make_report(5)
    g, live = profile.graph, profile.liveness
    lowered = lowered_variables(profile)
    num_steps = len(live.step_live_bytes)
    assert lowered.var.tolist() == g.region_var.tolist()
    assert lowered.tile.tolist() == g.region_tile.tolist()
    expected_bytes = [int(e) * element_size(int(g.var_type[v]))
                      for v, e in zip(g.region_var, g.region_elements, strict=True)]  # fmt: skip
    assert lowered.bytes.tolist() == expected_bytes
    ranges: dict[int, list[tuple[int, int]]] = {v: [] for v in range(g.num_variables)}
    for v, first, last in zip(
        live.interval_var, live.interval_first, live.interval_last, strict=True
    ):
        ranges[int(v)].append((int(first), int(last) + 1))
    for v in range(g.num_variables):
        if g.var_always_live[v] or g.var_is_constant[v]:
            ranges[v] = [(0, num_steps)]
    for v in range(g.num_variables):
        start, end = lowered.intervals(int(lowered.var_class[v]))
        assert list(zip(start.tolist(), end.tolist(), strict=True)) == sorted(ranges[v])
        for w in range(g.num_variables):
            same = sorted(ranges[v]) == sorted(ranges[w])
            assert (lowered.var_class[v] == lowered.var_class[w]) == same


def test_operation_members_group_steps_and_variables_by_op_call() -> None:
    profile, debug = make_report(2)
    members = operation_members(profile, debug)
    owner = operation_contexts(debug)
    p, g = profile.programs, profile.graph
    for i, context in enumerate(members.context.tolist()):
        steps = [
            s
            for s in range(p.num_steps)
            if p.step_debug[s] >= 0 and owner[p.step_debug[s]] == context
        ]
        var = [
            v
            for v in range(g.num_variables)
            if g.var_debug[v] >= 0 and owner[g.var_debug[v]] == context
        ]
        assert members.steps_of(i).tolist() == steps
        assert members.vars_of(i).tolist() == var
    firsts = [
        int(members.steps_of(i)[0]) if len(members.steps_of(i)) else 10**9
        for i in range(len(members))
    ]
    assert firsts == sorted(firsts)
    assert sum(len(members.steps_of(i)) for i in range(len(members))) == int(
        (p.step_debug >= 0).sum()
    )


def test_vertex_types_by_tile_sum_counts_over_compute_sets() -> None:
    profile, _ = make_report(4)
    g = profile.graph
    by_tile = vertex_types_by_tile(profile)
    for tile in range(profile.target.num_tiles):
        expected: dict[int, int] = {}
        for t, tl, n in zip(g.vc_type, g.vc_tile, g.vc_count, strict=True):
            if int(tl) == tile:
                expected[int(t)] = expected.get(int(t), 0) + int(n)
        types, counts = by_tile.of(tile)
        assert dict(zip(types.tolist(), counts.tolist(), strict=True)) == expected
        assert types.tolist() == sorted(expected)


def test_subtree_ends_of_a_depth_first_tree() -> None:
    #     0          5
    #   1   3        |
    #   2   4        6
    parent = np.array([-1, 0, 1, 0, 3, -1, 5])
    assert subtree_ends(parent).tolist() == [5, 3, 3, 5, 5, 7, 7]


def test_vertex_state_sizes_solve_the_tiles_state_exactly_or_not_at_all() -> None:
    profile, _ = make_report(6)
    g = profile.graph
    num_tiles, num_types = profile.target.num_tiles, len(g.vt_name)
    sizes = np.arange(num_types) * 4 + 8
    state = np.zeros(num_tiles, np.int64)
    for t, tile, n in zip(g.vc_type, g.vc_tile, g.vc_count, strict=True):
        state[tile] += int(n) * int(sizes[t])  # what the engine would have charged
    profile.memory.by_category[MemoryCategory.VERTEX_STATE] = state
    counts = np.zeros((num_tiles, num_types))
    np.add.at(counts, (g.vc_tile, g.vc_type), g.vc_count)
    solved = vertex_state_sizes(profile)
    if np.linalg.matrix_rank(counts) == num_types:
        assert solved.tolist() == sizes.tolist()
    else:
        assert solved.tolist() == [-1] * num_types
    # one more byte on one tile: no whole-byte solution fits every tile, so nothing is told
    profile.memory.by_category[MemoryCategory.VERTEX_STATE, int(g.vc_tile[0])] += 1
    assert vertex_state_sizes(profile).tolist() == [-1] * num_types


def test_vertex_state_sizes_of_types_always_together_cannot_be_told() -> None:
    profile, _ = make_report(6)
    g = profile.graph
    # every tile runs the same number of vertices of every type: one equation per tile,
    # the same on every tile, so only the sum of the sizes is known
    rows = 2 * profile.target.num_tiles
    g.vc_type = (np.arange(rows) % 2).astype(np.int32)
    g.vc_tile = (np.arange(rows) // 2).astype(np.int32)
    g.vc_count = np.full(rows, 3, np.int32)
    g.vc_cs = np.zeros(rows, np.int32)
    g.vc_flops = np.zeros(rows, np.int64)
    state = np.bincount(g.vc_tile, weights=g.vc_count * 10, minlength=profile.target.num_tiles)
    profile.memory.by_category[MemoryCategory.VERTEX_STATE] = state.astype(np.int64)
    solved = vertex_state_sizes(profile)
    assert solved.tolist() == [-1] * len(g.vt_name)
