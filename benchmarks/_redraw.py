"""The System Trace's zoom/pan redraw as the benchmarks time it: a third of the steps zoom
in around one place (to ~1 µs a pixel on a big trace), a third pan, a third zoom back out,
each followed by a repaint that must draw the spans again."""

from __future__ import annotations

import time
from typing import Any


def zoom_pan_redraws(timeline: Any, lo: float, hi: float, steps: int) -> list[float]:
    """Seconds of each step's change and repaint of ``timeline`` over [lo, hi]."""
    times = []
    for step in range(steps):
        painted = timeline.spans.paint_count
        started = time.perf_counter()
        if step < steps // 3:
            timeline.zoom(0.5, anchor=lo + (hi - lo) * 0.37)
        elif step < 2 * steps // 3:
            timeline.pan(0.3)
        else:
            timeline.zoom(2.5)
        timeline.viewport().repaint()
        times.append(time.perf_counter() - started)
        assert timeline.spans.paint_count > painted, "a step did not draw the spans"
    return times
