"""The Trace model: sorted columns, range queries, depths, and opening files by content."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti import EventKind, PvtiWriter
from profiler_core.trace import Process, Thread, build_trace, export_chrome, model, open_trace
from tests.profiler_core.pvti_samples import IPU_STEPS, MAIN_EVENTS, sql, write_small_trace


def two_thread_trace():
    """Thread 0: A [0,100) with child B [10,20) and instant I at 50; C [200,300).
    Thread 1: D [5, 500). Given in a scrambled order on purpose."""
    rows = [  # label, thread, start, end, depth, kind
        ("C", 0, 200, 300, 0, EventKind.SPAN),
        ("D", 1, 5, 500, 0, EventKind.SPAN),
        ("I", 0, 50, 50, 1, EventKind.INSTANT),
        ("B", 0, 10, 20, 1, EventKind.SPAN),
        ("A", 0, 0, 100, 0, EventKind.SPAN),
    ]
    labels = [r[0] for r in rows]
    cols = {
        "label": np.arange(len(rows)),
        "thread": [r[1] for r in rows],
        "start_ns": [r[2] for r in rows],
        "end_ns": [r[3] for r in rows],
        "depth": [r[4] for r in rows],
        "kind": [r[5] for r in rows],
        "channel": np.zeros(len(rows)),
    }
    return build_trace(
        cols,
        origin_wall_ns=0,
        labels=labels,
        channels=["c"],
        threads=[Thread("t0", 0, 10, "thread"), Thread("t1", 0, 11, "thread")],
        processes=[Process(1, "host", "p", 0)],
        args={4: '{"k":1}'},  # on A, given at its unsorted position
    )


def names(trace, indices) -> list[str]:
    return [trace.label_of(i) for i in indices]


def test_events_are_grouped_by_thread_and_sorted_by_start() -> None:
    trace = two_thread_trace()
    assert names(trace, range(*trace.thread_slice(0).indices(len(trace)))) == ["A", "B", "I", "C"]
    assert names(trace, range(*trace.thread_slice(1).indices(len(trace)))) == ["D"]
    assert trace.args == {0: '{"k":1}'}  # follows A to its sorted place


def test_events_in_range_include_spans_that_started_before_it() -> None:
    trace = two_thread_trace()
    assert names(trace, trace.events_in_range(0, 60, 250)) == ["A", "C"]
    assert names(trace, trace.events_in_range(0, 15, 16)) == ["A", "B"]
    assert names(trace, trace.events_in_range(0, 50, 51)) == ["A", "I"]
    assert names(trace, trace.events_in_range(0, 100, 200)) == []  # [t0, t1) is half open
    assert names(trace, trace.events_in_range(1, 499, 1000)) == ["D"]


def test_events_in_range_matches_a_full_scan_on_many_random_spans() -> None:
    rng = np.random.default_rng(7)
    n = 5000
    start = rng.integers(0, 100_000, n)
    end = start + rng.integers(0, 3000, n)
    cols = dict(start_ns=start, end_ns=end, depth=np.zeros(n), thread=rng.integers(0, 3, n),
                channel=np.zeros(n), label=np.zeros(n), kind=np.zeros(n))  # fmt: skip
    trace = build_trace(cols, origin_wall_ns=0, labels=["x"], channels=["c"],
                        threads=[Thread(str(i), 0, i, "thread") for i in range(3)],
                        processes=[Process(1, "", "p", 0)])  # fmt: skip
    for t0, t1 in [(0, 10), (50_000, 50_100), (99_000, 200_000), (1234, 1235)]:
        for thread in range(3):
            got = trace.events_in_range(thread, t0, t1)
            s, e = trace.start_ns, trace.end_ns
            scan = np.flatnonzero((trace.thread == thread) & (s < t1) & ((e > t0) | (s >= t0)))
            assert got.tolist() == scan.tolist()


def test_max_depth_and_time_range() -> None:
    trace = two_thread_trace()
    assert trace.max_depth().tolist() == [1, 0]
    assert trace.time_range() == (0, 500)


def test_a_pvti_trace_is_relative_to_its_wall_clock_origin(small_pvti: Path) -> None:
    trace = open_trace(small_pvti)
    main = [t.name for t in trace.threads].index("main")
    got = sorted(
        (trace.label_of(i), int(trace.start_ns[i]), int(trace.end_ns[i]))
        for i in trace.events_in_range(main, 0, 10**6)
    )
    assert got == sorted((label, s, e) for label, s, e, _, _ in MAIN_EVENTS)
    ipu = [t.name for t in trace.threads].index("IPU 0")
    assert trace.max_depth()[ipu] == 0
    assert len(trace.events_in_range(ipu, 0, 10**6)) == len(IPU_STEPS)
    assert trace.time_range() == (1000, 9000)


def test_a_folder_of_traces_is_merged_on_the_wall_clock(tmp_path: Path) -> None:
    first = write_small_trace(tmp_path / "a").path
    second = write_small_trace(tmp_path / "b").path
    # Hand-chosen clocks: the second process started 2 ms (wall) after the first.
    sql(first, "UPDATE meta SET value = '1000000000000' WHERE key = 'origin_wall_ns'")
    sql(second, "UPDATE meta SET value = '1000002000000' WHERE key = 'origin_wall_ns'")
    sql(second, "UPDATE processes SET pid = 4242")
    sql(second, "UPDATE meta SET value = '4242' WHERE key = 'pid'")
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(first, folder / "1.pvti")
    shutil.copy(second, folder / "2.pvti")
    trace = open_trace(folder)
    assert trace.origin_wall_ns == 1_000_000_000_000
    assert len(trace.processes) == 2 and len(trace.threads) == 4
    assert sorted(p.pid for p in trace.processes) == sorted([4242, trace.processes[0].pid])
    epochs = np.flatnonzero(np.array(trace.labels)[trace.label] == "epoch")
    assert sorted(trace.start_ns[epochs].tolist()) == [1000, 2_000_000 + 1000]
    assert sorted(trace.series["Loss"]) == ["train", "train (pid 4242)"]


def test_open_trace_tells_formats_by_content_not_name(small_pvti: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "trace.dat"
    shutil.copy(small_pvti, renamed)
    assert len(open_trace(renamed)) == len(MAIN_EVENTS) + len(IPU_STEPS)
    as_json = export_chrome(open_trace(small_pvti), tmp_path / "trace.txt")
    assert len(open_trace(as_json)) == len(MAIN_EVENTS) + len(IPU_STEPS)


def test_an_empty_trace_has_an_empty_range(tmp_path: Path) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    writer.close()
    trace = open_trace(writer.path)
    assert len(trace) == 0 and trace.time_range() == (0, 0)


def test_per_thread_maxima_over_blocks_equal_a_scan_of_each_thread(monkeypatch) -> None:
    """The deepest level and longest span per thread, found a block of events at a time
    (blocks of 7 here: threads cross them, some threads are empty), equal numpy per thread."""
    monkeypatch.setattr(model, "_BLOCK", 7)
    rng = np.random.default_rng(11)
    n, threads = 400, 9
    start = rng.integers(0, 10_000, n)
    end = start + rng.integers(0, 900, n)
    thread = rng.choice([0, 1, 2, 4, 5, 8], n)  # threads 3, 6 and 7 have no events
    cols = dict(start_ns=start, end_ns=end, depth=rng.integers(0, 6, n), thread=thread,
                channel=np.zeros(n), label=np.zeros(n), kind=np.zeros(n))  # fmt: skip
    trace = build_trace(cols, origin_wall_ns=0, labels=["x"], channels=["c"],
                        threads=[Thread(str(i), 0, i, "thread") for i in range(threads)],
                        processes=[Process(1, "", "p", 0)])  # fmt: skip
    for t in range(threads):
        mine = trace.thread == t
        deepest = int(trace.depth[mine].max()) if mine.any() else -1
        longest = int((trace.end_ns - trace.start_ns)[mine].max()) if mine.any() else 0
        assert trace.max_depth()[t] == deepest
        assert trace._longest[t] == longest  # what events_in_range searches back by
