"""Fixtures for profiler_core tests: a synthetic report and its files, and a small trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from tests.conftest import run_example_with_reports
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


@pytest.fixture(scope="session")
def four_ipu_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of the four_shards example: one add per IPU on 4 IPUs, with
    GlobalExchange steps between them (made once per session, with autoReport on)."""
    directory = tmp_path_factory.mktemp("reports_four_ipus")
    run_example_with_reports("four_shards.py", directory)
    return directory / "four_shards"


@pytest.fixture(params=["tutorial4_report", "four_ipu_report"])
def pva_report_folder(request: pytest.FixtureRequest) -> Path:
    """Each engine-made report the libpva-style scripts run on."""
    return request.getfixturevalue(request.param)
