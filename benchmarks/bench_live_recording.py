"""Long live recordings (issue 28): a child writes ~10k tracepoints a second into a .pvti
while this process does what the recorder's worker does each poll (``TraceTail.poll``, the
snapshot, its lanes laid out); the time per poll in the first and in the last stretch of the
run, side by side. Flat means an hour costs the same per poll as the first minute.

Run with ``python -m benchmarks.bench_live_recording [--seconds 120] [--rate 10000]``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._timing import report

FLAT_RATIO = 1.5  # last stretch's median poll / first stretch's
POLL_S = 0.1  # as popvision_py.app.recorder.POLL_S

CHILD = r"""
import sys, time
import ipu_engine.pvti as pvti
pvti.enable(sys.argv[1])
seconds, rate = float(sys.argv[2]), int(sys.argv[3])
channel = pvti.createTraceChannel("Live")
start = time.perf_counter()
written = 0
while time.perf_counter() - start < seconds:
    due = int((time.perf_counter() - start) * rate)
    while written < due:
        with pvti.Tracepoint(channel, "step"):
            pass
        written += 1
    time.sleep(0.005)
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--rate", type=int, default=10_000)
    args = parser.parse_args(argv)
    from popvision_py.viewmodels.system_trace import SystemTraceModel
    from profiler_core.trace.tail import TraceTail

    with tempfile.TemporaryDirectory() as tmp:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, tmp, str(args.seconds), str(args.rate)]
        )
        started = time.perf_counter()
        polls: list[tuple[float, float, int]] = []  # (elapsed, seconds, events)
        tail: TraceTail | None = None
        while child.poll() is None:
            time.sleep(POLL_S)
            if tail is None:
                found = list(Path(tmp).glob("*.pvti"))
                if not found:
                    continue
                tail = TraceTail(found[0])
            t0 = time.perf_counter()
            update = tail.poll()
            if not tail.started or update.n_events == 0:
                continue
            trace = tail.snapshot()
            SystemTraceModel(trace)
            polls.append((time.perf_counter() - started, time.perf_counter() - t0, len(trace)))
        if tail is not None:
            tail.close()
    stretch = max(args.seconds / 6, 5.0)
    first = [s for at, s, _ in polls if at <= stretch]
    last = [s for at, s, _ in polls if at >= args.seconds - stretch]
    if not first or not last:
        raise SystemExit("too few polls to compare: run for longer")
    a, b = statistics.median(first), statistics.median(last)
    print(f"{len(polls):,} polls; {polls[-1][2]:,} events at the end; median poll "
          f"{a * 1e3:.1f} ms in the first {stretch:.0f} s, "
          f"{b * 1e3:.1f} ms in the last")  # fmt: skip
    report(
        "live recording: last / first poll time (worker)",
        b / a,
        "x",
        f"<= {FLAT_RATIO}",
        b / a <= FLAT_RATIO,
    )


if __name__ == "__main__":
    main()
