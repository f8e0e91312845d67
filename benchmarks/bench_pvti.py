"""PVTI benchmarks: (a) the cost of a traced ``with Tracepoint`` per event against the same
loop untraced, (b) reading a 10M-event .pvti into columns, in events/s.

Run with ``python -m benchmarks.bench_pvti [--events N]``; prints measurements, ratios and
the targets side by side.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

import ipu_engine.pvti as pvti
from benchmarks._timing import EmptyContext
from profiler_core.formats.pvti import PvtiWriter, read_pvti
from profiler_core.trace import open_trace

TRACEPOINT_TARGET_NS = 2000
READ_TARGET_EVENTS_PER_S = 5e6


def _minimal_ns(n: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(n):
        with EmptyContext(None, "step"):
            pass
    return (time.perf_counter_ns() - start) / n


def _loop_ns(n: int, channel: pvti.TraceChannel | None) -> float:
    """ns per iteration of a loop whose body is an empty ``with Tracepoint`` (or nothing)."""
    tracepoint = pvti.Tracepoint
    start = time.perf_counter_ns()
    if channel is None:
        for _ in range(n):
            pass
    else:
        for _ in range(n):
            with tracepoint(channel, "step"):
                pass
    return (time.perf_counter_ns() - start) / n


def bench_tracepoint(n: int, directory: Path) -> None:
    print(f"(a) empty `with Tracepoint(channel, label)`, {n:,} iterations, best of 3")
    baseline = min(_loop_ns(n, None) for _ in range(3))
    minimal = min(_minimal_ns(n) for _ in range(3))
    pvti.disable()
    off_channel = pvti.createTraceChannel("bench")
    off = min(_loop_ns(n, off_channel) for _ in range(3))
    pvti.enable(directory)
    channel = pvti.createTraceChannel("bench")
    writer = pvti.current_writer()
    assert writer is not None
    on_runs = []
    for _ in range(3):
        start = time.perf_counter_ns()
        _loop_ns(n, channel)
        writer.flush()  # count the batch conversion and commit the flusher does, too
        on_runs.append((time.perf_counter_ns() - start) / n)
    on = min(on_runs)
    pvti.disable()
    events = len(read_pvti(writer.path).events["start_ns"])
    print(f"    untraced loop          {baseline:8.0f} ns/iteration")
    print(f"    empty context manager  {minimal:8.0f} ns/iteration   (the floor for any `with`)")
    print(f"    tracing off            {off:8.0f} ns/iteration   overhead {off - baseline:6.0f} ns")
    print(
        f"    tracing on (+ commit)  {on:8.0f} ns/iteration   overhead {on - baseline:6.0f} ns"
        f"   target <= {TRACEPOINT_TARGET_NS} ns   "
        f"{'OK' if on - baseline <= TRACEPOINT_TARGET_NS else 'MISSED'}"
    )
    print(f"    ratio on/untraced {on / baseline:.0f}x, on/off {on / off:.1f}x; "
          f"{events:,} events written")  # fmt: skip


def write_big_trace(directory: Path, n: int) -> Path:
    """A .pvti of ``n`` spans on two IPU tracks, written through the bulk path."""
    labels = ["Compute", "Exchange", "Sync", "StreamCopy"]
    writer = PvtiWriter(directory, background=False)
    chunk = 1 << 20
    rng = np.random.default_rng(0)
    t = writer.origin_monotonic_ns
    for first in range(0, n, chunk):
        m = min(chunk, n - first)
        durations = rng.integers(100, 2000, m)
        starts = t + np.concatenate([[0], np.cumsum(durations[:-1])])
        t = int(starts[-1] + durations[-1])
        writer.add_spans(f"IPU {first // chunk % 2}", "IPU", starts, starts + durations,
                         labels, rng.integers(0, len(labels), m))  # fmt: skip
        writer.flush()
    writer.close()
    return writer.path


def bench_read(n: int, directory: Path) -> None:
    print(f"(b) reading a {n:,}-event .pvti")
    start = time.perf_counter()
    path = write_big_trace(directory, n)
    written = time.perf_counter() - start
    size = path.stat().st_size
    print(f"    written in {written:.2f} s through PvtiWriter.add_spans ({size / 2**20:.0f} MiB)")
    best_read = best_open = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        contents = read_pvti(path)
        best_read = min(best_read, time.perf_counter() - start)
        assert len(contents.events["start_ns"]) == n
        del contents
        start = time.perf_counter()
        trace = open_trace(path)
        best_open = min(best_open, time.perf_counter() - start)
        assert len(trace) == n
        del trace
    read_rate, open_rate = n / best_read, n / best_open
    verdict = "OK" if read_rate >= READ_TARGET_EVENTS_PER_S else "MISSED"
    print(f"    read_pvti -> columns          {best_read:6.2f} s  {read_rate / 1e6:6.1f} M events/s"
          f"   target >= {READ_TARGET_EVENTS_PER_S / 1e6:.0f} M/s   {verdict}")  # fmt: skip
    print(f"    open_trace -> sorted Trace    {best_open:6.2f} s  {open_rate / 1e6:6.1f} M events/s"
          f"   ({best_open / best_read:.1f}x the column read)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=10_000_000, help="events for (b)")
    parser.add_argument("--iterations", type=int, default=300_000, help="loop length for (a)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench_tracepoint(args.iterations, Path(tmp) / "a")
        bench_read(args.events, Path(tmp) / "b")


if __name__ == "__main__":
    main()
