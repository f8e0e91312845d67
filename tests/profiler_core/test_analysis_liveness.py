"""Liveness analysis: live bytes per step, the peak, and the variables live at a step."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.errors import ReportError
from profiler_core.report import open_report
from tests.profiler_core.factories import make_profile


def test_live_bytes_with_and_without_always_live(report):
    profile, _ = report
    table = liveness_table(profile)
    g, live = profile.graph, profile.liveness
    always = int(g.var_bytes[g.var_always_live].sum())
    assert table.always_live_bytes == always
    assert np.array_equal(table.live_bytes(False), live.step_live_bytes)
    assert np.array_equal(table.live_bytes(True), live.step_live_bytes + always)


def test_the_peak_is_the_first_step_with_the_most_live_bytes():
    profile = make_profile(4, num_variables=15)
    table = liveness_table(profile)
    values = profile.liveness.step_live_bytes.tolist()
    assert table.peak_step == values.index(max(values))
    assert table.peak_bytes == max(values) + table.always_live_bytes


@pytest.mark.parametrize("seed", [0, 3, 9])
def test_variables_live_at_a_step_are_those_whose_range_contains_it(seed):
    profile = make_profile(seed, num_variables=15)
    live, g = profile.liveness, profile.graph
    for step in range(profile.programs.num_steps):
        found = variables_live_at(profile, step)
        expected = {
            int(v)
            for v, first, last in zip(
                live.interval_var, live.interval_first, live.interval_last, strict=True
            )
            if first <= step <= last
        }
        assert set(found.var.tolist()) == expected
        assert not g.var_always_live[found.var].any()
        assert (np.diff(found.bytes) <= 0).all()
        assert found.bytes.sum() == live.step_live_bytes[step]
        assert ((found.first <= step) & (step <= found.last)).all()


def test_tutorial4_peaks_in_the_first_reduce_holding_the_partials_and_m4(tutorial4_report):
    report = open_report(tutorial4_report)
    table = liveness_table(report)
    names = report.graph.strings
    assert names[int(table.step_name[table.peak_step])] == "m4/Reduce"
    at_peak = variables_live_at(report, table.peak_step)
    assert at_peak.debug_names == ["m4/partials", "m4/m4"]
    # m4 is 900 x 300 floats; the engine's own per-step sums agree with the live ranges
    assert at_peak.bytes[1] == 900 * 300 * 4
    for step in range(table.num_steps):
        assert variables_live_at(report, step).bytes.sum() == table.live_bytes(False)[step]
    # m1, m2, m3 written and m5 read by the host are always live
    assert table.always_live_bytes == 4 * (900 * 600 + 600 * 300 + 300 * 200 + 900 * 200)


def test_liveness_of_another_program_is_a_report_error(report):
    profile, _ = report
    profile.liveness.step_live_bytes = profile.liveness.step_live_bytes[:-1]
    with pytest.raises(ReportError, match="live bytes for 9 steps, but there are 10 steps"):
        liveness_table(profile)
    profile = make_profile(1)
    profile.liveness.interval_last[0] = 10
    with pytest.raises(ReportError, match="'interval_last' refers to step 10"):
        variables_live_at(profile, 0)
    with pytest.raises(IndexError):
        variables_live_at(make_profile(1), 10)
