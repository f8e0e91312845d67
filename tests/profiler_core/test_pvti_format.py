"""The .pvti format: what the writer commits is what the reader returns, column by column."""

from __future__ import annotations

import hashlib
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import FormatVersionError, ReportError
from profiler_core.formats.pvti import EventKind, PvtiWriter, read_pvti, recording
from tests.profiler_core.pvti_samples import (
    HEAT_COUNTS,
    IPU_STEPS,
    LOSS,
    MAIN_EVENTS,
    MAIN_TID,
    sql,
    write_small_trace,
)


def test_trace_file_is_named_by_date_time_and_pid(tmp_path: Path) -> None:
    first = PvtiWriter(tmp_path, background=False)
    second = PvtiWriter(tmp_path, background=False)
    first.close()
    second.close()
    pattern = rf"\d{{4}}_\d{{2}}_\d{{2}}_\d{{6}}_{os.getpid()}(_1)?\.pvti"
    assert re.fullmatch(pattern, first.path.name)
    assert re.fullmatch(pattern, second.path.name)
    assert first.path != second.path


def test_reader_returns_every_event_with_its_label_thread_depth_and_kind(
    small_pvti: Path,
) -> None:
    contents = read_pvti(small_pvti)
    o = contents.meta.origin_monotonic_ns
    ev = contents.events
    got = sorted(
        (
            contents.threads[t].name,
            contents.labels[lab],
            s - o,
            e - o,
            d,
            k,
        )
        for t, lab, s, e, d, k in zip(
            ev["thread"], ev["label"], ev["start_ns"], ev["end_ns"], ev["depth"], ev["kind"],
            strict=True,
        )
    )  # fmt: skip
    expected = sorted(
        [
            ("main", label, s, e, d, EventKind.SPAN if k == "span" else EventKind.INSTANT)
            for label, s, e, d, k in MAIN_EVENTS
        ]
        + [("IPU 0", label, s, e, 0, EventKind.SPAN) for label, s, e in IPU_STEPS]
    )
    assert got == expected
    threads = {t.name: t for t in contents.threads}
    assert threads["main"].os_tid == MAIN_TID and threads["main"].kind == "thread"
    assert threads["IPU 0"].os_tid is None and threads["IPU 0"].kind == "track"
    assert sorted(contents.channels) == ["IPU", "Training"]


def test_reader_returns_args_series_heatmaps_and_meta(small_pvti: Path) -> None:
    contents = read_pvti(small_pvti)
    o = contents.meta.origin_monotonic_ns
    ((args_index, args_text),) = contents.args.items()
    assert contents.events["start_ns"][args_index] - o == 5000
    assert args_text == '{"n":2}'
    ((sdef, t, values),) = contents.series
    assert (sdef.graph, sdef.name, sdef.unit) == ("Loss", "train", "")
    assert (t - o).tolist() == [s[0] for s in LOSS]
    assert values.tolist() == [s[1] for s in LOSS]
    ((hdef, ht, counts),) = contents.heatmaps
    assert hdef.edges.tolist() == [0.0, 1.0]
    assert (ht - o).tolist() == [7000]
    assert counts.tolist() == [HEAT_COUNTS]
    meta = contents.meta
    assert (meta.format_major, meta.pid, meta.process_name) == (1, os.getpid(), "small")
    assert abs(meta.origin_wall_ns - time.time_ns()) < 60e9
    assert contents.processes[0].pid == os.getpid()


def test_file_is_wal_while_written_and_one_self_contained_file_once_closed(
    tmp_path: Path,
) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    writer.add_instant(1, "c", "x", time.monotonic_ns())
    writer.flush()
    assert sql(writer.path, "PRAGMA journal_mode") == [("wal",)]
    writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [writer.path.name]
    assert len(read_pvti(writer.path).events["start_ns"]) == 1


def test_reading_leaves_the_file_and_its_folder_untouched(small_pvti: Path) -> None:
    before = hashlib.sha256(small_pvti.read_bytes()).hexdigest()
    listing = sorted(p.name for p in small_pvti.parent.iterdir())
    read_pvti(small_pvti)
    assert hashlib.sha256(small_pvti.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in small_pvti.parent.iterdir()) == listing


def test_bulk_spans_are_split_into_bounded_batch_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recording, "MAX_BATCH_EVENTS", 4)
    writer = PvtiWriter(tmp_path, background=False)
    starts = np.arange(10, dtype=np.int64) * 100
    writer.add_spans("IPU 1", "IPU", starts, starts + 50, ["A", "B"], np.arange(10) % 2)
    writer.close()
    sizes = [n for (n,) in sql(writer.path, "SELECT n FROM event_batches ORDER BY id")]
    assert sizes == [4, 4, 2]
    contents = read_pvti(writer.path)
    assert contents.events["start_ns"].tolist() == starts.tolist()
    labels = [contents.labels[i] for i in contents.events["label"]]
    assert labels == ["A", "B"] * 5


def test_spans_open_at_the_last_commit_are_read_as_open_until_that_commit(
    tmp_path: Path,
) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    o = writer.origin_monotonic_ns
    writer.open_spans_source = lambda: [(7, "c", "outer", o + 10, 0)]
    writer.add_span(7, "c", "inner", o + 20, o + 30, 1)
    before = time.monotonic_ns()
    writer.flush()
    after = time.monotonic_ns()
    contents = read_pvti(writer.path)
    kinds = contents.events["kind"].tolist()
    assert sorted(kinds) == [EventKind.SPAN, EventKind.OPEN]
    i = kinds.index(EventKind.OPEN)
    assert contents.labels[contents.events["label"][i]] == "outer"
    assert contents.events["start_ns"][i] == o + 10
    assert before <= contents.events["end_ns"][i] <= after
    writer.open_spans_source = None
    writer.close()


def test_an_open_span_that_also_finished_in_the_same_batch_is_kept_once(
    tmp_path: Path,
) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    writer.open_spans_source = lambda: [(7, "c", "done", 100, 0), (7, "c", "running", 50, 0)]
    writer.add_span(7, "c", "done", 100, 200, 0)
    writer.flush()
    contents = read_pvti(writer.path)
    got = sorted(
        (contents.labels[lab], int(k))
        for lab, k in zip(contents.events["label"], contents.events["kind"], strict=True)
    )
    assert got == [("done", EventKind.SPAN), ("running", EventKind.OPEN)]
    writer.close()


def test_a_newer_major_format_version_is_refused_by_name(small_pvti: Path) -> None:
    sql(small_pvti, "UPDATE meta SET value = '2' WHERE key = 'format_major'")
    with pytest.raises(FormatVersionError, match=r"format 2\.2.*major version 1") as err:
        read_pvti(small_pvti)
    assert small_pvti.name in str(err.value)


def test_a_newer_minor_format_version_still_reads(small_pvti: Path) -> None:
    sql(small_pvti, "UPDATE meta SET value = '7' WHERE key = 'format_minor'")
    assert read_pvti(small_pvti).meta.format_minor == 7


def test_a_closed_writer_refuses_more_events(tmp_path: Path) -> None:
    writer = write_small_trace(tmp_path)
    with pytest.raises(ReportError, match="closed"):
        writer.add_instant(MAIN_TID, "c", "late", 0)


def test_a_writer_that_cannot_create_its_file_names_the_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file where the trace folder should be")
    with pytest.raises(ReportError, match="cannot create a trace file") as err:
        PvtiWriter(blocker / "traces")
    assert "taken" in str(err.value)
