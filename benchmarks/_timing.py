"""Timing helpers: medians of repeated runs, and a uniform line per result."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


class EmptyContext:
    """The cheapest Python context manager taking two arguments: the floor for any API."""

    __slots__ = ("channel", "label")

    def __init__(self, channel: object, label: str) -> None:
        self.channel, self.label = channel, label

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def median_seconds(fn: Callable[[], object], repeat: int = 7, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def side_by_side(
    ours: Callable[[], object], theirs: Callable[[], object], rounds: int = 5, runs: int = 3
) -> tuple[float, float]:
    """Medians over ``rounds`` rounds of ``runs`` runs of each, a round's first run of each
    not counted: both meet the same load, and onnxruntime's thread pool is awake when timed
    (after one of our runs it sleeps, and its first run after ours wakes it)."""
    a, b = [], []
    for _ in range(rounds):
        _timed(ours, runs, a)
        _timed(theirs, runs, b)
    return statistics.median(a), statistics.median(b)


def side_by_side_opened(
    ours: Callable[[], object],
    open_theirs: Callable[[], Callable[[], object]],
    rounds: int = 5,
    runs: int = 3,
) -> tuple[float, float]:
    """As ``side_by_side``, ``open_theirs()`` making the other's run afresh each round and
    dropping it after its runs, so that its threads have ended when ours are timed:
    onnxruntime's pool spins on after a run returns, on the cores the next run needs."""
    a, b = [], []
    for _ in range(rounds):
        _timed(ours, runs, a)
        theirs = open_theirs()
        _timed(theirs, runs, b)
        del theirs  # the last reference: the session and its threads end
    return statistics.median(a), statistics.median(b)


def _timed(fn: Callable[[], object], runs: int, times: list[float]) -> None:
    fn()  # not counted: wakes what the other's runs left asleep
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)


def report(name: str, value: float, unit: str, target: str, ok: bool) -> None:
    verdict = "meets" if ok else "MISSES"
    print(f"{name:<58} {value:>12.3f} {unit:<10} target {target:<12} {verdict}")


def zoom_redraw_seconds(chart: object, item: object, centre: float, steps: int = 20) -> float:
    """Median seconds to repaint ``chart`` (with a pyqtgraph ``view_box`` and ``plot``) after
    each of ``steps`` wheel zooms about x = ``centre``: in for half, then back out. ``item``
    (with ``paint_count``) must repaint every time."""
    times = []
    for step in range(steps):
        factor = 0.8 if step < steps // 2 else 1.25
        painted = item.paint_count
        t0 = time.perf_counter()
        chart.view_box.scaleBy(x=factor, center=(centre, 0))
        chart.plot.viewport().repaint()
        times.append(time.perf_counter() - t0)
        assert item.paint_count > painted, "the chart did not repaint"
    return statistics.median(times)


# Code for a benchmark's child script (a window's process): a 5 ms timer that records each gap
# of the event loop in wall time (``gaps``) and in the GUI thread's own CPU time
# (``cpu_gaps``); the longest gap is the longest stall the user could see.
STALL_PROBE = """
gaps, cpu_gaps, last, last_cpu = [], [], [time.perf_counter()], [time.thread_time()]
def tick():
    now, cpu = time.perf_counter(), time.thread_time()
    gaps.append(now - last[0])
    cpu_gaps.append(cpu - last_cpu[0])
    last[0], last_cpu[0] = now, cpu
timer = QTimer()
timer.setInterval(5)
timer.timeout.connect(tick)
timer.start()
"""
