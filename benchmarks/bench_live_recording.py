"""Long live recordings (issue 28): Record, end to end in the window, a child writing
``--rate`` tracepoints a second (steps, nested in one-second epochs that stay open while
they run) for ``--seconds``. Printed side by side, first minute and last: the worker's
median time per poll (tail read + snapshot + layout) and the window thread's per snapshot
shown, with their ratio (flat = ~1x); the latency from a span's end in the child to the
window's repaint that draws it; the events each poll copied (the pieces' merge schedule);
and the process's memory growth against the event columns it holds.

Run with ``python -m benchmarks.bench_live_recording [--seconds 600] [--rate 10000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from PySide6.QtWidgets import QApplication

from benchmarks._timing import report
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from popvision_py.viewmodels.live_trace import LiveTraceModel
from popvision_py.viewmodels.piece_facts import FACTS
from popvision_py.viewmodels.run_config import RunConfig
from profiler_core.trace.build import _DTYPES, EVENT_FIELDS
from profiler_core.trace.tail import TraceTail

FLAT_RATIO = 1.5  # last minute's median / first minute's
LATENCY_MS = 500.0
LATENCY_BINS = 10_000  # 1 ms each
EVENT_BYTES = sum(np.dtype(t).itemsize for t in _DTYPES.values())  # one event's columns

CHILD = r"""
import sys, time
import ipu_engine.pvti as pvti
seconds, rate = float(sys.argv[1]), int(sys.argv[2])
channel = pvti.createTraceChannel("Live")
start = time.perf_counter()
written = 0
epoch = 0
while time.perf_counter() - start < seconds:
    with pvti.Tracepoint(channel, f"Epoch {epoch}"):
        epoch_end = min(epoch + 1, seconds)
        while (now := time.perf_counter() - start) < epoch_end:
            while written < int(now * rate):
                with pvti.Tracepoint(channel, "step"):
                    pass
                written += 1
            time.sleep(0.005)
    epoch += 1
"""


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Written:
    """What each poll read (the spans' end times on the writer's clock, CLOCK_MONOTONIC as
    here) and which polls each snapshot includes: the latency's 'written' side."""

    def __init__(self) -> None:
        self.ends: list[np.ndarray | None] = []
        self.upto: dict[int, int] = {}  # id(snapshot) -> polls it includes
        poll, snapshot = TraceTail.poll, TraceTail.pieces_snapshot

        def polled(tail: TraceTail):
            update = poll(tail)
            if update.n_events:
                self.ends.append(update.events["end_ns"] + tail.origin_monotonic_ns)
            return update

        def snapped(tail: TraceTail):
            made = snapshot(tail)
            self.upto[id(made)] = len(self.ends)
            return made

        TraceTail.poll, TraceTail.pieces_snapshot = polled, snapped  # type: ignore[method-assign]


def _by_minute(at: list[float], values: list[float], t0: float, stretch: float, total: float):
    first = [v for a, v in zip(at, values, strict=True) if a - t0 <= stretch]
    last = [v for a, v in zip(at, values, strict=True) if a - t0 >= total - stretch]
    if not first or not last:
        raise SystemExit("too few polls to compare: run for longer")
    return statistics.median(first), statistics.median(last)


