"""profile.pop's framing is checked against the file's size before the file is read, so a
huge file that is not a profile is refused at once, and a FIFO or device is never opened."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.profile_pop import read_profile, write_profile
from profiler_core.formats.profile_pop.reader import _check_instances
from profiler_core.model.profile import RunData
from tests.profiler_core.factories import make_report

_REFUSE_AND_MEASURE = r"""
import sys
from profiler_core.errors import ReportError
from profiler_core.report import open_report
try:
    open_report(sys.argv[1]).header
except ReportError as error:
    print(error)
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]) * 1024)
"""


def test_a_gigabyte_of_zeros_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "profile.pop"
    with open(path, "wb") as file:
        file.truncate(1024**3)  # sparse: no disk used, but 1 GiB to read
    result = subprocess.run(
        [sys.executable, "-c", _REFUSE_AND_MEASURE, str(path)],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    message, peak = result.stdout.strip().splitlines()
    assert (
        message
        == f"{path}: has {1024**3 - 8:,} bytes after the end of its message: not one profile".replace(
            ",", ""
        )
    )
    assert int(peak) < 300 * 1024**2  # the process never held the gigabyte


def test_a_fifo_named_profile_pop_is_refused_not_waited_on(tmp_path):
    path = tmp_path / "profile.pop"
    os.mkfifo(path)
    with pytest.raises(ReportError, match="is not a regular file"):
        read_profile(path)


def test_runs_holding_more_instances_than_the_file_has_room_for_are_refused():
    run = RunData(0, "r", np.zeros(1000, np.int32), np.zeros(1000, np.int64), 0)
    _check_instances([run], 1000, 1, file_bytes=12 * 2000)  # room for both
    with pytest.raises(ReportError, match=r"run 1: the runs so far hold 2,000 step instances"):
        _check_instances([run], 1000, 1, file_bytes=12 * 2000 - 1)


def test_an_honest_profile_with_several_runs_reads(tmp_path):
    path = tmp_path / "profile.pop"
    profile = make_report(7)[0]
    write_profile(path, profile)
    assert len(read_profile(path).execution.runs) == len(profile.execution.runs) >= 2


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e300, -5.0])
def test_a_creation_time_no_clock_gives_is_a_damaged_header(tmp_path, value):
    from profiler_core.formats.profile_pop import ProfileReader

    path = tmp_path / "profile.pop"
    profile = make_report(7)[0]
    profile.header.created_unix = value
    write_profile(path, profile)
    with ProfileReader(path) as reader:
        with pytest.raises(ReportError, match=r"section 'header': createdUnix .* is not a time"):
            _ = reader.header
        assert reader.target.num_ipus == profile.target.num_ipus  # the rest still reads
