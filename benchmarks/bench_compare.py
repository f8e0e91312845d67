"""Compare mode on two 16-IPU scale reports: every page's first paint (build + paint, the
comparison analyses included the first time they are asked for), offscreen, at 1400x900.

    python -m benchmarks.bench_compare [--a DIR] [--b DIR]

Defaults: ``/tmp/scale/scale`` and ``/tmp/scale_cmp/scale`` (build them with
``python -m benchmarks.scale_report --out /tmp/scale`` and ``--out /tmp/scale_cmp --ops 2500``).
Target (issue 16): every view's first paint <= 1.5 s.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks._timing import report

TARGET_SECONDS = 1.5


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, default=Path("/tmp/scale/scale"))
    parser.add_argument("--b", type=Path, default=Path("/tmp/scale_cmp/scale"))
    args = parser.parse_args(argv)
    measure(args.a, args.b)


def measure(a: Path, b: Path) -> None:
    import tempfile

    from PySide6.QtWidgets import QApplication

    from popvision_py.app.main_window import MainWindow
    from popvision_py.app.settings import AppSettings, make_settings
    from popvision_py.viewmodels.opened import OpenedReport
    from profiler_core.report import open_report

    app = QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(AppSettings(make_settings(Path(tmp) / "settings.ini")))
        window.resize(1400, 900)
        window.show()
        opened = []
        for folder in (a, b):  # what the loader's worker does off the GUI thread (not timed)
            loaded = open_report(folder)
            errors = loaded.load()
            opened.append(OpenedReport(loaded, errors))
            t, graph, programs = loaded.target, loaded.graph, loaded.programs
            print(
                f"{folder}: {t.num_ipus} IPUs x {t.tiles_per_ipu:,} tiles, "
                f"{graph.num_variables:,} variables, {programs.num_steps:,} steps"
            )
        window._pending = [a, b]
        start = time.perf_counter()
        window._on_loaded(opened)  # builds and shows the Summary
        window.grab()
        app.processEvents()
        seconds = time.perf_counter() - start
        report("compare: Summary first paint", seconds, "s", f"<= {TARGET_SECONDS}",
               seconds <= TARGET_SECONDS)  # fmt: skip
        for view in window.views[1:]:
            start = time.perf_counter()
            window.show_view(view.title)
            # a page whose view model is computed in a worker has painted its content only
            # when the worker's result has arrived and the page is built from it
            while window.page_computer.computing(view):
                app.processEvents()
                time.sleep(0.001)
            window.grab()
            app.processEvents()
            seconds = time.perf_counter() - start
            report(f"compare: {view.title} first paint", seconds, "s", f"<= {TARGET_SECONDS}",
                   seconds <= TARGET_SECONDS)  # fmt: skip
        if window.page_failures:
            print("pages that failed:", *window.page_failures, sep="\n  ")
        window.close()


if __name__ == "__main__":
    main()
