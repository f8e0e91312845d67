"""A .pvti cut short at any byte is read, not refused: every committed batch whose pages are
present is shown (checked against SQLite itself reading a zero-padded copy), and the
contents, the Trace and open_trace say the file is incomplete."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import PvtiWriter, read_pvti
from profiler_core.formats.pvti.schema import EVENT_COLUMNS
from profiler_core.trace import open_trace, trace_from_pvti

BATCHES = 40
PAGE = 4096  # SQLite's default page size, the writer's


def write_committed_batches(directory: Path) -> Path:
    """A closed trace of BATCHES commits of growing size, each with its own label."""
    writer = PvtiWriter(directory, process_name="cut", background=False)
    o = writer.origin_monotonic_ns
    first = 0
    writer.name_thread(7, "main")
    for b in range(BATCHES):
        n = 50 + 25 * b
        starts = o + np.arange(first, first + n) * 10
        writer.add_spans("IPU 0", "IPU", starts, starts + 5, [f"step {b}"] * n, np.arange(n) % 3)
        writer.add_span(7, "host", f"batch {b}", int(starts[0]), int(starts[-1]), 0, args={"b": b})
        writer.add_sample("Loss", "train", int(starts[0]), 1.0 / (b + 1))
        writer.flush()  # one commit, one event_batches row
        first += n
    writer.close()
    return writer.path


def batches_still_present(path: Path, whole: Path) -> list[int]:
    """Independently: the event counts of the batches that SQLite itself reads exactly as in
    the ``whole`` file from a copy of the cut ``path`` whose missing pages (a page cut
    mid-way is missing) hold garbage: a batch that touches one fails or differs."""
    padded = path.with_name("padded.db")
    data = path.read_bytes()
    present = data[: len(data) // PAGE * PAGE] if len(data) >= PAGE else data
    padded.write_bytes(present.ljust(whole.stat().st_size, b"\xa5"))
    statement = f"SELECT n, {', '.join(EVENT_COLUMNS)} FROM event_batches WHERE id = ?"
    counts = []
    with closing(sqlite3.connect(whole)) as truth, closing(sqlite3.connect(padded)) as cut:
        for batch in range(1, 1 + truth.execute("SELECT max(id) FROM event_batches").fetchone()[0]):
            try:
                row = cut.execute(statement, (batch,)).fetchone()
            except sqlite3.DatabaseError:
                continue  # a missing b-tree page, or the schema page itself
            if row == truth.execute(statement, (batch,)).fetchone():
                counts.append(row[0])
    return counts


@pytest.fixture(scope="module")
def whole_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_committed_batches(tmp_path_factory.mktemp("whole"))


def cut_copy(whole: Path, tmp_path: Path, size: int) -> Path:
    path = tmp_path / "cut.pvti"
    path.write_bytes(whole.read_bytes()[:size])
    return path


def cut_points(whole: Path) -> list[int]:
    size = whole.stat().st_size
    return [100, PAGE, PAGE + 1000, size // 3, size // 2 + 123, size - PAGE, size - 1]


def test_the_whole_file_reads_complete(whole_trace: Path) -> None:
    contents = read_pvti(whole_trace)
    assert contents.incomplete == ""
    assert open_trace(whole_trace).warnings == ()


@pytest.mark.parametrize("where", range(7))
def test_a_file_cut_anywhere_shows_the_committed_batches_still_present(
    whole_trace: Path, tmp_path: Path, where: int
) -> None:
    full = read_pvti(whole_trace)
    size = cut_points(whole_trace)[where]
    path = cut_copy(whole_trace, tmp_path, size)
    contents = read_pvti(path)  # no exception
    n = len(contents.events["start_ns"])
    expected = batches_still_present(path, whole_trace)
    assert n == sum(expected) <= len(full.events["start_ns"])
    assert f"truncated: {size:,} of {whole_trace.stat().st_size:,} bytes" in contents.incomplete
    assert f"shows the {n:,} committed event(s)" in contents.incomplete
    # What is shown is what was committed: each event is one of the whole file's.
    whole = set(zip(full.events["start_ns"].tolist(), full.events["end_ns"].tolist(),
                    full.events["depth"].tolist(), strict=True))  # fmt: skip
    shown = set(zip(contents.events["start_ns"].tolist(), contents.events["end_ns"].tolist(),
                    contents.events["depth"].tolist(), strict=True))  # fmt: skip
    assert shown <= whole
    trace = open_trace(path)
    assert len(trace) == n
    assert len(trace.warnings) == 1 and trace.warnings[0].startswith(f"{path.name}: incomplete:")


def test_a_file_cut_in_its_last_pages_keeps_almost_everything(
    whole_trace: Path, tmp_path: Path
) -> None:
    full = read_pvti(whole_trace)
    path = cut_copy(whole_trace, tmp_path, whole_trace.stat().st_size - 1)
    contents = read_pvti(path)
    n = len(contents.events["start_ns"])
    assert 0.8 * len(full.events["start_ns"]) < n < len(full.events["start_ns"])
    labels = {contents.labels[i] for i in np.unique(contents.events["label"])}
    assert "step 0" in labels and "batch 0" in labels  # dictionaries survived
    assert len(contents.series[0][1]) >= 1


def test_a_file_cut_just_after_its_header_is_an_empty_incomplete_trace(
    whole_trace: Path, tmp_path: Path
) -> None:
    contents = read_pvti(cut_copy(whole_trace, tmp_path, 100))
    assert len(contents.events["start_ns"]) == 0
    assert "lost: its tables" in contents.incomplete


def test_a_file_cut_inside_the_header_or_not_sqlite_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.pvti"
    path.write_bytes(b"SQLite format 3\x00" + b"\0" * 20)
    with pytest.raises(ReportError, match="shorter than a SQLite header"):
        read_pvti(path)
    path.write_bytes(b"not a database at all" * 300)
    with pytest.raises(ReportError, match="not a SQLite database"):
        read_pvti(path)


def test_popvision_cli_trace_says_incomplete_and_counts_what_is_shown(
    whole_trace: Path, tmp_path: Path
) -> None:
    path = cut_copy(whole_trace, tmp_path, whole_trace.stat().st_size // 2)
    result = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "trace", str(path), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 5, result.stderr  # done, but the input is partial
    document = json.loads(result.stdout)
    assert document["events"] == sum(batches_still_present(path, whole_trace))
    assert sum(t["spans"] for t in document["tracks"]) == document["events"]
    (warning,) = document["warnings"]
    assert warning.startswith(f"{path.name}: incomplete: the file is truncated")
    assert "incomplete: the file is truncated" in result.stderr
    whole = subprocess.run(
        [sys.executable, "-m", "profiler_core.cli", "trace", str(whole_trace), "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(whole.stdout)["warnings"] == [] and whole.stderr == ""
    assert whole.returncode == 0


def test_loading_in_place_gives_the_same_trace_as_copying(whole_trace: Path) -> None:
    copied = trace_from_pvti([read_pvti(whole_trace)])
    in_place = trace_from_pvti([read_pvti(whole_trace)], in_place=True)
    for name in ("start_ns", "end_ns", "depth", "thread", "channel", "label", "kind"):
        assert np.array_equal(getattr(copied, name), getattr(in_place, name))
    assert copied.args == in_place.args and len(in_place.args) == BATCHES
    # Each argument is still on its event: the host span "batch b" carries {"b": b}.
    for event, text in in_place.args.items():
        assert in_place.label_of(event) == f"batch {json.loads(text)['b']}"
    # Sorted by (thread, start, depth), as the model promises.
    key = np.lexsort((in_place.depth, in_place.start_ns, in_place.thread))
    assert np.array_equal(key, np.arange(len(in_place)))


def test_a_half_written_file_copied_without_its_wal_shows_its_checkpointed_batches(
    tmp_path: Path,
) -> None:
    """A copy of a trace still being written (WAL mode, its -wal left behind), cut short."""
    writer = PvtiWriter(tmp_path / "live", background=False)
    o = writer.origin_monotonic_ns
    for b in range(20):
        starts = o + np.arange(b * 300, (b + 1) * 300) * 10
        writer.add_spans("IPU 0", "IPU", starts, starts + 5, ["x"] * 300, np.zeros(300, int))
        writer.flush()
    with closing(sqlite3.connect(writer.path)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the batches are in the main file
    data = writer.path.read_bytes()
    writer.close()
    assert data[18:20] == b"\x02\x02"  # a WAL-mode header
    whole = tmp_path / "whole.pvti"
    whole.write_bytes(data)
    path = tmp_path / "copy" / "half.pvti"
    path.parent.mkdir()
    path.write_bytes(data[: len(data) * 2 // 3])
    contents = read_pvti(path)
    n = len(contents.events["start_ns"])
    assert 0 < n == sum(batches_still_present(path, whole)) < 20 * 300
    assert "truncated" in contents.incomplete
    assert sorted(p.name for p in path.parent.iterdir()) == ["half.pvti", "padded.db"]
