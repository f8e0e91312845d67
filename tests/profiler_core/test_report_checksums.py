"""profile.pop 1.2 and debug.cbor 2.1 carry CRC-32 checksums (issue 30, point 1): a byte
changed after writing is a ChecksumError naming the file and the section, never a silently
different number; the other sections still read; files from before checksums open with a
note."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import struct
import zlib
from pathlib import Path

import cbor2
import numpy as np
import pytest

from profiler_core import pva
from profiler_core.cli import main
from profiler_core.errors import ChecksumError
from profiler_core.formats.debug_cbor import read_debug, write_debug
from profiler_core.formats.profile_pop import ProfileReader, read_profile, write_profile
from profiler_core.formats.profile_pop.writer import build_message
from profiler_core.report import open_report
from tests.profiler_core.checksummed import as_format_1_1, flip
from tests.profiler_core.factories import make_report


@pytest.fixture
def report(tmp_path: Path):
    """A factory report written to ``tmp_path``: (folder, profile, debug)."""
    profile, debug = make_report(3)
    write_profile(tmp_path / "profile.pop", profile)
    write_debug(tmp_path / "debug.cbor", debug)
    return tmp_path, profile, debug


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_a_byte_changed_in_liveness_data_names_the_file_and_section(report):
    folder, profile, _ = report
    path = folder / "profile.pop"
    live = profile.liveness.step_live_bytes.astype("<i8")
    flip(path, live.tobytes(), at=8 * 3)  # the 4th step's live bytes, lowest byte
    # What a reader without checksums gives (every reader before 1.2): another number.
    with ProfileReader(path, verify=False) as unchecked:
        assert unchecked.liveness.step_live_bytes[3] == live[3] ^ 1
    with ProfileReader(path) as reader:
        with pytest.raises(ChecksumError) as caught:
            _ = reader.liveness
        assert str(caught.value).startswith(f"{path}: damaged: section 'liveness' fails its")
        assert caught.value.path == path
        # the other sections read, and are what was written
        assert np.array_equal(reader.memory.by_category, profile.memory.by_category)
        assert np.array_equal(reader.programs.step_cycles, profile.programs.step_cycles)
        assert reader.header.program_name == profile.header.program_name
        with pytest.raises(ChecksumError):  # the error is kept, not decoded again
            _ = reader.liveness


def _needle(profile, section: str) -> tuple[bytes, int]:
    """Bytes of ``section`` that occur once in the file, and which of them to change."""
    if section == "header":
        return profile.header.program_name.encode(), 3
    if section == "target":
        return struct.pack("<d", profile.target.clock_hz), 0  # lowest mantissa bit: finite
    if section == "strings":
        return bytes(profile.graph.strings.blob), 5
    column = {
        "graph": profile.graph.vc_count.astype("<i4"),
        "memory": profile.memory.by_category.astype("<i8"),
        "program_costs": profile.programs.step_cycles.astype("<i8"),
        "program_steps": profile.programs.step_debug.astype("<i4"),
        "execution": profile.execution.runs[0].start_cycles.astype("<i8"),
    }[section]
    return column.tobytes(), 8


@pytest.mark.parametrize(
    ("section", "attribute", "named"),
    [
        ("header", "header", "section 'header'"),
        ("target", "target", "section 'target'"),
        ("strings", "strings", "section 'graph' (its string table)"),
        ("graph", "graph", "section 'graph'"),
        ("memory", "memory", "section 'memory'"),
        ("program_steps", "program_steps", "section 'programs'"),
        ("program_steps", "programs", "section 'programs'"),
        ("program_costs", "programs", "section 'programs' (its steps' cycles and exchanges)"),
        ("execution", "execution", "section 'execution'"),
    ],
)
def test_a_changed_byte_in_each_section_fails_its_checksum(report, section, attribute, named):
    folder, profile, _ = report
    path = folder / "profile.pop"
    flip(path, *_needle(profile, section))
    with ProfileReader(path) as reader:
        with pytest.raises(ChecksumError, match=re.escape(f"damaged: {named} fails its checksum")):
            getattr(reader, attribute)
        assert np.array_equal(reader.liveness.step_live_bytes, profile.liveness.step_live_bytes)


def test_a_changed_name_in_the_string_table_also_stops_the_graph(report):
    folder, profile, _ = report
    flip(folder / "profile.pop", *_needle(profile, "strings"))
    with ProfileReader(folder / "profile.pop") as reader, pytest.raises(ChecksumError) as caught:
        _ = reader.graph
    assert "section 'graph' (its string table) fails its checksum" in str(caught.value)


def test_the_cli_says_which_section_is_damaged_and_prints_the_rest(report):
    folder, profile, _ = report
    flip(folder / "profile.pop", *_needle(profile, "memory"))
    code, _, err = cli("memory", str(folder))
    assert code == 2
    assert f"{folder / 'profile.pop'}: damaged: section 'memory' fails its checksum" in err
    code, out, err = cli("program-tree", str(folder))
    assert code == 0 and out and err == ""


def test_a_1_1_file_without_checksums_opens_with_a_note(report, tmp_path):
    folder, profile, _ = report
    path = folder / "profile.pop"
    path.write_bytes(as_format_1_1(build_message(profile)))
    written = read_profile(path)
    assert written.header.format_minor == 1
    assert np.array_equal(written.memory.by_category, profile.memory.by_category)
    with open_report(folder) as opened:
        assert opened.summary(check_debug=True).errors == {}
        (note,) = opened.notes()
        assert note.startswith(f"{path}: written in profile format 1.1, before section checksums")
    code, out, err = cli("summary", str(folder))
    assert code == 0 and out
    assert err == f"popvision-cli: note: {note}\n"
    with pva.openReport(path) as script_report:
        assert script_report.notes == [note] and script_report.warnings == []


def test_a_1_2_file_that_lost_its_checksums_is_damaged_not_old(report):
    folder, profile, _ = report
    message = build_message(profile)
    message.disown("checksums")  # formatMinor stays 2: this writer always writes them
    (folder / "profile.pop").write_bytes(message.to_bytes())
    with ProfileReader(folder / "profile.pop") as reader:
        assert reader.integrity_note == ""
        with pytest.raises(ChecksumError, match="section 'memory' cannot be checked: its sec"):
            _ = reader.memory


def test_a_section_without_its_checksum_entry_is_damaged(report):
    folder, profile, _ = report
    message = build_message(profile)
    entry = next(e for e in message.checksums if e.section == "liveness")
    entry.section = "livenesz"
    (folder / "profile.pop").write_bytes(message.to_bytes())
    with ProfileReader(folder / "profile.pop") as reader:
        with pytest.raises(ChecksumError, match="section 'liveness' has no checksum"):
            _ = reader.liveness
        assert reader.memory.by_category.shape == profile.memory.by_category.shape


def test_the_memory_checksum_is_crc32_of_the_documented_stream(report):
    """The definition, computed here with zlib alone: CRC-32 of, per column, its name,
    dtype, number of dimensions and sizes (texts length-prefixed <Q, integers 16 bytes
    little-endian signed), then its bytes, length-prefixed."""
    folder, profile, _ = report

    def text(value: str) -> bytes:
        return struct.pack("<Q", len(value.encode())) + value.encode()

    def integer(value: int) -> bytes:
        return value.to_bytes(16, "little", signed=True)

    stream = b""
    for name in ("by_category", "interleaved"):
        column = np.ascontiguousarray(getattr(profile.memory, name), dtype="<i8")
        stream += text(name) + text("<i8") + integer(column.ndim)
        stream += b"".join(integer(size) for size in column.shape)
        stream += struct.pack("<Q", column.nbytes) + column.tobytes()
    with ProfileReader(folder / "profile.pop") as reader:
        stored = {e.section: e.crc32 for e in reader._root.checksums}
    assert stored["memory"] == zlib.crc32(stream)


# -- debug.cbor ------------------------------------------------------------------------------
def test_a_changed_name_in_debug_cbor_is_a_checksum_error_naming_the_file(report):
    folder, _, debug = report
    path = folder / "debug.cbor"
    flip(path, b"ctx1/layer1", at=2)  # "ctx1" -> "cty1"
    with pytest.raises(ChecksumError, match="damaged: its content fails its checksum") as caught:
        read_debug(path)
    assert caught.value.path == path
    with open_report(folder) as opened:
        assert opened.section_error("debug") is not None
        assert opened.memory.by_category.size  # the profile reads
    code, out, err = cli("summary", str(folder))
    assert code == 5 and out  # printed, with the damage as a warning
    assert f"popvision-cli: warning: {path}: damaged: its content fails its checksum" in err


def test_without_its_checksum_the_same_change_was_shown_as_another_name(report):
    """A 2.0 file (no crc32) with the same change: read, silently, with the wrong name --
    what every debug.cbor gave before 2.1 -- and a note that damage cannot be detected."""
    folder, _, debug = report
    path = folder / "debug.cbor"
    document = cbor2.loads(path.read_bytes())
    del document["crc32"]
    document["formatMinor"] = 0
    path.write_bytes(cbor2.dumps(document))
    flip(path, b"ctx1/layer1", at=2)
    read = read_debug(path)
    assert read.name[1] == "cty1/layer1" != debug.name[1]
    assert read.integrity_note.startswith("written in debug format 2.0, before checksums")


def test_a_version_1_debug_cbor_opens_with_a_note(report):
    folder, _, debug = report
    write_debug(folder / "debug.cbor", debug, format_major=1)
    with open_report(folder) as opened:
        assert list(opened.debug.name) == list(debug.name)
        assert any("debug format 1.0, before checksums" in n for n in opened.notes())
    code, _, err = cli("operations", str(folder))
    assert code == 0 and "popvision-cli: note: " in err


def test_a_written_debug_cbor_reads_without_a_note(report, tmp_path):
    folder, _, debug = report
    assert read_debug(folder / "debug.cbor").integrity_note == ""
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with open_report(copy) as opened:
        _ = opened.debug
        assert opened.notes() == []


def test_the_vertices_debug_contexts_have_a_checksum_of_their_own(tmp_path):
    """vc_debug (added after 1.4) is checked apart from the graph's other columns, so files
    and readers from before it still agree on the graph's checksum."""
    import dataclasses

    profile, debug = make_report(3)
    contexts = np.arange(len(profile.graph.vc_cs), dtype=np.int32) % len(debug)
    with_contexts = dataclasses.replace(
        profile, graph=dataclasses.replace(profile.graph, vc_debug=contexts)
    )
    plain, named = tmp_path / "plain.pop", tmp_path / "named.pop"
    write_profile(plain, profile)
    write_profile(named, with_contexts)
    with ProfileReader(plain) as a, ProfileReader(named) as b:
        assert a.graph.vc_debug is None and b.graph.vc_debug.tolist() == contexts.tolist()
        assert a._checksums.sums["graph"] == b._checksums.sums["graph"]
        assert "vertex_contexts" not in a._checksums.sums
    flip(named, contexts.astype("<i4").tobytes(), at=4)
    damaged = "section 'graph' \\(its vertices' debug contexts\\) fails"
    with ProfileReader(named) as reader, pytest.raises(ChecksumError, match=damaged):
        _ = reader.graph