def record(app: QApplication, window: MainWindow, folder: Path, seconds: float, rate: int):
    script = folder / "child.py"
    script.write_text(CHILD)
    written = Written()
    latencies = np.zeros(LATENCY_BINS, np.int64)  # spans per 1 ms of latency (the last: more)
    done = [0]
    memory: list[tuple[float, int, int]] = []  # (time, rss, events held)
    paints: list[tuple[float, float]] = []  # (when, seconds) of each repaint of new spans
    runner = window.runner

    def drawn() -> None:
        live = runner.live
        shown = live.shown if live else None
        if shown is None:
            return
        painting = time.perf_counter()
        window.traces.view.timeline.repaint()  # the paint that draws the new spans
        paints.append((painting, time.perf_counter() - painting))
        now = time.monotonic_ns()
        upto = written.upto.get(id(shown.model.snapshot), done[0])
        for k in range(done[0], upto):
            ms = (now - written.ends[k]) // 1_000_000
            latencies[:] += np.bincount(np.minimum(ms, LATENCY_BINS - 1), minlength=LATENCY_BINS)
            written.ends[k] = None  # the benchmark's own memory must not grow with events
        done[0] = max(done[0], upto)
        memory.append((time.perf_counter(), _rss_bytes(), shown.model.n_events))

    config = RunConfig(str(script), [str(seconds), str(rate)], report_dir=str(folder / "r"),
                       pvti=True, auto_report=False)  # fmt: skip
    rss0 = _rss_bytes()
    started = time.perf_counter()
    runner.start(config, record=True)
    runner.live.snapshot_ready.connect(drawn)
    while runner.running:
        app.processEvents()
        time.sleep(0.002)
    runner.live.paints = paints
    return runner.live, latencies, memory, rss0, started, runner.live.shown.model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--rate", type=int, default=10_000)
    args = parser.parse_args(argv)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(AppSettings(make_settings(Path(tmp) / "settings.ini")))
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        live, latencies, memory, rss0, t0, model = record(
            app, window, Path(tmp), args.seconds, args.rate
        )
        held = _held_bytes(model)
        window.close()
    seconds = args.seconds
    stretch = min(60.0, seconds / 3)
    n = live.events_read
    polls = len(live.poll_seconds)
    print(f"{n:,} events in {seconds:.0f} s ({n / seconds:,.0f}/s); {polls:,} polls, "
          f"{live.snapshots:,} snapshots shown; first and last {stretch:.0f} s:")  # fmt: skip
    a, b = _by_minute(live.polled_at, live.poll_seconds, t0, stretch, seconds)
    print(f"  worker, median poll:          {a * 1e3:7.1f} ms  {b * 1e3:7.1f} ms  ({b / a:.2f}x)")
    shown_at = [t - time.time() + time.perf_counter() for t, _ in live.shown_at]
    c, d = _by_minute(shown_at, live.show_seconds, t0, stretch, seconds)
    print(f"  window, median snapshot shown: {c * 1e3:6.1f} ms  {d * 1e3:7.1f} ms  ({d / c:.2f}x)")
    g, h = _by_minute(*map(list, zip(*live.paints, strict=True)), t0, stretch, seconds)
    print(f"  window, median repaint:       {g * 1e3:7.1f} ms  {h * 1e3:7.1f} ms  ({h / g:.2f}x)")
    worst_poll, worst_show = max(live.poll_seconds) * 1e3, max(live.show_seconds) * 1e3
    print(f"  worst: poll {worst_poll:.0f} ms (worker), snapshot shown {worst_show:.0f} ms "
          f"(window), repaint {max(s for _, s in live.paints) * 1e3:.0f} ms")  # fmt: skip
    copied = [float(x) for x in live.poll_copied]
    e, f = _by_minute(live.polled_at, copied, t0, stretch, seconds)
    print(f"  events copied, median poll:   {e:9,.0f}  {f:9,.0f}  (all polls: "
          f"{sum(copied) / max(n, 1):.1f} copies per event)")  # fmt: skip
    report("live recording: last / first minute, worker poll", b / a, "x", f"<= {FLAT_RATIO}",
           b / a <= FLAT_RATIO)  # fmt: skip
    report("live recording: last / first minute, window per snapshot", d / c, "x",
           f"<= {FLAT_RATIO}", d / c <= FLAT_RATIO)  # fmt: skip
    report("live recording: last / first minute, timeline repaint", h / g, "x",
           f"<= {FLAT_RATIO}", h / g <= FLAT_RATIO)  # fmt: skip
    cumulative = np.cumsum(latencies) / max(int(latencies.sum()), 1)
    median, p99 = (float(np.searchsorted(cumulative, q) + 1) for q in (0.5, 0.99))
    worst = float(np.flatnonzero(latencies)[-1] + 1) if latencies.any() else 0.0
    report("latency written -> drawn, median (1 ms bins)", median, "ms", "(info)", True)
    report("latency written -> drawn, 99th percentile", p99, "ms", f"<= {LATENCY_MS:.0f}",
           p99 <= LATENCY_MS)  # fmt: skip
    report("latency written -> drawn, worst span", worst, "ms", f"<= {LATENCY_MS:.0f}",
           worst <= LATENCY_MS)  # fmt: skip
    _memory(memory, rss0, held)


def _held_bytes(model: LiveTraceModel) -> int:
    """What the last snapshot holds by count: its pieces' event columns and what the lanes
    drawn of them hold of their own (a nested lane's index or copies), not views."""
    arrays = [getattr(p, k) for p in model.pieces for k in EVENT_FIELDS]
    held = sum(a.nbytes for a in arrays if a.base is None)
    for piece in model.pieces:
        facts = FACTS.get(piece)
        for lanes in facts.lanes.values() if facts else ():
            held += sum(lane.held_bytes() for lane in lanes.lanes)
    return held


def _memory(memory: list[tuple[float, int, int]], rss0: int, held: int) -> None:
    """Memory against the event columns: growth over the run, and per event in its first
    and second half (flat when nothing is copied per poll)."""
    _, rss, events = memory[-1]
    columns = events * EVENT_BYTES
    half = next(m for m in memory if m[2] >= events // 2)
    early = (half[1] - rss0) / max(half[2], 1)
    late = (rss - half[1]) / max(events - half[2], 1)
    print(f"  memory: +{(rss - rss0) / 1e6:,.0f} MB for {events:,} events; held by count: "
          f"{held / 1e6:,.0f} MB ({columns / 1e6:,.0f} MB of event columns, the rest lanes); "
          f"RSS grew {early:.0f} B/event in the first half, {late:.0f} in the second")  # fmt: skip
    report("memory growth / event columns (whole run, fixed costs too)",
           (rss - rss0) / max(columns, 1), "x", "(info)", True)  # fmt: skip
    # RSS over halves swings with when the biggest merge's parts were freed: the whole run
    # against what the last snapshot holds by count is the steadier measure.
    report("memory growth / held by count (whole run)", (rss - rss0) / max(held, 1), "x",
           "<= 2", rss - rss0 <= 2 * held)  # fmt: skip


if __name__ == "__main__":
    main()
