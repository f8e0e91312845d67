"""The "reading PVTI files" tutorial's script, as written against libpva: processes,
threads, events in whole microseconds, epochs found by recursing through ``children()``,
on a trace the pvti_epochs example writes; numbers checked against the trace's columns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from profiler_core import pva
from profiler_core.trace import open_trace

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "pvti_epochs.py"
EPOCHS, STEPS = 5, 3


@pytest.fixture(scope="module")
def epochs_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("traces")
    env = {
        **os.environ,
        "PVTI_OPTIONS": json.dumps({"enable": "true", "directory": str(directory)}),
    }
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), str(EPOCHS), str(STEPS)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    (path,) = directory.glob("*.pvti")
    return path


class EpochStats:
    longest = None
    shortest = None
    average = 0.0
    count = 0


def traverse_events(events, stats: EpochStats) -> None:
    for event in events:
        if event.label.startswith("Epoch"):
            stats.count += 1
            stats.average += (event.duration - stats.average) / stats.count
            if stats.longest is None or event.duration > stats.longest.duration:
                stats.longest = event
            if stats.shortest is None or event.duration < stats.shortest.duration:
                stats.shortest = event
        traverse_events(event.children(), stats)


def test_the_tutorial_finds_every_epoch_by_recursing_through_children(epochs_trace: Path) -> None:
    trace = pva.openTrace(epochs_trace)
    process = trace.processes[0]
    thread = process.threads[0]
    assert process.pid > 0 and thread.tid > 0
    event = thread.events[0]
    assert isinstance(event.duration, int) and isinstance(event.timestamp, int)
    stats = EpochStats()
    for process in trace.processes:
        for thread in process.threads:
            traverse_events(thread.events, stats)
    # independent: the epoch spans straight from the trace's columns
    columns = open_trace(epochs_trace)
    labels = np.array(columns.labels)[columns.label]
    # the tutorial's test also matches the example's "Epoch N begin" instants (duration 0)
    epoch_rows = np.flatnonzero(np.char.startswith(labels.astype(str), "Epoch"))
    origin = columns.origin_wall_ns
    ends = (origin + columns.end_ns[epoch_rows]) // 1000
    durations = ends - (origin + columns.start_ns[epoch_rows]) // 1000
    assert stats.count == 2 * EPOCHS == len(epoch_rows)
    assert stats.shortest.duration == 0 and stats.shortest.isInstant
    assert stats.longest.duration == durations.max()
    assert stats.shortest.duration == durations.min()
    assert stats.average == pytest.approx(durations.mean())


def test_thread_events_are_the_outermost_and_children_the_nested(epochs_trace: Path) -> None:
    thread = pva.openTrace(epochs_trace).processes[0].threads[0]
    labels = [e.label for e in thread.events]
    assert labels == [x for i in range(EPOCHS) for x in (f"Epoch {i} begin", f"Epoch:{i}")]
    for epoch in (e for e in thread.events if e.label.startswith("Epoch:")):
        steps = epoch.children()
        assert [s.label for s in steps] == ["Step"] * STEPS
        assert all(epoch.timestamp <= s.timestamp for s in steps)
        assert all(s.timestamp + s.duration <= epoch.timestamp + epoch.duration for s in steps)
        assert all(s.channel == "Training" for s in steps)
    assert len(thread.allEvents) == EPOCHS * (STEPS + 2)
