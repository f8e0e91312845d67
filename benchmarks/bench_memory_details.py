"""Memory view details on the engine's 16-IPU scale report (400,000 variables): what a tile
selection costs on the GUI thread with the Variables tab (and the Compute Sets, Vertices
and Exchanges tabs) open, from the selection to the table filled, offscreen.

    python -m benchmarks.bench_memory_details [--report DIR]

Without ``--report`` the scale report is built by the engine first (about a minute, not
timed). Opening is not timed either: the window does it in its worker.
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

SELECTIONS = 7  # different 1,000-tile selections, median taken
SELECTED = 1_000


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="a scale report folder already made")
    args = parser.parse_args(argv)
    if args.report is not None:
        measure(args.report)
        return
    from benchmarks.scale_report import make_scale_report

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        folder = make_scale_report(Path(tmp), verbose=False)
        print(f"scale report built by the engine in {time.perf_counter() - t0:.1f} s (not timed)")
        measure(folder)


def measure(folder: Path) -> None:
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from popvision_py.viewmodels.opened import OpenedReport
    from popvision_py.views.memory.view import MemoryView
    from profiler_core.report import open_report

    app = QApplication.instance() or QApplication([])
    opened_report = open_report(folder)
    opened = OpenedReport(opened_report, opened_report.load())
    tiles = opened_report.target.num_tiles
    view = MemoryView()
    view.resize(1400, 900)
    view.show_reports(opened)
    view.show()
    app.processEvents()
    rng = np.random.default_rng(0)
    for tab in view.tab_names():
        view.show_tab(tab)
        view.model.select_tiles(np.arange(7))  # the first use decodes the names: not timed
        app.processEvents()
        times = []
        for i in range(SELECTIONS):
            # contiguous runs and scattered tiles, as a person drags or types ranges
            if i % 2:
                chosen = rng.choice(tiles, SELECTED, replace=False)
            else:
                chosen = np.arange(SELECTED) + i * 2_000
            t0 = time.perf_counter()
            view.model.select_tiles(chosen)
            app.processEvents()
            times.append(time.perf_counter() - t0)
        rows = view.details_rows(tab)
        median = statistics.median(times)
        report(
            f"{tab} tab: update for {SELECTED:,} tiles ({rows:,} rows), median",
            median * 1e3,
            "ms",
            "<= 100",
            median <= 0.100,
        )
    view.close()


if __name__ == "__main__":
    main()
