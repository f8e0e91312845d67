"""Fuzzing reports: damaged bytes of real report files (the factory's and tutorial 4's) and
decodable columns with random values; opening, every analysis, the pva facade and every CLI
command let only ReportError escape, within a time and memory bound per example."""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import ReportError
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.everything import analyse_everything, cli_everything
from tests.profiler_core.factories import make_report

SECONDS_PER_EXAMPLE = 5.0
MEMORY_GROWTH_BYTES = 300 * 2**20

edits = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)),
                 min_size=1, max_size=8)  # fmt: skip


def damaged(data: bytes, changes: list[tuple[float, int]]) -> bytes:
    out = bytearray(data)
    for where, value in changes:
        out[int(where * len(out))] = value
    return bytes(out)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def check_everything(folder: Path) -> None:
    """Every analysis and command; only ReportError and exit codes 0-2 or 5, in time and
    memory."""
    before, started = peak_rss(), time.perf_counter()
    for error in analyse_everything(folder):
        assert isinstance(error, ReportError) and error.path is not None
    for code, err in cli_everything(folder):
        assert code in (0, 1, 2, 5), err  # 5: printed what it could, the rest as warnings
        assert "internal error" not in err and "Traceback" not in err
        if code == 5:
            assert all(line.startswith("popvision-cli: warning: ") for line in err.splitlines())
    assert time.perf_counter() - started < SECONDS_PER_EXAMPLE
    assert peak_rss() - before < MEMORY_GROWTH_BYTES


def factory_files(seed: int = 3) -> tuple[bytes, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        profile, debug = make_report(seed)
        write_profile(Path(tmp) / "profile.pop", profile)
        write_debug(Path(tmp) / "debug.cbor", debug)
        return (Path(tmp) / "profile.pop").read_bytes(), (Path(tmp) / "debug.cbor").read_bytes()


FACTORY = factory_files()


@settings(
    max_examples=examples(100),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(profile_edits=edits, debug_edits=st.one_of(st.none(), edits))
def test_damaged_factory_reports_raise_only_report_errors(profile_edits, debug_edits):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "profile.pop").write_bytes(damaged(FACTORY[0], profile_edits))
        debug = FACTORY[1] if debug_edits is None else damaged(FACTORY[1], debug_edits)
        (folder / "debug.cbor").write_bytes(debug)
        check_everything(folder)


@settings(
    max_examples=examples(20),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(profile_edits=edits)
def test_damaged_tutorial4_reports_raise_only_report_errors(tutorial4_report, profile_edits):
    # Edits land in the file's larger arrays (per-tile memory, regions, vertex counts) mostly.
    data = (tutorial4_report / "profile.pop").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "profile.pop").write_bytes(damaged(data, profile_edits))
        (folder / "debug.cbor").write_bytes((tutorial4_report / "debug.cbor").read_bytes())
        check_everything(folder)


def _columns(profile) -> list[tuple[object, str]]:
    sections = [profile.graph, profile.programs, profile.liveness, *profile.execution.runs]
    return [
        (section, name)
        for section in sections
        for name, value in vars(section).items()
        if isinstance(value, np.ndarray) and value.size and value.dtype.kind in "iu"
    ]


COLUMNS = _columns(make_report(3)[0])


@settings(
    max_examples=examples(150),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    column=st.integers(0, len(COLUMNS) - 1),
    where=st.floats(0, 1, exclude_max=True),
    value=st.integers(-(2**31), 2**31 - 1) | st.integers(-3, 40),
)
def test_decodable_columns_with_random_values_raise_only_report_errors(column, where, value):
    profile, debug = make_report(3)
    owner, name = _columns(profile)[column]
    values = getattr(owner, name).copy()
    flat = values.reshape(-1)
    flat[int(where * flat.size)] = np.clip(value, *_limits(values.dtype))
    setattr(owner, name, values)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            write_profile(folder / "profile.pop", profile)
        except ReportError:
            return  # the writer refuses what the reader would: nothing to open
        write_debug(folder / "debug.cbor", debug)
        check_everything(folder)


def _limits(dtype: np.dtype) -> tuple[int, int]:
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)
