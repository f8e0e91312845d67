"""Trace reading under bad input: every problem is a ReportError naming the file, never an
IndexError, OverflowError or a hang."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import PvtiWriter
from profiler_core.pva import openTrace
from profiler_core.trace import execution_trace, import_chrome_file, open_trace


def test_execution_trace_checks_a_runs_steps_against_the_programs(report):
    profile, _ = report
    run = profile.execution.runs[0]
    steps = profile.programs.num_steps
    bad_ids = run.step_ids.copy()
    bad_ids[-1] = steps + 5  # a step the programs do not have
    profile.execution.runs[0] = dataclasses.replace(run, step_ids=bad_ids)
    with pytest.raises(ReportError, match=rf"executes step {steps + 5}, but there are {steps}"):
        execution_trace(profile)


def test_execution_trace_refuses_times_past_int64(report):
    profile, _ = report
    run = profile.execution.runs[0]
    profile.execution.runs[0] = dataclasses.replace(run, total_cycles=2**63 - 1)
    profile.target = dataclasses.replace(profile.target, clock_hz=1e6)  # 1,000 ns a cycle
    with pytest.raises(ReportError, match="lasts beyond"):
        execution_trace(profile)
    profile.execution.runs[0] = run
    profile.target = dataclasses.replace(profile.target, clock_hz=0.0)
    with pytest.raises(ReportError, match="section 'target': clock of 0.0 Hz"):
        execution_trace(profile)


def test_execution_trace_of_an_honest_report_still_works(report):
    profile, _ = report
    trace = execution_trace(profile, 1)
    run = profile.execution.runs[1]
    cycles = profile.programs.step_cycles[run.step_ids]
    assert len(trace) == int((cycles > 0).sum()) + profile.target.num_ipus


def _pvti(path, origin_wall_ns: int | None = None) -> None:
    with PvtiWriter(path.parent, background=False) as writer:
        writer.add_span("IPU 0", "c", "step", 100, 200)
        written = writer.path
    written.rename(path)
    if origin_wall_ns is not None:
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE meta SET value = ? WHERE key = 'origin_wall_ns'", (str(origin_wall_ns),)
            )


def test_a_pvti_origin_past_int64_is_a_report_error_in_pva_too(tmp_path):
    path = tmp_path / "huge.pvti"
    _pvti(path, 10**30)
    with pytest.raises(ReportError, match="meta 'origin_wall_ns' = 1000.* is out of range"):
        openTrace(path)


def test_pvti_files_whose_origins_cannot_share_one_clock_are_refused(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    # Each origin is in range alone, but they lie 2^63 ns apart: past int64 on one clock.
    _pvti(folder / "a.pvti", -(2**62) + 10)
    _pvti(folder / "b.pvti", 2**62 - 10)
    with pytest.raises(ReportError, match="cannot be placed on the trace clock"):
        open_trace(folder)
    assert len(open_trace(folder / "b.pvti")) == 1  # alone, it opens


@pytest.mark.parametrize(
    "ts", ["1" + "0" * 400, "1e400", "-1" + "0" * 30], ids=["huge int", "inf", "negative"]
)
def test_a_chrome_ts_past_float_range_is_skipped_and_counted(tmp_path, ts):
    path = tmp_path / "huge.json"
    good = '{"ph":"i","name":"ok","ts":1,"pid":1,"tid":1}'
    path.write_text(f'{{"traceEvents":[{good},{{"ph":"X","ts":{ts},"dur":1,"pid":1,"tid":1}}]}}')
    trace = import_chrome_file(path)
    assert trace.labels == ("ok",)
    assert trace.warnings == ("huge.json: 1 event(s) skipped (1 'ts' is out of range)",)


def test_a_chrome_counter_past_float_range_is_skipped_and_counted(tmp_path):
    path = tmp_path / "counter.json"
    event = {"ph": "C", "ts": 1, "pid": 1, "tid": 1, "name": "n", "args": {"v": 10**400, "w": 1}}
    path.write_text(json.dumps({"traceEvents": [event]}))
    trace = import_chrome_file(path)
    assert trace.series["n"]["w"][1].tolist() == [1.0]
    assert trace.warnings == (
        "counter.json: 1 event(s) skipped (1 counter values that are not numbers)",
    )


FIFO_CHILD = textwrap.dedent(
    """
    import sys
    from profiler_core.errors import ReportError
    from profiler_core.trace import open_trace, import_chrome_file
    from profiler_core.formats.pvti import read_pvti
    for read in (open_trace, read_pvti, import_chrome_file):
        try:
            read(sys.argv[1])
        except ReportError as error:
            print(error)
    """
)


def test_a_fifo_named_pvti_is_refused_not_waited_on(tmp_path):
    path = tmp_path / "trace.pvti"
    os.mkfifo(path)
    # In a child: before the fix the reader blocks in open() forever, waiting for a writer.
    result = subprocess.run(
        [sys.executable, "-c", FIFO_CHILD, str(path)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.splitlines()
        == [f"{path}: is not a regular file (a device, FIFO or socket)"] * 3
    )


def test_a_folder_of_traces_holding_a_fifo_is_refused(tmp_path):
    folder = tmp_path / "traces"
    folder.mkdir()
    _pvti(folder / "a.pvti")
    os.mkfifo(folder / "b.pvti")
    with pytest.raises(ReportError, match="b.pvti: is not a regular file"):
        open_trace(folder)
    assert np.array_equal(open_trace(folder / "a.pvti").duration_ns, [100])
