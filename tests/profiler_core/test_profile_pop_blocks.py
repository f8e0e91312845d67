"""profile.pop 1.5's blocks section (issue 43): lightweight profiling's executions round
trip, read without the engine; a damaged section is refused by name while the other
sections (and pages, and CLI commands) still work; files from before 1.5 read as having none."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

from profiler_core.analysis.blocks import block_executions
from profiler_core.cli import main
from profiler_core.errors import ChecksumError, ReportError
from profiler_core.formats.profile_pop import ProfileReader, read_profile, write_profile
from profiler_core.formats.profile_pop.arrays import write_array
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.model.kinds import BlockKind
from profiler_core.model.profile import BlocksData
from profiler_core.model.strings import Strings
from profiler_core.report import open_report
from tests.profiler_core.checksummed import as_format_1_1, flip, resealed
from tests.profiler_core.factories import make_report

# cycle counts no other column of the factory's report holds, so a byte of them can be found
STARTS = np.array([1_000_003, 1_020_011, 1_040_027], dtype=np.int64)


def blocks_of(num_ipus: int = 2) -> BlocksData:
    """Two blocks ("stage", and the StreamCopyBegin of stream "in") in one run, by hand."""
    return BlocksData(
        strings=Strings.from_list(["stage", "in", "main"]),
        tile=1,
        block_name=np.array([0, 1], np.int32),
        block_kind=np.array([BlockKind.BLOCK, BlockKind.STREAM_COPY_BEGIN], np.uint8),
        block_node=np.array([3, -1], np.int32),
        run_program=np.array([0], np.int32),
        run_name=np.array([2], np.int32),
        run_start=np.array([1_000_000], np.int64),
        run_cycles=np.array([50_000], np.int64),
        exec_block=np.array([0, 0, 1], np.int32),
        exec_run=np.array([0, 0, 0], np.int32),
        exec_ipu=np.array([0, 0, num_ipus - 1], np.int32),
        exec_tile=np.array([1, 1, 5], np.int32),
        exec_depth=np.array([0, 0, 1], np.int32),
        exec_start=STARTS,
        exec_end=STARTS + np.array([7200, 7201, 1400]),
    )


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    profile, _ = make_report(5)  # 2 IPUs of 4 tiles
    profile.blocks = blocks_of()
    write_profile(tmp_path / "profile.pop", profile)
    return tmp_path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_blocks_round_trip_as_written(folder):
    written = blocks_of()
    read = read_profile(folder / "profile.pop").blocks
    assert read.strings.tolist() == ["stage", "in", "main"] and read.tile == 1
    for name in ("block_name", "block_kind", "block_node", "run_program", "run_name",
                 "run_start", "run_cycles", "exec_block", "exec_run", "exec_ipu",
                 "exec_tile", "exec_depth", "exec_start", "exec_end"):  # fmt: skip
        assert np.array_equal(getattr(read, name), getattr(written, name)), name
    with ProfileReader(folder / "profile.pop", on_demand=True) as reader:  # pages given back
        assert reader.blocks.exec_end.tolist() == (STARTS + [7200, 7201, 1400]).tolist()


def test_a_report_made_without_lightweight_profiling_has_none(tmp_path):
    profile, _ = make_report(5)
    write_profile(tmp_path / "profile.pop", profile)
    with ProfileReader(tmp_path / "profile.pop") as reader:
        assert reader.format_minor == 5 and reader.blocks is None
    assert block_executions(open_report(tmp_path)) is None


def test_a_1_4_file_opens_without_blocks(tmp_path):
    profile, _ = make_report(5)
    message = build_message(profile)
    sums = [(e.section, e.crc32) for e in message.checksums if e.section != "blocks"]
    out = message.init("checksums", len(sums))  # as a 1.4 writer wrote them
    for entry, (section, crc) in zip(out, sums, strict=True):
        entry.section, entry.crc32 = section, crc
    message.formatMinor = 4
    (tmp_path / "profile.pop").write_bytes(message.to_bytes())
    report = open_report(tmp_path)
    assert report.format_version == "1.4" and report.blocks is None
    assert report.execution is not None and report.programs.num_steps > 0


def test_a_1_1_file_without_checksums_opens_without_blocks(tmp_path):
    profile, _ = make_report(5)
    profile.blocks = blocks_of()
    (tmp_path / "profile.pop").write_bytes(as_format_1_1(build_message(profile)))
    report = open_report(tmp_path)
    assert report.blocks is None and report.notes()


def test_a_byte_changed_in_the_blocks_is_refused_by_name_and_the_rest_still_works(folder):
    path = folder / "profile.pop"
    flip(path, STARTS.astype("<i8").tobytes(), at=8)  # the second execution's start
    report = open_report(folder)
    with pytest.raises(ChecksumError, match=r"damaged: section 'blocks' fails its checksum"):
        _ = report.blocks
    assert report.section_error("blocks") is not None
    for section in ("target", "graph", "memory", "liveness", "programs", "execution"):
        assert report.section_error(section) is None, section
    assert "blocks" in report.load()
    code, _, err = cli("execution", "--blocks", str(folder))
    assert code == 2 and "section 'blocks' fails its checksum" in err
    code, out, _ = cli("execution", str(folder))  # the detailed trace still reads
    assert code == 0 and "by step kind" in out
    assert cli("summary", str(folder))[0] == 0


def test_a_1_5_file_without_the_blocks_checksum_is_damaged(folder):
    path = folder / "profile.pop"
    with ProfileReader(path) as reader:
        assert reader.blocks is not None
    profile = read_profile(path)
    message = build_message(profile)
    sums = [(e.section, e.crc32) for e in message.checksums if e.section != "blocks"]
    out = message.init("checksums", len(sums))
    for entry, (section, crc) in zip(out, sums, strict=True):
        entry.section, entry.crc32 = section, crc
    path.write_bytes(message.to_bytes())
    with pytest.raises(ChecksumError, match="section 'blocks' has no checksum in the file"):
        _ = ProfileReader(path).blocks


@pytest.mark.filterwarnings("ignore:This message has already been written")
@pytest.mark.parametrize(
    ("column", "values", "problem"),
    [
        ("execEnd", [1_000_000, 1_020_100, 1_041_427], "execution 0 ends at cycle 1000000, before"),
        ("execBlock", [0, 0, 2], "column 'exec_block' refers to row 2 of the blocks table"),
        ("execRun", [0, 1, 0], "column 'exec_run' refers to row 1 of the runs table"),
        ("execIpu", [0, -1, 1], "column 'exec_ipu' is negative (-1) at row 1"),
        ("blockName", [0, 3], "column 'block_name' refers to row 3 of the strings table"),
    ],
)
def test_an_inconsistent_blocks_section_names_its_problem(tmp_path, column, values, problem):
    profile, _ = make_report(5)
    profile.blocks = blocks_of()
    message = build_message(profile)
    dtype = {"execEnd": "<i8"}.get(column, "<i4")
    write_array(message.blocks.init(column), np.array(values, dtype=dtype))
    path = tmp_path / "profile.pop"
    path.write_bytes(resealed(message).to_bytes())
    reader = ProfileReader(path)
    with pytest.raises(ReportError, match=re.escape(f"section 'blocks': {problem}")):
        _ = reader.blocks
    assert reader.execution is not None


def test_executions_on_an_ipu_the_target_lacks_are_refused_by_the_analysis(tmp_path):
    profile, _ = make_report(5)
    profile.blocks = blocks_of(num_ipus=3)  # an execution on IPU 2 of a 2-IPU target
    write_profile(tmp_path / "profile.pop", profile)
    report = open_report(tmp_path)
    assert report.blocks.exec_ipu.max() == 2  # the section alone is consistent
    with pytest.raises(ReportError, match="section 'blocks': an execution on IPU 2; the target"):
        block_executions(report)
