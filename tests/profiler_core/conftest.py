"""Fixtures for the trace tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.profiler_core.pvti_samples import write_small_trace


@pytest.fixture
def small_pvti(tmp_path: Path) -> Path:
    return write_small_trace(tmp_path / "traces").path
