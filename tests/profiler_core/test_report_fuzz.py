"""Fuzzing reports: damaged bytes of real report files (the factory's and tutorial 4's) and
decodable columns with random values; opening, every analysis, the pva facade and every CLI
command let only ReportError escape, within a time and memory bound per example."""

from __future__ import annotations

import contextlib
import io
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from profiler_core.cli import main
from profiler_core.errors import ReportError
from profiler_core.formats.debug_cbor import write_debug
from profiler_core.formats.profile_pop import write_profile
from tests.fuzzing import DERANDOMIZE, examples
from tests.profiler_core.everything import CLI_COMMANDS, analyse_everything, cli_everything
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
            prefixes = ("popvision-cli: warning: ", "popvision-cli: note: ")
            assert all(line.startswith(prefixes) for line in err.splitlines())
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


# -- checksums: no silent difference ---------------------------------------------------------
ANSWER_COMMANDS = (*CLI_COMMANDS, ["insights"])
ANSWERS_FOLDER = Path(tempfile.mkdtemp(prefix="popvision-answers-"))  # one path: same output


def answers(folder: Path) -> list[tuple[int, str, str]]:
    """(exit code, stdout, stderr) of every command on the report in ``folder``."""
    results = []
    for argv in ANSWER_COMMANDS:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*argv, str(folder)])
        results.append((code, out.getvalue(), err.getvalue()))
    return results


def _write_answers_folder(profile: bytes, debug: bytes) -> None:
    (ANSWERS_FOLDER / "profile.pop").write_bytes(profile)
    (ANSWERS_FOLDER / "debug.cbor").write_bytes(debug)


_write_answers_folder(*FACTORY)
INTACT_ANSWERS = answers(ANSWERS_FOLDER)


@settings(
    max_examples=examples(60),
    derandomize=DERANDOMIZE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    file=st.sampled_from(["profile.pop", "debug.cbor"]),
    where=st.floats(0, 1, exclude_max=True),
    mask=st.integers(1, 255),
)
def test_a_changed_byte_changes_no_answer_silently(file, where, mask):
    """Issue 30: a byte of profile.pop or debug.cbor changed after writing either leaves
    every command's answer (exit code, stdout, stderr) as the intact report's, or the command
    says the file is damaged (exit 2, or 5 with a warning) naming it -- mostly its checksum,
    else a check the reader makes before it can compute one (a dtype, a framing)."""
    profile, debug = bytearray(FACTORY[0]), bytearray(FACTORY[1])
    data = profile if file == "profile.pop" else debug
    data[int(where * len(data))] ^= mask
    _write_answers_folder(bytes(profile), bytes(debug))
    try:
        found = answers(ANSWERS_FOLDER)
    finally:
        _write_answers_folder(*FACTORY)
    changed = [
        (argv, got) for argv, got, intact in zip(ANSWER_COMMANDS, found, INTACT_ANSWERS, strict=True)
        if got != intact
    ]  # fmt: skip
    if not changed:
        event("every answer unchanged")
        return
    for argv, (code, _out, err) in changed:
        assert code in (2, 5), f"{argv} answered differently with no error: exit {code}"
        assert f"{ANSWERS_FOLDER / file}: " in err, f"{argv}: {err}"
    checksum = any("checksum" in err for _, (_, _, err) in changed)
    event(f"{file}: {'checksum error' if checksum else 'refused by another check'}")
