"""PVTI under a busy loop: commits keep up with the tracepoints and memory stays bounded
(back-pressure), a SIGKILL loses at most the last commit's worth of events, and a trace
folder that cannot be written is a warning naming it while the program goes on."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from profiler_core.formats.pvti import PvtiReader
from tests.conftest import EXAMPLES

#: A tight loop of tracepoints and metric samples with no sleep: the flusher thread only
#: gets the GIL at switch intervals. The child keeps its own count of finished spans in a
#: file, rewritten every 5,000 spans, so the test knows how many it produced.
FLOOD = textwrap.dedent(
    """
    import os, sys
    import ipu_engine.pvti as pvti
    channel = pvti.createTraceChannel("Flood")
    loss = pvti.Graph("Loss", "").addSeries("Training Loss")
    count_file = sys.argv[1]
    i = 0
    while True:
        with pvti.Tracepoint(channel, "Step"):
            loss.add(1.0 / (i + 1))
        i += 1
        if i % 5000 == 0:
            with open(count_file + ".tmp", "w") as f:
                f.write(str(i))
            os.replace(count_file + ".tmp", count_file)
    """
)

#: The writer's default cap on pending events (PvtiWriter.max_pending_events).
CAP = 20_000


def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def _produced(count_file: Path) -> int:
    try:
        return int(count_file.read_text())
    except (FileNotFoundError, ValueError):
        return 0


def test_a_flood_of_tracepoints_is_committed_as_it_goes_with_bounded_memory(tmp_path):
    traces, count_file = tmp_path / "traces", tmp_path / "count"
    env = dict(os.environ, PVTI_OPTIONS=json.dumps({"enable": "true", "directory": str(traces)}))
    child = subprocess.Popen([sys.executable, "-c", FLOOD, str(count_file)], env=env)
    try:
        deadline = time.monotonic() + 60
        while _produced(count_file) < 20_000 and time.monotonic() < deadline:
            time.sleep(0.1)
        (path,) = traces.glob("*.pvti")
        reader = PvtiReader(path)
        committed, polls, rss = 0, [], []
        for _ in range(12):
            time.sleep(0.5)
            # The child's count first: the read's snapshot is taken after it, so the lag
            # measured is never more than the lag at that snapshot.
            produced = _produced(count_file)
            committed += len(reader.read_new().events["start_ns"])
            polls.append((produced, committed))
            rss.append(_rss_mb(child.pid))
        # The committed spans keep up: never more than two batches behind what the child
        # had finished (its own count lags by up to 5,000), and growing at every poll.
        for produced, committed in polls:
            assert produced - committed <= 2 * CAP + 5_000, polls
        assert all(b[1] > a[1] for a, b in itertools.pairwise(polls)), polls
        assert polls[-1][0] > 100_000, polls  # the loop really was busy
        # Bounded memory: without back-pressure the child grew by ~15 MB a second here.
        assert max(rss) - rss[0] < 30, rss

        # SIGKILL: what is on disk is everything but at most the last commit's worth.
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        produced = _produced(count_file)
        committed += len(reader.read_new().events["start_ns"])
        assert produced - committed <= 2 * CAP + 5_000, (produced, committed)
    finally:
        child.kill()
        child.wait(timeout=30)


def test_an_unwritable_trace_folder_is_a_warning_and_the_program_goes_on(tmp_path):
    not_a_folder = tmp_path / "a_file"
    not_a_folder.write_text("")
    directory = not_a_folder / "traces"
    env = dict(os.environ, PVTI_OPTIONS=json.dumps({"enable": "true", "directory": str(directory)}))
    traced = subprocess.run(
        [sys.executable, str(EXAMPLES / "pvti_epochs.py"), "2", "3"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert traced.returncode == 0, traced.stderr
    assert "PvtiWriteWarning" in traced.stderr
    assert str(directory) in traced.stderr
    assert "Traceback" not in traced.stderr

    # The engine decides at Engine() whether to trace: it warns and runs too.
    engine = subprocess.run(
        [sys.executable, str(EXAMPLES / "basic_add.py")],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    untraced = subprocess.run(
        [sys.executable, str(EXAMPLES / "basic_add.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert engine.returncode == 0, engine.stderr
    assert "PvtiWriteWarning" in engine.stderr
    assert engine.stdout == untraced.stdout
