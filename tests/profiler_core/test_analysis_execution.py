"""Execution analysis: cycles by step kind and IPU, run totals and seconds, tile balance."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.execution import cycle_breakdown, run_totals, tile_balance
from profiler_core.errors import ReportError
from profiler_core.model.kinds import StepKind
from profiler_core.report import open_report
from tests.profiler_core.factories import REPEAT_COUNT, make_profile


def test_cycles_by_kind_and_ipu_of_the_main_run(report):
    profile, _ = report
    p = profile.programs
    breakdown = cycle_breakdown(profile, run=1)
    by_kind: dict[int, int] = {}
    executions: dict[int, int] = {}
    by_kind_ipu = np.zeros((len(StepKind), 2), np.int64)
    for step in profile.execution.runs[1].step_ids.tolist():
        kind = int(p.step_kind[step])
        by_kind[kind] = by_kind.get(kind, 0) + int(max(p.step_cycles[step]))
        executions[kind] = executions.get(kind, 0) + 1
        by_kind_ipu[kind] += p.step_cycles[step]
    assert {k: int(v) for k, v in enumerate(breakdown.by_kind) if v} == by_kind
    assert np.array_equal(breakdown.by_kind_ipu, by_kind_ipu)
    assert breakdown.by_kind.sum() == breakdown.total_cycles
    assert breakdown.seconds == pytest.approx(breakdown.total_cycles / 1.33e9)
    assert np.array_equal(breakdown.idle_per_ipu, breakdown.total_cycles - by_kind_ipu.sum(axis=0))
    assert {k: int(v) for k, v in enumerate(breakdown.executions_by_kind) if v} == executions
    assert breakdown.name == "run 1: main"


def test_run_totals_in_cycles_and_seconds(report):
    profile, _ = report
    totals = run_totals(profile)
    runs = profile.execution.runs
    assert totals.names == [r.name for r in runs]
    assert totals.cycles.tolist() == [r.total_cycles for r in runs]
    assert totals.seconds.tolist() == pytest.approx([r.total_cycles / 1.33e9 for r in runs])
    assert totals.steps.tolist() == [2, 4 + 4 * REPEAT_COUNT]
    assert totals.program.tolist() == [1, 0]
    assert len(run_totals(make_profile(0, executed=False))) == 0


def test_tile_balance_of_a_compute_step(report):
    profile, _ = report
    p = profile.programs
    balance = tile_balance(profile, 2)  # the first OnTileExecute of the factory
    cs = int(p.step_cs[2])
    expected = {
        int(t): int(c)
        for s, t, c in zip(p.cst_cs, p.cst_tile, p.cst_cycles, strict=True)
        if s == cs
    }
    assert dict(zip(balance.tiles.tolist(), balance.cycles.tolist(), strict=True)) == expected
    assert (balance.min, balance.max) == (min(expected.values()), max(expected.values()))
    assert balance.mean == pytest.approx(np.mean(list(expected.values())))
    slowest = balance.tiles[balance.slowest(2)].tolist()
    assert slowest == sorted(expected, key=lambda t: (-expected[t], t))[:2]
    # the step's cycles on each IPU are those of its slowest tile there
    for ipu in range(2):
        mine = [c for t, c in expected.items() if t // 4 == ipu]
        assert p.step_cycles[2, ipu] == max(mine, default=0)
    with pytest.raises(ValueError, match="step 0 is a StreamCopyBegin without a compute set"):
        tile_balance(profile, 0)


def test_tutorial4_compute_steps_last_as_long_as_their_slowest_tile(tutorial4_report):
    report = open_report(tutorial4_report)
    p = report.programs
    for step in np.flatnonzero(p.step_kind == StepKind.ON_TILE_EXECUTE).tolist():
        balance = tile_balance(report, step)
        assert balance.max == p.step_cycles[step, 0]
        assert 0 < balance.min <= balance.mean <= balance.max
    breakdown = cycle_breakdown(report)
    assert breakdown.by_kind.sum() == breakdown.total_cycles
    # each of the four Executes is a Sync, an exchange bringing its inputs, and its compute
    counts = breakdown.executions_by_kind
    assert (counts[StepKind.SYNC], counts[StepKind.DO_EXCHANGE]) == (4, 4)
    assert counts[StepKind.ON_TILE_EXECUTE] == 4 and counts.sum() == 12


def test_a_run_of_steps_the_programs_lack_is_a_report_error():
    profile = make_profile(0)
    profile.execution.runs[1].step_ids[3] = 40
    with pytest.raises(ReportError, match="run 1: executes step 40, but there are 10"):
        cycle_breakdown(profile, 1)
    with pytest.raises(ReportError, match="there is no run 5"):
        cycle_breakdown(make_profile(0), 5)
    profile = make_profile(0)
    profile.programs.step_cs[2] = 7
    with pytest.raises(ReportError, match="'step_cs' refers to compute set 7, but there are 3"):
        tile_balance(profile, 2)
