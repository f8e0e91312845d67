"""Liveness view of an engine-made report of more than 100,000 program steps: time from the
loaded report to the first paint, the redraw after one wheel-zoom step (median of 20), and a
click on the peak step filling the live-variables tab, offscreen.

The report is built once with ``benchmarks.scale_report``'s graph (popops additions in a body
repeated ``PASSES`` times, 3 program steps per addition). The engine charges every tile
control code for every program step, so more than ~39,000 steps do not fit a 624 KiB tile on
any number of IPUs: the program is compiled with ``debug.allowOutOfMemory``, which writes the
report (graph, liveness, program steps) at load; it cannot run, so there is no execution
profile, which the Liveness view does not need. Opening the report is timed separately (the
window does it in its worker before the view exists).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks._timing import report, zoom_redraw_seconds

VARIABLES = 20_000
OPS = 3_000
PASSES = 12  # 3,000 additions x 3 steps x 12 passes = 108,001 program steps
ZOOM_STEPS = 20


def build_report(directory: Path) -> Path:
    from benchmarks.scale_report import build_graph
    from ipu_engine import Engine

    device, graph, program = build_graph(VARIABLES, OPS, PASSES, 1)
    options = {
        "autoReport.all": "true",
        "autoReport.directory": str(directory),
        "debug.allowOutOfMemory": "true",
    }
    engine = Engine(graph, program, options=options)
    engine.load(device)  # writes the report; the program does not fit, so it is not run
    return Path(engine.report_folder)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = build_report(Path(tmp))
        print(f"report built by the engine in {time.perf_counter() - t0:.1f} s (not timed)")
        measure(folder)


def measure(folder: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from popvision_py.viewmodels.opened import OpenedReport
    from popvision_py.views.liveness.view import LivenessView
    from profiler_core.report import open_report

    app = QApplication.instance() or QApplication([])
    t0 = time.perf_counter()
    opened_report = open_report(folder)
    errors = opened_report.load()
    opened = OpenedReport(opened_report, errors)
    load = time.perf_counter() - t0
    steps = opened_report.programs.num_steps
    print(
        f"{steps:,} program steps, {opened_report.graph.num_variables:,} variables; "
        f"open + decode every section {load:.2f} s (the window's worker, not the view)"
    )

    t0 = time.perf_counter()
    view = LivenessView()
    view.resize(1400, 800)
    view.show_reports(opened)
    view.show()
    app.processEvents()
    chart = view.chart
    chart.plot.viewport().repaint()
    first_paint = time.perf_counter() - t0
    assert chart.area.paint_count > 0, "the chart was never painted"
    print(f"{steps:,} steps drawn on {chart.area.shown.size} pixel columns")
    report(
        f"liveness view: first paint after load ({steps:,} steps)",
        first_paint * 1e3,
        "ms",
        "<= 1000",
        first_paint <= 1.0,
    )

    redraw = zoom_redraw_seconds(chart, chart.area, steps * 0.37, ZOOM_STEPS)
    report(
        "liveness view: redraw per zoom step, median of 20",
        redraw * 1e3,
        "ms",
        "<= 30",
        redraw <= 0.030,
    )

    t1 = time.perf_counter()
    view.control_bar.scope_box.setCurrentText("IPU 3")  # the tile method over one IPU's tiles
    chart.plot.viewport().repaint()
    scope = time.perf_counter() - t1
    report(
        "liveness view: switch to one IPU's liveness and redraw",
        scope * 1e3,
        "ms",
        "<= 100",
        scope <= 0.1,
    )
    view.control_bar.scope_box.setCurrentText("All IPUs")

    view.details.setCurrentWidget(view.not_always_live)
    t1 = time.perf_counter()
    view.model.click_step(view.model.peak()[0])
    app.processEvents()
    click = time.perf_counter() - t1
    rows = view.not_always_live.model.rowCount()
    report(
        f"liveness view: click the peak, {rows:,} live variables listed",
        click * 1e3,
        "ms",
        "<= 100",
        click <= 0.1,
    )
    view.close()


if __name__ == "__main__":
    main()
