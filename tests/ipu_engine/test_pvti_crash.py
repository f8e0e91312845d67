"""A traced process killed with SIGKILL leaves a readable trace of everything it committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from profiler_core.formats.pvti import EventKind, read_pvti

CHILD = textwrap.dedent(
    """
    import sys, time
    import ipu_engine.pvti as pvti
    print(pvti.enable(sys.argv[1]), flush=True)
    writer = pvti.current_writer()
    channel = pvti.createTraceChannel("crash")
    reported = 0
    i = 0
    while True:
        with pvti.Tracepoint(channel, f"outer {i}"):
            with pvti.Tracepoint(channel, f"inner {i}"):
                time.sleep(0.001)
        i += 1
        if writer.committed_events != reported:
            reported = writer.committed_events
            print(f"committed {reported}", flush=True)
    """
)


def expected_order(n: int) -> list[tuple[str, int]]:
    """The spans the child's loop finishes, in order: inner i (depth 1), then outer i."""
    out: list[tuple[str, int]] = []
    for i in range(n):
        out += [(f"inner {i}", 1), (f"outer {i}", 0)]
    return out[:n]


def test_a_killed_writer_leaves_every_committed_event_with_consistent_nesting(
    tmp_path: Path,
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    guard = threading.Timer(60, child.kill)
    guard.start()
    try:
        path = Path(child.stdout.readline().strip())
        committed = []
        while len(committed) < 3:
            line = child.stdout.readline()
            assert line, "the child ended before committing three batches"
            committed.append(int(line.split()[1]))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    finally:
        guard.cancel()
        child.kill()
    assert child.returncode == -signal.SIGKILL

    contents = read_pvti(path)
    ev = contents.events
    finished = ev["kind"] == EventKind.SPAN
    spans = [(contents.labels[lab], int(d)) for lab, d in
             zip(ev["label"][finished], ev["depth"][finished], strict=True)]  # fmt: skip
    # Everything reported committed is there, in the order the loop finished it.
    assert len(spans) >= committed[-1]
    assert spans == expected_order(len(spans))
    # Spans begun but not finished are marked open, never missing: every finished inner
    # span's outer span is finished or open, and open spans are the last iteration's.
    open_spans = {contents.labels[lab]: int(d) for lab, d, k in
                  zip(ev["label"], ev["depth"], ev["kind"], strict=True)
                  if k == EventKind.OPEN}  # fmt: skip
    names = {label for label, _ in spans} | set(open_spans)
    for label, _ in spans:
        if label.startswith("inner"):
            assert "outer" + label[len("inner") :] in names
    last = len(spans) // 2
    assert set(open_spans) <= {f"outer {last}", f"inner {last}"}
    assert all(open_spans[name] == (0 if name.startswith("outer") else 1) for name in open_spans)
