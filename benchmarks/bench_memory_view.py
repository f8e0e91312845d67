"""Memory view of a 16-IPU report (23,552 tiles): time to first paint once the report is
loaded, and the redraw after one wheel-zoom step (median of 20), offscreen.

The report is built once by the engine (a few large tensors mapped linearly over every tile
and popops maps over them) with autoReport on; opening it is not timed, as the window does
that in its worker before the view exists.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks._timing import report, zoom_redraw_seconds

NUM_IPUS = 16
ZOOM_STEPS = 20


def build_report(directory: Path) -> Path:
    from ipu_engine import FLOAT, Engine, Graph, IPUModel, Sequence, popops, poputil
    from ipu_engine.popops.expr import _1, _2

    device = IPUModel("ipu2", num_ipus=NUM_IPUS).create_device()
    graph = Graph(device.target)
    tiles = device.target.num_tiles
    prog = Sequence(name="memory16")
    tensors = []
    for i, per_tile in enumerate((600, 1500, 3000)):  # uneven sizes: tiles differ
        t = graph.add_variable(FLOAT, [tiles * per_tile + 977 * i], f"w{i}")
        poputil.map_tensor_linearly(graph, t)
        graph.create_host_write(f"w{i}", t)
        tensors.append(t)
    a = popops.map(graph, _1 * 0.5 + _2, [tensors[0], tensors[0]], prog, "scale")
    b = popops.map(graph, _1 * _2, [tensors[1], tensors[1]], prog, "square")
    c = popops.map(graph, _1 + 1.0, [tensors[2]], prog, "shift")
    for name, t in (("a", a), ("b", b), ("c", c)):
        graph.create_host_read(name, t)
    options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    engine = Engine(graph, prog, options=options)
    engine.load(device)
    engine.run(0)
    return Path(engine.report_folder)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = build_report(Path(tmp))
        print(f"16-IPU report built by the engine in {time.perf_counter() - t0:.1f} s (not timed)")
        measure(folder)


def measure(folder: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from popvision_py.viewmodels.opened import OpenedReport
    from popvision_py.views.memory.view import MemoryView
    from profiler_core.report import open_report

    app = QApplication.instance() or QApplication([])
    opened_report = open_report(folder)
    errors = opened_report.load()
    opened = OpenedReport(opened_report, errors)
    tiles = opened_report.target.num_tiles

    t0 = time.perf_counter()
    view = MemoryView()
    view.resize(1400, 800)
    view.show_reports(opened)
    view.show()
    app.processEvents()
    chart = view.chart
    chart.plot.viewport().repaint()
    first_paint = time.perf_counter() - t0
    assert chart.bars.paint_count > 0, "the chart was never painted"
    width = chart.bars.shown.size
    print(f"{tiles:,} tiles drawn on {width} pixel columns")
    report(
        "memory view: first paint after load (16 IPUs)",
        first_paint * 1e3,
        "ms",
        "<= 1000",
        first_paint <= 1.0,
    )

    redraw = zoom_redraw_seconds(chart, chart.bars, tiles * 0.37, ZOOM_STEPS)
    report(
        "memory view: redraw per zoom step, median of 20",
        redraw * 1e3,
        "ms",
        "<= 30",
        redraw <= 0.030,
    )
    view.close()


if __name__ == "__main__":
    main()
