"""Timing helpers: medians of repeated runs, and a uniform line per result."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int = 7, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report(name: str, value: float, unit: str, target: str, ok: bool) -> None:
    verdict = "meets" if ok else "MISSES"
    print(f"{name:<58} {value:>12.3f} {unit:<10} target {target:<12} {verdict}")
