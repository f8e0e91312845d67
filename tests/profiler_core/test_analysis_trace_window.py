"""The execution trace query: step instances in [t0, t1) of one IPU, sub-pixel spans merged."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.trace_window import MERGED, trace_window
from profiler_core.model.kinds import StepKind
from profiler_core.model.profile import ExecutionData, RunData
from tests.profiler_core.factories import make_profile


def instances(profile, run, ipu):
    """(start, end, step) of every instance active on ``ipu``, by a plain walk."""
    r = profile.execution.runs[run]
    out = []
    for step, start in zip(r.step_ids.tolist(), r.start_cycles.tolist(), strict=True):
        cycles = int(profile.programs.step_cycles[step, ipu])
        if cycles:
            out.append((start, start + cycles, step))
    return out


@pytest.mark.parametrize("ipu", [0, 1])
def test_wide_enough_windows_show_every_instance_as_is(report, ipu):
    profile, _ = report
    run = profile.execution.runs[1]
    spans = trace_window(profile, 1, ipu, 0, run.total_cycles, width_px=10**9)
    shown = zip(spans.start.tolist(), spans.end.tolist(), spans.step.tolist(), strict=True)
    assert list(shown) == instances(profile, 1, ipu)
    assert (spans.count == 1).all()
    assert spans.kind.tolist() == [int(profile.programs.step_kind[s]) for s in spans.step]
    assert spans.name.tolist() == [int(profile.programs.step_name[s]) for s in spans.step]


def test_a_window_keeps_the_instances_that_overlap_it(report):
    profile, _ = report
    everything = instances(profile, 1, 0)
    t0 = (everything[2][0] + everything[2][1]) // 2  # inside the third instance
    t1 = everything[6][0] + 1  # just into the seventh
    spans = trace_window(profile, 1, 0, t0, t1, width_px=10**9)
    assert spans.step.tolist() == [
        step for start, end, step in everything if end > t0 and start < t1
    ]
    assert spans.start[0] < t0 and spans.end[-1] > t1 - 1


def test_spans_narrower_than_a_pixel_merge_with_their_neighbours():
    profile = make_profile(0)
    # one run: a long step, three 10-cycle steps back to back, a long step
    profile.programs.step_cycles[:] = 10
    profile.programs.step_cycles[[2, 4]] = 1000
    step_ids = np.array([2, 3, 5, 6, 4], np.int32)
    durations = profile.programs.step_cycles.max(axis=1)[step_ids]
    starts = np.concatenate(([0], np.cumsum(durations)[:-1])).astype(np.int64)
    profile.execution = ExecutionData([RunData(0, "r", step_ids, starts, int(durations.sum()))])
    spans = trace_window(profile, 0, 0, 0, 2030, width_px=100)  # 20.3 cycles per pixel
    assert spans.start.tolist() == [0, 1000, 1030]
    assert spans.end.tolist() == [1000, 1030, 2030]
    assert spans.count.tolist() == [1, 3, 1]
    assert spans.step.tolist() == [2, MERGED, 4]
    assert spans.name[1] == MERGED
    kinds = {int(profile.programs.step_kind[s]) for s in (3, 5, 6)}
    assert len(kinds) > 1 and spans.kind[1] == MERGED
    assert spans.kind[0] == StepKind.ON_TILE_EXECUTE
    # zoomed in, the same three are each wider than a pixel
    assert trace_window(profile, 0, 0, 1000, 1030, width_px=10).count.tolist() == [1, 1, 1]


def test_at_most_two_spans_per_pixel_on_a_long_run():
    profile = make_profile(1)
    r = profile.execution.runs[1]
    many = np.tile(r.step_ids, 5000)
    durations = profile.programs.step_cycles.max(axis=1)[many]
    starts = np.concatenate(([0], np.cumsum(durations)[:-1])).astype(np.int64)
    profile.execution = ExecutionData([RunData(0, "long", many, starts, int(durations.sum()))])
    spans = trace_window(profile, 0, 0, 0, int(durations.sum()), width_px=200)
    assert len(spans) <= 2 * 200 + 1
    assert spans.count.sum() == len(instances(profile, 0, 0))
    assert (spans.start[1:] >= spans.end[:-1]).all()


def test_empty_windows_and_bad_ipus_are_refused(report):
    profile, _ = report
    assert len(trace_window(profile, 0, 0, 10**9, 10**9 + 5, 10)) == 0
    with pytest.raises(ValueError):
        trace_window(profile, 0, 0, 5, 5, 10)
    with pytest.raises(IndexError):
        trace_window(profile, 0, 2, 0, 10, 10)
