"""profile.pop 1.4 checks the programs section's tree and steps apart from the steps' costs
(cycles per IPU, exchanges and compute per tile), so the Summary reads the steps without
checking the costs; a 1.3 file's one checksum over the section still opens."""

from __future__ import annotations

import dataclasses
import struct
import zlib

import numpy as np
import pytest

from profiler_core.errors import ChecksumError
from profiler_core.formats.profile_pop import ProfileReader, write_profile
from profiler_core.formats.profile_pop.checksums import header_checksum
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.report import open_report
from tests.profiler_core.checksummed import flip
from tests.profiler_core.factories import make_report

# formats/README.md: the columns of each part, in schema order
STEP_COLUMNS = ("node_kind", "node_name", "node_parent", "node_step", "node_count",
                "node_debug", "node_function", "roots", "step_kind", "step_name", "step_cs",
                "step_debug", "step_node", "step_global_bytes")  # fmt: skip
COST_COLUMNS = ("step_cycles", "exch_step", "exch_tile", "exch_bytes_in", "exch_bytes_out",
                "cst_cs", "cst_tile", "cst_cycles", "cs_busy_cycles")  # fmt: skip
DTYPES = {
    "node_kind": "|u1",
    "step_kind": "|u1",
    "node_count": "<i8",
    "step_cycles": "<i8",
    "step_global_bytes": "<i8",
    "exch_bytes_in": "<i8",
    "exch_bytes_out": "<i8",
    "cs_busy_cycles": "<i8",
}  # fmt: skip  (the rest are int32)


@pytest.fixture
def written(tmp_path):
    profile = make_report(4)[0]
    profile.programs.cs_busy_cycles = np.arange(len(profile.graph.cs_name), dtype=np.int64) * 7
    write_profile(tmp_path / "profile.pop", profile)
    return tmp_path / "profile.pop", profile


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("<Q", len(data)) + data


def _integer(value: int) -> bytes:
    return value.to_bytes(16, "little", signed=True)


def documented_stream(programs, names: tuple[str, ...]) -> bytes:
    """Each column as its name, dtype text, dimensions, sizes, byte length and bytes."""
    out = []
    for name in names:
        array = np.ascontiguousarray(getattr(programs, name), dtype=DTYPES.get(name, "<i4"))
        out += [_text(name), _text(array.dtype.str), _integer(array.ndim)]
        out += [_integer(size) for size in array.shape]
        out += [struct.pack("<Q", array.nbytes), array.tobytes()]
    return b"".join(out)


def test_each_part_is_crc32_of_its_documented_stream(written):
    _, profile = written
    stored = {e.section: e.crc32 for e in build_message(profile).checksums}
    assert stored["programs"] == zlib.crc32(documented_stream(profile.programs, STEP_COLUMNS))
    assert stored["program_costs"] == zlib.crc32(documented_stream(profile.programs, COST_COLUMNS))


def test_changed_costs_leave_the_program_steps_readable(written):
    path, profile = written
    flip(path, profile.programs.step_cycles.astype("<i8").tobytes(), 8)
    with ProfileReader(path) as reader:
        steps = reader.program_steps
        for name in STEP_COLUMNS:
            assert np.array_equal(getattr(steps, name), getattr(profile.programs, name)), name
        assert not hasattr(steps, "step_cycles")  # the costs are not handed out unchecked
        with pytest.raises(ChecksumError, match="'programs' .its steps' cycles and exchanges."):
            _ = reader.programs
    with open_report(path.parent) as report:  # the summary shows the steps, not the error
        summary = report.summary()
        assert summary.peak_live_step is not None and "program_steps" not in summary.errors


def test_changed_steps_stop_both(written):
    path, profile = written
    flip(path, profile.programs.step_debug.astype("<i4").tobytes(), 4)
    with ProfileReader(path) as reader:
        for attribute in ("program_steps", "programs"):
            with pytest.raises(ChecksumError, match="section 'programs' fails its checksum"):
                getattr(reader, attribute)


def as_format_1_3(profile) -> bytes:
    """The report as a 1.3 writer wrote it: one checksum over the whole programs section."""
    message = build_message(profile)
    message.formatMinor = 3
    header = dataclasses.replace(profile.header, format_major=1, format_minor=3)
    whole = zlib.crc32(documented_stream(profile.programs, STEP_COLUMNS[:13] + COST_COLUMNS[:1]
                                         + STEP_COLUMNS[13:] + COST_COLUMNS[1:]))  # fmt: skip
    sums = {e.section: e.crc32 for e in message.checksums if e.section != "program_costs"}
    sums.update(header=header_checksum(header), programs=whole)
    out = message.init("checksums", len(sums))
    for entry, (section, crc) in zip(out, sums.items(), strict=True):
        entry.section, entry.crc32 = section, crc
    return message.to_bytes()


def test_a_1_3_file_is_checked_whole(written):
    """Schema order puts step_cycles between step_node and step_global_bytes: a 1.3 file's
    checksum covers every column in that order, and the steps alone are not checked apart."""
    path, profile = written
    path.write_bytes(as_format_1_3(profile))
    with ProfileReader(path) as reader:
        assert reader.header.format_minor == 3
        assert np.array_equal(reader.programs.step_cycles, profile.programs.step_cycles)
        assert np.array_equal(reader.program_steps.step_name, profile.programs.step_name)
    flip(path, profile.programs.step_cycles.astype("<i8").tobytes(), 8)
    refused = pytest.raises(ChecksumError, match="section 'programs' fails its checksum")
    with ProfileReader(path) as reader, refused:
        _ = reader.program_steps  # one checksum: the steps cannot be told apart
