"""Insights and the Tile Map on the 16-IPU scale report (23,552 tiles, ~400,000 variables):
the Insights analysis after load, the Insights page built, the Tile Map's first paint and a
redraw, offscreen; also saves the 16-IPU Tile Map screenshots (light and dark).

    python -m benchmarks.bench_insights [--report DIR]

``--report`` defaults to ``/tmp/scale/scale`` when it exists, else the scale report is built
with ``benchmarks.scale_report`` into a temporary folder (minutes; not timed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks._timing import report

DEFAULT = Path("/tmp/scale/scale")
SCREENSHOTS = Path(__file__).resolve().parents[1] / "screenshots"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="a report folder (default: the scale report)")
    args = parser.parse_args(argv)
    if args.report is not None or DEFAULT.is_dir():
        measure(args.report or DEFAULT)
        return
    from benchmarks.scale_report import main as make_scale

    with tempfile.TemporaryDirectory() as tmp:
        make_scale(["--out", tmp])
        measure(next(p.parent for p in Path(tmp).rglob("profile.pop")))


def measure(folder: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from popvision_py.theme import apply_theme
    from popvision_py.viewmodels.opened import OpenedReport
    from popvision_py.views.insights.view import InsightsView
    from popvision_py.views.tile_map.widget import TileMapWidget
    from profiler_core.insights import insights
    from profiler_core.report import open_report

    app = QApplication.instance() or QApplication([])
    apply_theme("light")
    loaded = open_report(folder)
    errors = loaded.load()  # what the window's worker does before any page exists
    target = loaded.target
    print(
        f"{folder}: {target.num_ipus} IPUs x {target.tiles_per_ipu:,} tiles, "
        f"{loaded.graph.num_variables:,} variables, {loaded.programs.num_steps:,} steps"
    )

    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        found = insights(loaded)
        times.append(time.perf_counter() - t0)
    print(f"{len(found.findings)} findings; missing: {list(found.missing) or 'none'}")
    analysis = statistics.median(times)
    report(
        "insights: analysis after load, median of 5",
        analysis * 1e3,
        "ms",
        "<= 1000",
        analysis <= 1.0,
    )

    opened = OpenedReport(loaded, errors)
    t0 = time.perf_counter()
    page = InsightsView()
    page.resize(1400, 800)
    page.show_reports(opened)
    page.show()
    app.processEvents()
    page.repaint()
    built = time.perf_counter() - t0
    report("insights: page built and painted", built * 1e3, "ms", "<= 1000", built <= 1.0)
    page.close()

    t0 = time.perf_counter()
    widget = TileMapWidget()
    widget.resize(1400, 700)
    widget.show_report(opened)
    widget.show()
    app.processEvents()
    widget.canvas.repaint()
    first = time.perf_counter() - t0
    assert widget.canvas.image is not None, "the tile map was never painted"
    report("tile map: first paint (16 IPUs)", first * 1e3, "ms", "<= 300", first <= 0.300)

    redraws = []
    for tiles in ([5], [100, 101, 102], list(range(3000, 3100))):
        opened.selection.select_tiles(tiles)
        t1 = time.perf_counter()
        widget.canvas.repaint()
        redraws.append(time.perf_counter() - t1)
    redraw = statistics.median(redraws)
    report(
        "tile map: redraw after a selection, median of 3",
        redraw * 1e3,
        "ms",
        "<= 50",
        redraw <= 0.050,
    )

    SCREENSHOTS.mkdir(exist_ok=True)
    for theme in ("light", "dark"):
        apply_theme(theme)
        app.processEvents()
        widget.canvas.repaint()
        suffix = "" if theme == "light" else "-dark"
        widget.grab().save(str(SCREENSHOTS / f"tile-map-16-ipus{suffix}.png"))
    widget.close()


if __name__ == "__main__":
    main()
