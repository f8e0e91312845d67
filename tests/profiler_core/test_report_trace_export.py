"""A report's execution trace exports to Chrome JSON and imports back unchanged."""

import json

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.report import open_report
from profiler_core.trace import execution_trace, export_chrome, import_chrome_file


def test_tutorial4_execution_trace_round_trips_through_chrome_json(tutorial4_report, tmp_path):
    report = open_report(tutorial4_report)
    trace = execution_trace(report)
    run = report.execution.runs[0]
    ns_per_cycle = 1e9 / report.target.clock_hz
    # one span per executed step (all steps use the only IPU) plus the run itself
    assert len(trace) == run.step_ids.size + 1
    durations = report.programs.step_cycles[run.step_ids, 0] * ns_per_cycle
    steps = trace.depth == 1
    np.testing.assert_allclose(trace.duration_ns[steps], durations, atol=1)
    names = report.graph.strings.take(report.programs.step_name[run.step_ids])
    assert [trace.label_of(i) for i in np.flatnonzero(steps)] == names
    path = export_chrome(trace, tmp_path / "tutorial4.json")
    events = json.loads(path.read_text())["traceEvents"]
    assert any(e.get("name") == "IPU 0" or e.get("args", {}).get("name") == "IPU 0" for e in events)
    back = import_chrome_file(path)
    assert len(back) == len(trace)
    np.testing.assert_allclose(np.sort(back.duration_ns), np.sort(trace.duration_ns), atol=1000)
    assert sorted(back.label_of(i) for i in range(len(back))) == sorted(
        trace.label_of(i) for i in range(len(trace))
    )


def test_a_report_without_runs_says_so(report):
    profile, _ = report
    profile.execution = None
    with pytest.raises(ReportError, match="no recorded runs"):
        execution_trace(profile)
