"""Damaged, foreign and hostile .pvti files give a ReportError naming the file, never a crash."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import read_pvti
from profiler_core.trace import open_trace
from tests.profiler_core.pvti_samples import as_format_1_1, sql


def refused(path: Path, match: str) -> ReportError:
    """The error read_pvti raises for ``path``, checked to name it and contain ``match``."""
    with pytest.raises(ReportError, match=re.escape(match)) as err:
        read_pvti(path)
    assert path.name in str(err.value)
    assert err.value.path == path
    return err.value


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    refused(tmp_path / "gone.pvti", "no such file")


def test_an_empty_file_is_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "empty.pvti"
    path.write_bytes(b"")
    refused(path, "empty file")


def test_a_text_file_renamed_pvti_is_not_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "notes.pvti"
    path.write_text("epoch 1: loss 0.5\n" * 20)
    refused(path, "not a SQLite database")


def test_a_truncated_trace_is_read_and_says_how_much_is_missing(small_pvti: Path) -> None:
    data = small_pvti.read_bytes()
    small_pvti.write_bytes(data[: len(data) // 2])
    contents = read_pvti(small_pvti)  # salvaged, not refused (test_pvti_truncated.py)
    assert f"truncated: {len(data) // 2:,} of {len(data):,} bytes" in contents.incomplete


def test_a_trace_cut_inside_the_header_is_truncated(small_pvti: Path) -> None:
    small_pvti.write_bytes(small_pvti.read_bytes()[:40])
    refused(small_pvti, "truncated")


def test_flipped_bytes_in_the_schema_page_are_corruption(small_pvti: Path) -> None:
    data = bytearray(small_pvti.read_bytes())
    data[100:200] = bytes(b ^ 0xFF for b in data[100:200])
    small_pvti.write_bytes(bytes(data))
    refused(small_pvti, "corrupt")


def test_a_sqlite_file_with_other_tables_is_not_a_trace(tmp_path: Path) -> None:
    path = tmp_path / "shop.pvti"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    refused(path, "missing meta, processes")


def test_a_trace_without_its_event_table_names_the_table(small_pvti: Path) -> None:
    sql(small_pvti, "DROP TABLE event_batches")
    refused(small_pvti, "missing event_batches")


# A 1.1 file's batches carry no checksum: only the reader's own checks stand between a
# damaged batch and the window (test_pvti_checksums.py: a 1.2 file skips the batch).
def test_a_batch_whose_blob_is_shorter_than_its_count_is_corrupt(small_pvti: Path) -> None:
    as_format_1_1(small_pvti)
    sql(small_pvti, "UPDATE event_batches SET n = n + 1")
    refused(small_pvti, "corrupt .pvti: event batch 1: column start_ns")


def test_an_absurd_batch_count_is_refused_without_allocating_it(small_pvti: Path) -> None:
    as_format_1_1(small_pvti)
    sql(small_pvti, "UPDATE event_batches SET n = 4611686018427387904")
    refused(small_pvti, "corrupt .pvti: event batch")


def test_damaged_label_ids_are_corrupt_not_an_index_error(small_pvti: Path) -> None:
    as_format_1_1(small_pvti)
    (blob,) = sql(small_pvti, "SELECT label FROM event_batches WHERE id = 1")[0]
    sql(small_pvti, "UPDATE event_batches SET label = ? WHERE id = 1", (b"\xff" * len(blob),))
    refused(small_pvti, "an event's label id")


def test_a_meta_value_that_is_not_a_number_is_refused(small_pvti: Path) -> None:
    sql(small_pvti, "UPDATE meta SET value = 'soon' WHERE key = 'origin_wall_ns'")
    refused(small_pvti, "malformed number")


def test_a_text_value_where_a_sample_time_belongs_is_refused(small_pvti: Path) -> None:
    sql(small_pvti, "UPDATE series_samples SET t_ns = 'late'")
    refused(small_pvti, "malformed values")


def test_an_unknown_event_column_dtype_is_refused(small_pvti: Path) -> None:
    sql(small_pvti, "UPDATE event_columns SET dtype = '<c16' WHERE name = 'depth'")
    refused(small_pvti, "event column 'depth' has dtype '<c16'")


def test_open_trace_names_a_folder_without_traces(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match=r"no \.pvti files") as err:
        open_trace(tmp_path)
    assert tmp_path.name in str(err.value)


def test_open_trace_refuses_a_file_that_is_neither_format(tmp_path: Path) -> None:
    path = tmp_path / "trace.bin"
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(ReportError, match=r"neither a \.pvti trace"):
        open_trace(path)
