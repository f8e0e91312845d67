"""Window queries of a large run: the whole-run spans (made in chunks, merged again for wide
windows) agree with asking profiler_core exactly, and narrow windows are asked exactly."""

from __future__ import annotations

import numpy as np
import pytest

import popvision_py.viewmodels.run_windows as run_windows
from popvision_py.viewmodels.run_windows import RunWindows
from profiler_core.analysis.trace_window import trace_window
from profiler_core.model.profile import ExecutionData, RunData
from tests.profiler_core.factories import make_report


@pytest.fixture
def long_run(monkeypatch):
    """The factory's run 1 executed 80 times back to back, as a 'large' run for the test:
    whole-run spans from 100 instances, built in chunks of 37."""
    monkeypatch.setattr(run_windows, "COARSE_MIN_INSTANCES", 100)
    monkeypatch.setattr(run_windows, "COARSE_CHUNK", 37)
    profile, _ = make_report(7)
    one = profile.execution.runs[1]
    steps = np.tile(one.step_ids, 80)
    durations = profile.programs.step_cycles.max(axis=1)[steps]
    starts = np.concatenate(([0], np.cumsum(durations)[:-1])).astype(np.int64)
    run = RunData(0, "long", steps.astype(np.int32), starts, int(durations.sum()))
    profile.execution = ExecutionData([run])
    return profile


@pytest.mark.parametrize("ipu", [0, 1])
def test_wide_windows_from_whole_run_spans_cover_what_the_exact_query_covers(long_run, ipu):
    windows = RunWindows(long_run, 0)
    total = windows.total_cycles
    width = 40  # four times coarser than the whole-run spans' pixel
    got = windows.steps(ipu, 0, total, width)
    exact = trace_window(long_run, 0, ipu, 0, total, width)
    cycles_per_px, _ = windows._whole[("steps", ipu)]  # made, in chunks, and used:
    assert total / width >= 2 * cycles_per_px
    assert int(got.count.sum()) == int(exact.count.sum())  # every instance, once
    assert got.start[0] == exact.start[0] and got.end[-1] == exact.end[-1]
    # every instance lies inside a drawn span
    single = trace_window(long_run, 0, ipu, 0, total, 10**9)
    inside = np.searchsorted(got.start, single.start, side="right") - 1
    assert (inside >= 0).all()
    assert (single.end <= got.end[inside]).all()


def test_narrow_windows_are_asked_exactly(long_run):
    windows = RunWindows(long_run, 0)
    t0, t1 = 1000, 1400
    got = windows.steps(0, t0, t1, 800)
    exact = trace_window(long_run, 0, 0, t0, t1, 800)
    assert got.step.tolist() == exact.step.tolist()
    assert got.start.tolist() == exact.start.tolist()
