"""System Trace benchmark on a 10M-event .pvti (``bench_pvti.write_big_trace``): load time,
first paint after load, zoom/pan redraw, and peak memory while loading and while showing
it against the events' columns.

Run with ``python -m benchmarks.bench_system_trace [--events N]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path

from benchmarks._redraw import zoom_pan_redraws
from benchmarks._timing import report
from benchmarks.bench_pvti import write_big_trace

FIRST_PAINT_S = 2.0
REDRAW_S = 0.030
MEMORY_RATIO = 1.5
STEPS = 30


def columns_bytes(trace: object) -> int:
    names = ("start_ns", "end_ns", "depth", "thread", "channel", "label", "kind")
    return sum(getattr(trace, name).nbytes for name in names)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = write_big_trace(Path(tmp), args.events)
        print(
            f"{args.events:,}-event .pvti written in {time.perf_counter() - t0:.1f} s (not timed)"
        )
        measure(path)
    gc.collect()


def measure(path: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from popvision_py.viewmodels.system_trace import SystemTraceModel
    from popvision_py.viewmodels.trace_open import OpenedTrace
    from popvision_py.views.system_trace.view import SystemTraceView
    from profiler_core.formats.pvti import read_pvti
    from profiler_core.trace import trace_from_pvti

    app = QApplication.instance() or QApplication([])
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    trace = trace_from_pvti([read_pvti(path)], in_place=True)  # as the TraceLoader's worker
    read_s = time.perf_counter() - t0
    _, read_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()  # it slows every allocation: timings below run without it
    load_ratio = read_peak / columns_bytes(trace)
    report(
        "system trace: peak memory while loading / event columns",
        load_ratio,
        "x",
        f"<= {MEMORY_RATIO}",
        load_ratio <= MEMORY_RATIO,
    )
    t1 = time.perf_counter()
    model = SystemTraceModel(trace)
    layout_s = time.perf_counter() - t1
    columns = columns_bytes(trace)
    print(f"read in {read_s:.2f} s, lanes laid out in {layout_s:.3f} s (in the worker)")

    t2 = time.perf_counter()
    view = SystemTraceView()
    view.resize(1400, 900)
    view.show_trace(OpenedTrace([path], model))
    view.show()
    app.processEvents()
    view.timeline.viewport().repaint()
    first_paint = time.perf_counter() - t2
    assert view.timeline.spans.paint_count > 0, "the timeline was never painted"
    report(
        f"system trace: first paint after load ({len(trace):,} events)",
        first_paint * 1e3,
        "ms",
        f"<= {FIRST_PAINT_S * 1e3:.0f}",
        first_paint <= FIRST_PAINT_S,
    )

    lo, hi = model.time_limits()
    times = zoom_pan_redraws(view.timeline, lo, hi, STEPS)
    redraw = statistics.median(times)
    report(
        f"system trace: zoom/pan redraw, median of {STEPS}",
        redraw * 1e3,
        "ms",
        f"<= {REDRAW_S * 1e3:.0f}",
        redraw <= REDRAW_S,
    )
    print(f"    slowest step {max(times) * 1e3:.1f} ms; spans drawn at full view: "
          f"{len(model.spans(lo, hi, view.timeline.spans.batch_width)):,}")  # fmt: skip

    # Memory: what showing the trace adds to its columns (a new model of it shown in the
    # view, first paint and zooms), traced apart from the timings.
    del model
    gc.collect()
    tracemalloc.start()
    view.show_trace(OpenedTrace([path], SystemTraceModel(trace)))
    app.processEvents()
    for _ in range(10):
        view.timeline.zoom(0.5, anchor=lo + (hi - lo) * 0.37)
        view.timeline.viewport().repaint()
    _, added = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ratio = (columns + added) / columns
    report(
        "system trace: peak memory showing it / event columns",
        ratio,
        "x",
        f"<= {MEMORY_RATIO}",
        ratio <= MEMORY_RATIO,
    )
    print(f"    event columns {columns / 2**20:.0f} MiB; lanes, model and paints add at most "
          f"{added / 2**20:.0f} MiB; peak while loading {read_peak / 2**20:.0f} MiB "
          f"(tracemalloc: numpy columns, batch blobs, sort index)")  # fmt: skip
    _close(app, view)


def _close(app: object, view: object) -> None:
    """Delete the view while the QApplication is up."""
    from PySide6.QtCore import QEvent

    view.close()  # type: ignore[attr-defined]
    view.deleteLater()  # type: ignore[attr-defined]
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
