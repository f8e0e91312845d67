""".pvti 1.2: each event batch row carries an CRC-32 of its count and columns; a batch
changed after writing is left out and counted in ``incomplete`` (as a batch on a missing
page is), while the rest of the trace reads (issue 30, point 1)."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti import PvtiWriter, read_pvti
from profiler_core.formats.pvti.schema import EVENT_COLUMNS
from profiler_core.trace import open_trace
from tests.profiler_core.pvti_samples import as_format_1_1, sql


def two_batch_trace(directory: Path) -> tuple[Path, int]:
    """A trace of two commits (two batch rows): span "first" 100-200, then "second"
    300-500 with arguments. Returns its path and the writer's monotonic origin."""
    writer = PvtiWriter(directory, process_name="two", background=False)
    o = writer.origin_monotonic_ns
    writer.add_span(7, "c", "first", o + 100, o + 200, 0)
    writer.flush()
    writer.add_span(7, "c", "second", o + 300, o + 500, 0, args={"k": 1})
    writer.close()
    return writer.path, o


def change_end_of_first_batch(path: Path) -> None:
    """Batch 1's end time 256 ns later in its blob, its checksum left as written: the event
    still makes sense (ends after it starts), only its number is wrong."""
    (blob,) = sql(path, "SELECT end_ns FROM event_batches WHERE id = 1")[0]
    changed = np.frombuffer(blob, "<i8") + 256
    sql(path, "UPDATE event_batches SET end_ns = ? WHERE id = 1", (changed.tobytes(),))


def spans(contents) -> list[tuple[str, int, int]]:
    columns = (contents.events[name] for name in ("label", "start_ns", "end_ns"))
    return [
        (contents.labels[int(label)], int(start), int(end))
        for label, start, end in zip(*columns, strict=True)
    ]


def test_a_batch_changed_after_writing_is_left_out_and_counted(tmp_path):
    path, o = two_batch_trace(tmp_path)
    change_end_of_first_batch(path)
    contents = read_pvti(path)
    assert spans(contents) == [("second", o + 300, o + 500)]
    assert "1 event batch(es) that fail their checksum" in contents.incomplete
    assert "shows 1 event(s)" in contents.incomplete
    # the kept batch keeps its arguments, at its new index
    assert {i: json.loads(text) for i, text in contents.args.items()} == {0: {"k": 1}}
    trace = open_trace(path)
    assert any("fail their checksum" in warning for warning in trace.partial_warnings())


def test_without_checksums_the_same_damage_was_shown_as_a_different_number(tmp_path):
    """What a 1.1 file (and every file before this change) gives for the same damage: the
    changed end time, silently -- the reason 1.2 carries checksums."""
    path, o = two_batch_trace(tmp_path)
    change_end_of_first_batch(as_format_1_1(path))
    contents = read_pvti(path)
    assert spans(contents) == [("first", o + 100, o + 200 + 256), ("second", o + 300, o + 500)]
    assert contents.incomplete == ""


def test_a_changed_event_count_skips_its_batch_instead_of_refusing_the_trace(tmp_path):
    path, o = two_batch_trace(tmp_path)
    sql(path, "UPDATE event_batches SET n = n + 1 WHERE id = 2")
    contents = read_pvti(path)
    assert spans(contents) == [("first", o + 100, o + 200)]
    assert contents.args == {}
    assert "1 event batch(es) that fail their checksum" in contents.incomplete


def test_a_1_1_trace_without_checksums_still_reads_whole(tmp_path):
    path, o = two_batch_trace(tmp_path)
    as_format_1_1(path)
    contents = read_pvti(path)
    assert (contents.meta.format_major, contents.meta.format_minor) == (1, 1)
    assert spans(contents) == [("first", o + 100, o + 200), ("second", o + 300, o + 500)]
    assert contents.incomplete == ""


def test_the_stored_checksum_is_crc32_of_the_count_and_the_columns_as_documented(tmp_path):
    """The definition, computed here with zlib alone: CRC-32 of the count as 16
    little-endian signed bytes, then per column in schema order its length (<Q) and its
    bytes, stored as a signed 64-bit INTEGER."""
    path, _ = two_batch_trace(tmp_path)
    names = ", ".join(EVENT_COLUMNS)
    for n, *blobs, stored in sql(path, f"SELECT n, {names}, checksum FROM event_batches"):
        stream = n.to_bytes(16, "little", signed=True)
        stream += b"".join(struct.pack("<Q", len(blob)) + blob for blob in blobs)
        expected = zlib.crc32(stream)
        assert stored % 2**64 == expected
        assert np.frombuffer(blobs[0], "<i8").size == n
    assert read_pvti(path).meta.format_minor == 2
