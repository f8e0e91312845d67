"""A PVTI writer under a file-size limit (RLIMIT_FSIZE in a child, SIGXFSZ ignored, as a full
disk behaves): it commits what fits -- a commit too big for the room left is split until its
parts fit -- says once that it stopped, and leaves one closed file that reads as a trace of
exactly the events committed, the first ones recorded (issue 30: 0 events under 1 MiB, and
"no tables" under 64 KiB)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from profiler_core.formats.pvti import PvtiWriter, read_pvti
from profiler_core.trace import open_trace

ROOT = Path(__file__).resolve().parents[2]

#: Records ``commits`` commits of ``per_commit`` host spans with arguments (span k starts at
#: 10 k ns after the origin) under a file-size limit, goes on after the writer stops, closes.
CHILD = textwrap.dedent(
    """
    import json, resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    directory, limit, commits, per_commit = sys.argv[1], *map(int, sys.argv[2:])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    from profiler_core.formats.pvti import PvtiWriter
    writer = PvtiWriter(directory, background=False, max_pending_events=10**9)
    o = writer.origin_monotonic_ns
    k = 0
    for _ in range(commits):
        for _ in range(per_commit):
            writer.add_span(7, "host", f"step {k}", o + 10 * k, o + 10 * k + 5, args={"k": k})
            k += 1
        writer.flush()
    writer.close()
    print(json.dumps({"path": str(writer.path), "origin": o, "recorded": k,
                      "committed": writer.committed_events, "dropped": writer.dropped_events}))
    """
)


def run_limited(directory: Path, limit: int, commits: int, per_commit: int) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(directory), str(limit), str(commits), str(per_commit)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]  # the program ran on to its end
    return json.loads(done.stdout), done.stderr


@pytest.mark.parametrize(
    ("limit", "commits", "per_commit"),
    [
        (1 << 20, 1, 50_000),  # one commit of 2.5 MB: all of it failed, 0 events kept
        (1 << 16, 200, 100),  # the tables alone took 86 KiB: "no tables"
        (1 << 20, 400, 500),
    ],
)
def test_the_writer_commits_what_fits_and_the_file_reads_as_those_events(
    tmp_path: Path, limit: int, commits: int, per_commit: int
) -> None:
    result, stderr = run_limited(tmp_path, limit, commits, per_commit)
    path, committed = Path(result["path"]), result["committed"]
    assert 0 < committed < result["recorded"]
    assert committed + result["dropped"] == result["recorded"]
    # Said once, naming the file and what it keeps.
    (line,) = [x for x in stderr.splitlines() if x.startswith("pvti:")]
    assert line.startswith(f"pvti: stopped writing {path}: ")
    assert line.endswith(f"it keeps the {committed:,} events committed, later ones are dropped")
    # One closed file within the limit, no -wal beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
    assert path.stat().st_size <= limit
    contents = read_pvti(path)
    # Exactly the first `committed` spans recorded, each with its own label and arguments.
    k = np.arange(committed)
    assert np.array_equal(np.sort(contents.events["start_ns"]), result["origin"] + 10 * k)
    assert sorted(contents.labels) == sorted(f"step {i}" for i in range(committed))
    assert sorted(json.loads(t)["k"] for t in contents.args.values()) == k.tolist()
    (warning,) = open_trace(path).warnings
    assert warning.startswith(f"{path.name}: incomplete: its writer failed (")
    assert f"{result['dropped']:,} events were not written" in warning


def test_a_writer_whose_tables_do_not_fit_says_so_and_leaves_no_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))  # the tables take 21 KiB
        from profiler_core.errors import ReportError
        from profiler_core.formats.pvti import PvtiWriter
        try:
            PvtiWriter(sys.argv[1], background=False)
        except ReportError as error:
            print(error)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(tmp_path))
    assert "cannot be written as SQLite" in done.stdout and "it was not kept" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_series_samples_that_do_not_fit_are_cut_at_a_prefix(tmp_path: Path) -> None:
    """The parts after the events: a commit's samples, halved too. The room is capped with
    SQLite's max_page_count (SQLITE_FULL, as a full disk says it) on the writer's file."""
    writer = PvtiWriter(tmp_path, background=False, max_pending_events=10**9)
    o = writer.origin_monotonic_ns
    writer.add_span(7, "host", "first", o, o + 5)
    writer.flush()
    pages = writer._conn.execute("PRAGMA page_count").fetchone()[0]
    writer._conn.execute(f"PRAGMA max_page_count = {pages + 12}")  # ~48 KiB more
    writer.add_span(7, "host", "second", o + 10, o + 15)
    for i in range(20_000):  # ~600 KiB of samples: far more than the room
        writer.add_sample("Loss", "train", o + i, float(i))
    writer.flush()
    writer.close()
    assert writer.committed_events == 2 and writer.dropped_events == 0
    contents = read_pvti(writer.path)
    assert sorted(contents.labels) == ["first", "second"]
    (series,) = contents.series
    times, values = series[1], series[2]
    kept = len(times)
    assert 0 < kept < 20_000
    assert np.array_equal(times, o + np.arange(kept)) and np.array_equal(values, np.arange(kept))
    assert "its writer failed (database or disk is full)" in contents.incomplete
