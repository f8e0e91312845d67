"""Hostile .pvti files built here with sqlite3 and struct (issue 30): a header claiming 2^24
pages, salvage copies that cannot be written or were left by a dead process, recursive
views, a generated column building a huge string, a query over its step budget. Each is a
ReportError naming the file or a bounded salvaged read -- never a raw OSError, a hang, or
temporaries left behind."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import PvtiWriter, read_pvti, sqlite_file
from tests.profiler_core.pvti_samples import sql, write_small_trace

CHILD = """
import json, os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
limit = int(sys.argv[2])
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from profiler_core.errors import ReportError
from profiler_core.formats.pvti import read_pvti
try:
    contents = read_pvti(sys.argv[1])
    print(json.dumps({"events": len(contents.events["start_ns"]),
                      "incomplete": contents.incomplete}))
except ReportError as error:
    print(json.dumps({"error": str(error)}))
"""


def read_in_child(path: Path, temp: Path, file_size_limit: int = 0) -> dict:
    """read_pvti(path) in a child whose temporary folder is ``temp`` and whose files may
    not grow past ``file_size_limit`` bytes (0: no limit); what it printed."""
    env = {**os.environ, "TMPDIR": str(temp)}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), str(file_size_limit)],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def claim_pages(path: Path, pages: int) -> None:
    """Make ``path``'s header claim ``pages`` pages, valid for its change counter (so a
    reader trusts it, as SQLite does)."""
    data = bytearray(path.read_bytes())
    data[28:32] = struct.pack(">I", pages)
    data[92:96] = data[24:28]
    path.write_bytes(bytes(data))


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return write_small_trace(tmp_path / "traces").path


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_a_header_claiming_2_24_pages_is_salvaged_within_twice_the_file(trace, temp):
    whole = len(read_pvti(trace).events["start_ns"])
    claim_pages(trace, 2**24)
    size = trace.stat().st_size
    # Every page is present, so every event is read; the copy holds the file's pages and
    # at most as many again of padding, so a limit of twice the file is room enough.
    result = read_in_child(trace, temp, file_size_limit=2 * size)
    assert result.get("events") == whole, result
    assert f"truncated: {size:,} of {2**24 * 4096:,} bytes" in result["incomplete"]
    assert list(temp.iterdir()) == []


def test_a_salvage_copy_that_cannot_be_written_is_an_error_and_removed(trace, temp):
    claim_pages(trace, 2**24)
    result = read_in_child(trace, temp, file_size_limit=8192)  # two of its 21 pages
    assert result["error"].startswith(f"{trace}: truncated, and its salvage copy in {temp}")
    assert "File too large" in result["error"] and "TMPDIR" in result["error"]
    assert list(temp.iterdir()) == []


def test_salvage_copies_of_dead_processes_are_swept_and_a_live_ones_kept(trace, temp):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = temp / f"salvage-{int(gone.stdout)}-k2j4.pvti"
    live = temp / f"salvage-{os.getpid()}-x9q1.pvti"  # this test's own process
    other = temp / "salvage-notes.txt"
    for path in (dead, live, other):
        path.write_bytes(b"\xff" * 4096)
    trace.write_bytes(trace.read_bytes()[:-100])  # truncated: read through a copy
    result = read_in_child(trace, temp)
    assert "events" in result, result
    assert sorted(temp.iterdir()) == sorted([live, other])


def replace_with_view(path: Path, table: str, view_sql: str) -> None:
    sql(path, f"DROP TABLE {table}")
    sql(path, f"CREATE VIEW {table} AS {view_sql}")


SLOW_VIEW = (
    "WITH RECURSIVE r(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM r WHERE x < 2000000000) "
    "SELECT x AS id, 'label' AS text FROM r WHERE x < 0"
)


def test_a_recursive_view_in_place_of_a_table_is_refused_unread(trace, temp):
    replace_with_view(trace, "labels", SLOW_VIEW)
    result = read_in_child(trace, temp)  # 60 s would not be enough to run the view
    assert result == {"error": f"{trace}: not a .pvti trace: labels must be a table, not a view"}


def test_views_beside_the_tables_are_never_queried(trace):
    whole = read_pvti(trace)
    sql(trace, f"CREATE VIEW slow AS {SLOW_VIEW}")
    contents = read_pvti(trace)
    assert contents.labels == whole.labels
    assert np.array_equal(contents.events["start_ns"], whole.events["start_ns"])


def test_a_generated_column_building_a_huge_string_is_refused(trace):
    rows = sql(trace, "SELECT id, text FROM labels ORDER BY id")
    sql(trace, "DROP TABLE labels")
    sql(
        trace,
        "CREATE TABLE labels(id INTEGER PRIMARY KEY, seed TEXT NOT NULL, text TEXT "
        "GENERATED ALWAYS AS (seed || hex(zeroblob(200000000))) VIRTUAL)",
    )
    for row in rows:
        sql(trace, "INSERT INTO labels(id, seed) VALUES (?, ?)", row)
    # No value of a file can be longer than the file: a 400 MB string is refused unbuilt.
    with pytest.raises(ReportError, match="string or blob too big") as caught:
        read_pvti(trace)
    assert caught.value.path == trace


@pytest.fixture(scope="module")
def sampled_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100,000 samples and 2,000 argument rows: the costliest rows per byte to read."""
    writer = PvtiWriter(tmp_path_factory.mktemp("sampled"), process_name="s", background=False)
    o = writer.origin_monotonic_ns
    for i in range(100_000):
        writer.add_sample("Loss", "train", o + i, float(i))
    for i in range(2_000):
        writer.add_span(1, "host", "step", o + 10 * i, o + 10 * i + 5, 0, args={"i": i})
    writer.close()
    return writer.path


@pytest.mark.parametrize("truncated", [False, True])
def test_a_read_over_its_step_budget_stops_with_an_error(
    sampled_trace, tmp_path, monkeypatch, truncated
):
    path = tmp_path / "copy.pvti"
    data = sampled_trace.read_bytes()
    # Cut short, the salvaging reader swallows SQLite's errors row by row: not this one.
    path.write_bytes(data[:-100] if truncated else data)
    monkeypatch.setattr(sqlite_file, "MIN_STEPS", 1)
    monkeypatch.setattr(sqlite_file, "STEPS_PER_BYTE", 0)
    with pytest.raises(ReportError, match="over 1 SQLite steps") as caught:
        read_pvti(path)
    assert caught.value.path == path


def test_an_honest_trace_reads_far_inside_its_step_budget(sampled_trace, monkeypatch):
    monkeypatch.setattr(sqlite_file, "MIN_STEPS", 0)
    monkeypatch.setattr(sqlite_file, "STEPS_PER_BYTE", sqlite_file.STEPS_PER_BYTE // 10)
    contents = read_pvti(sampled_trace)  # a tenth of the budget is enough
    assert len(contents.series[0][1]) == 100_000 and len(contents.args) == 2_000
