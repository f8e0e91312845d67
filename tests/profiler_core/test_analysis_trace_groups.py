"""Phase rows and operation spans of the execution trace, and cycles by kind in a range,
checked against plain walks over every instance."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.execution import cycle_breakdown, cycles_in_range
from profiler_core.analysis.trace_window import (
    MERGED,
    group_window,
    groups_in,
    merge_groups,
    merge_spans,
    phase_windows,
    spans_in,
    trace_window,
)
from profiler_core.model.kinds import StepKind
from tests.profiler_core.test_analysis_trace_window import instances


@pytest.mark.parametrize("ipu", [0, 1])
def test_a_phase_row_keeps_only_the_steps_of_its_kinds(report, ipu):
    profile, _ = report
    total = profile.execution.runs[1].total_cycles
    kinds = [int(StepKind.ON_TILE_EXECUTE), int(StepKind.SYNC)]
    spans = trace_window(profile, 1, ipu, 0, total, width_px=10**9, kinds=kinds)
    expected = [
        (s, e, step)
        for s, e, step in instances(profile, 1, ipu)
        if int(profile.programs.step_kind[step]) in kinds
    ]
    got = zip(spans.start.tolist(), spans.end.tolist(), spans.step.tolist(), strict=True)
    assert list(got) == expected


def _walk_groups(profile, run, ipu, step_group):
    """Runs of consecutive active instances with the same group, by a plain loop."""
    out: list[list[int]] = []
    for start, end, step in instances(profile, run, ipu):
        group = int(step_group[step])
        if out and out[-1][2] == group:
            out[-1][1] = max(out[-1][1], end)
            out[-1][3] += 1
        else:
            out.append([start, end, group, 1])
    return [tuple(x) for x in out]


@pytest.mark.parametrize("ipu", [0, 1])
def test_operation_spans_join_consecutive_instances_of_one_group(report, ipu):
    profile, _ = report
    total = profile.execution.runs[0].total_cycles
    step_group = np.arange(profile.programs.num_steps) // 3  # three steps per operation
    spans = group_window(profile, 0, ipu, 0, total, 10**9, step_group)
    got = zip(
        *(a.tolist() for a in (spans.start, spans.end, spans.group, spans.count)), strict=True
    )
    expected = _walk_groups(profile, 0, ipu, step_group)
    assert list(got) == expected
    assert any(count > 1 for *_, count in expected)  # the test joins something


def test_operation_spans_below_a_pixel_merge_and_say_so(report):
    profile, _ = report
    total = profile.execution.runs[0].total_cycles
    step_group = np.arange(profile.programs.num_steps)
    spans = group_window(profile, 0, 0, 0, total, 1, step_group)
    assert len(spans) == 1
    assert spans.group.tolist() == [MERGED]
    assert int(spans.count[0]) == len(instances(profile, 0, 0))


def _walk_range(profile, run, start, end):
    """Clipped cycles per kind and per (kind, IPU), one instance at a time."""
    r = profile.execution.runs[run]
    kinds, ipus = len(StepKind), profile.programs.step_cycles.shape[1]
    by_kind, by_kind_ipu = [0] * kinds, [[0] * ipus for _ in range(kinds)]
    for step, begin in zip(r.step_ids.tolist(), r.start_cycles.tolist(), strict=True):
        kind = int(profile.programs.step_kind[step])
        cycles = [int(c) for c in profile.programs.step_cycles[step]]
        by_kind[kind] += max(0, min(begin + max(cycles), end) - max(begin, start))
        for ipu, c in enumerate(cycles):
            by_kind_ipu[kind][ipu] += max(0, min(begin + c, end) - max(begin, start))
    return by_kind, by_kind_ipu


@pytest.mark.parametrize("fraction", [(0.0, 1.0), (0.13, 0.61), (0.5, 0.5001), (0.9, 1.2)])
def test_cycles_in_a_range_are_the_instances_clipped_to_it(report, fraction):
    profile, _ = report
    total = profile.execution.runs[1].total_cycles
    start, end = int(fraction[0] * total), int(fraction[1] * total) + 1
    got = cycles_in_range(profile, 1, start, end)
    by_kind, by_kind_ipu = _walk_range(profile, 1, start, end)
    assert got.by_kind.tolist() == by_kind
    assert got.by_kind_ipu.tolist() == by_kind_ipu


def test_the_whole_run_as_a_range_is_the_cycle_breakdown(report):
    profile, _ = report
    whole = cycle_breakdown(profile, 0)
    got = cycles_in_range(profile, 0, 0, whole.total_cycles)
    np.testing.assert_array_equal(got.by_kind, whole.by_kind)
    np.testing.assert_array_equal(got.by_kind_ipu, whole.by_kind_ipu)


@pytest.mark.parametrize("width", [1, 7, 40, 300])
def test_merging_single_instances_again_is_the_query_at_that_width(report, width):
    profile, _ = report
    total = profile.execution.runs[1].total_cycles
    fine = trace_window(profile, 1, 0, 0, total, 10**9)
    again = merge_spans(fine, total / width)
    direct = trace_window(profile, 1, 0, 0, total, width)
    for column in ("start", "end", "kind", "name", "step", "count"):
        assert getattr(again, column).tolist() == getattr(direct, column).tolist(), column
    groups = np.arange(profile.programs.num_steps) // 2
    fine_groups = group_window(profile, 1, 0, 0, total, 10**9, groups)
    direct_groups = group_window(profile, 1, 0, 0, total, width, groups)
    again_groups = merge_groups(fine_groups, total / width)
    for column in ("start", "end", "group", "count"):
        assert getattr(again_groups, column).tolist() == getattr(direct_groups, column).tolist()


def test_spans_in_a_window_are_those_overlapping_it(report):
    profile, _ = report
    total = profile.execution.runs[0].total_cycles
    spans = trace_window(profile, 0, 1, 0, total, 10**9)
    t0, t1 = total * 0.3, total * 0.7
    inside = spans_in(spans, t0, t1)
    keep = (spans.end > t0) & (spans.start < t1)
    assert inside.step.tolist() == spans.step[keep].tolist()
    groups = group_window(profile, 0, 1, 0, total, 10**9, np.zeros(10, np.int64) + 3)
    assert len(groups_in(groups, t0, t1)) == 1


def test_phase_windows_are_trace_windows_of_each_phase(report):
    profile, _ = report
    total = profile.execution.runs[0].total_cycles
    phases = [[int(StepKind.ON_TILE_EXECUTE)], [int(StepKind.SYNC), int(StepKind.DO_EXCHANGE)]]
    for width in (3, 10**9):
        got = phase_windows(profile, 0, 1, 0, total, width, phases)
        for kinds, spans in zip(phases, got, strict=True):
            expected = trace_window(profile, 0, 1, 0, total, width, kinds)
            assert spans.start.tolist() == expected.start.tolist()
            assert spans.step.tolist() == expected.step.tolist()
            assert spans.kind.tolist() == expected.kind.tolist()
