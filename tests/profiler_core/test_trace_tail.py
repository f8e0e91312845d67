"""TraceTail follows a .pvti file while it is written, returning only what is new."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from profiler_core.formats.pvti import EventKind, PvtiWriter
from profiler_core.trace import TraceTail, open_trace

TID = 5


def labels(tail: TraceTail, update) -> list[str]:
    return [tail.snapshot().labels[i] for i in update.events["label"]]


def test_each_poll_returns_only_the_events_committed_since_the_last(tmp_path: Path) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    o = writer.origin_monotonic_ns
    tail = TraceTail(writer.path)
    writer.add_span(TID, "c", "first", o + 10, o + 20)
    writer.add_sample("Loss", "train", o + 15, 1.0)
    writer.flush()
    update = tail.poll()
    assert labels(tail, update) == ["first"]
    assert update.events["start_ns"].tolist() == [10]  # relative to the trace origin
    assert update.series == {"Loss": {"train": (update.series["Loss"]["train"][0], [1.0])}}
    assert tail.poll().n_events == 0
    writer.add_span(TID, "c", "second", o + 30, o + 40)
    writer.add_span(TID, "c", "third", o + 50, o + 60)
    writer.add_sample("Loss", "train", o + 55, 0.5)
    writer.flush()
    update = tail.poll()
    assert labels(tail, update) == ["second", "third"]
    assert update.series["Loss"]["train"][1].tolist() == [0.5]
    writer.close()
    snapshot = tail.snapshot()
    assert [snapshot.label_of(i) for i in range(len(snapshot))] == ["first", "second", "third"]
    assert snapshot.series["Loss"]["train"][1].tolist() == [1.0, 0.5]
    tail.close()
    whole = open_trace(writer.path)
    assert whole.start_ns.tolist() == snapshot.start_ns.tolist()


def test_open_spans_are_a_snapshot_that_each_poll_replaces(tmp_path: Path) -> None:
    writer = PvtiWriter(tmp_path, background=False)
    o = writer.origin_monotonic_ns
    open_now = [(TID, "c", "epoch", o + 5, 0)]
    writer.open_spans_source = lambda: list(open_now)
    writer.add_span(TID, "c", "step", o + 10, o + 20, 1)
    writer.flush()
    with TraceTail(writer.path) as tail:
        update = tail.poll()
        assert update.open_spans["kind"].tolist() == [EventKind.OPEN]
        assert update.open_spans["start_ns"].tolist() == [5]
        open_now.clear()
        writer.add_span(TID, "c", "epoch", o + 5, o + 30, 0)
        writer.flush()
        update = tail.poll()
        assert len(update.open_spans["kind"]) == 0
        assert labels(tail, update) == ["epoch"]
    writer.open_spans_source = None
    writer.close()


def test_a_tail_waits_quietly_for_a_file_not_yet_written(tmp_path: Path) -> None:
    path = tmp_path / "later.pvti"
    tail = TraceTail(path)
    assert tail.poll().n_events == 0 and not tail.started
    path.write_bytes(b"")
    assert tail.poll().n_events == 0
    assert len(tail.snapshot()) == 0


WRITER = textwrap.dedent(
    """
    import sys, time
    from profiler_core.formats.pvti import PvtiWriter
    writer = PvtiWriter(sys.argv[1])  # commits from its background flusher
    print(writer.path, flush=True)
    deadline = time.monotonic() + 20
    i = 0
    while time.monotonic() < deadline:
        start = time.monotonic_ns()
        writer.add_span(1, "live", f"e{i}", start, time.monotonic_ns())
        i += 1
        time.sleep(0.03)
    """
)


def test_a_tail_sees_events_of_a_running_writer_process_within_250_ms(tmp_path: Path) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        path = Path(writer.stdout.readline().strip())
        tail = TraceTail(path)
        latencies: list[float] = []
        deadline = time.monotonic() + 15
        while len(latencies) < 40 and time.monotonic() < deadline:
            update = tail.poll()
            seen = time.monotonic_ns()
            ended = update.events["end_ns"] + tail.origin_monotonic_ns  # writer's clock
            latencies += ((seen - ended) / 1e6).tolist()
            time.sleep(0.01)
        tail.close()
    finally:
        writer.kill()
        writer.wait()
    assert len(latencies) >= 40, f"only {len(latencies)} events seen in 15 s"
    # The clock is shared by both processes (CLOCK_MONOTONIC); the writer commits at
    # least every 100 ms, the tail polls every 10 ms.
    p90 = float(np.percentile(latencies, 90))
    assert min(latencies) >= 0
    assert p90 < 250, f"90% of events seen within {p90:.0f} ms; all: {sorted(latencies)}"


def test_series_and_heatmaps_grow_in_place_and_earlier_snapshots_keep_theirs(tmp_path: Path):
    writer = PvtiWriter(tmp_path, background=False)
    o = writer.origin_monotonic_ns
    writer.declare_heatmap("weights", [0.0, 1.0])
    tail = TraceTail(writer.path)
    snapshots = []
    for k in range(40):  # past the rows' first room (16), so they grow twice
        writer.add_sample("Loss", "train", o + 10 * k, 1.0 / (k + 1))
        writer.add_heatmap_sample("weights", o + 10 * k, np.array([k, 1, 2 * k]))
        writer.flush()
        tail.poll()
        snapshots.append(tail.pieces_snapshot().tables)
    writer.close()
    tail.poll()
    whole = open_trace(writer.path)
    for k, tables in enumerate(snapshots):
        t, loss = tables.series["Loss"]["train"]
        assert t.tolist() == [10 * i for i in range(k + 1)]  # still as it was read then
        assert loss.tolist() == [1.0 / (i + 1) for i in range(k + 1)]
        heat = tables.heatmaps["weights"]
        assert heat.counts.tolist() == [[i, 1, 2 * i] for i in range(k + 1)]
    last = tail.pieces_snapshot().tables
    assert last.series["Loss"]["train"][1].tolist() == whole.series["Loss"]["train"][1].tolist()
    assert last.heatmaps["weights"].counts.tolist() == whole.heatmaps["weights"].counts.tolist()
    assert last.heatmaps["weights"].t_ns.tolist() == whole.heatmaps["weights"].t_ns.tolist()
    tail.close()
