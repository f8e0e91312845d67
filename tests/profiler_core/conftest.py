"""Fixtures for profiler_core tests: a synthetic report and its files, and a small trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from tests.profiler_core.factories import make_report
from tests.profiler_core.pvti_samples import write_small_trace


@pytest.fixture
def report():
    """(ProfileData, DebugData) of seed 7: 2 IPUs x 4 tiles, 10 steps, 2 runs."""
    return make_report(7)


@pytest.fixture
def profile_path(tmp_path, report):
    path = tmp_path / "profile.pop"
    write_profile(path, report[0])
    return path


@pytest.fixture
def debug_path(tmp_path, report):
    path = tmp_path / "debug.cbor"
    write_debug(path, report[1])
    return path


@pytest.fixture
def small_pvti(tmp_path: Path) -> Path:
    return write_small_trace(tmp_path / "traces").path
