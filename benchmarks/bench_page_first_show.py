"""The first show of every page of the biggest report: the longest stall of the window's event
loop (a 5 ms timer notes every gap) from the click on the page's rail entry to 0.3 s after its
first paint (and the GUI thread's own CPU time in the longest gap: on a loaded machine the
wall-clock gap also holds the time other processes had the cores), and the time until its
content is painted; with the pages' view models computed in workers (as the application
does) and, for comparison, built on the GUI thread.

    python -m benchmarks.bench_page_first_show [--report DIR]   (default: build one, ~20 s)

Each page is measured in a child process of its own that has just opened the report (and
decoded its debug.cbor), so no page finds another's first-time costs already paid.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._timing import STALL_PROBE, report
from benchmarks.scale_report import measure_scale_report

PAGES = [
    "Insights",
    "Memory",
    "Liveness",
    "Program Tree",
    "Operations",
    "Execution Trace",
    "System Trace",
]
STALL_TARGET_S = 0.05

_CHILD = (
    r"""
import json, os, sys, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings

folder, title, mode, settings_file = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
app = QApplication([])
window = MainWindow(AppSettings(make_settings(settings_file)))
window.pages_in_worker = mode == "worker"
window.resize(1400, 900)
window.show()
window.open_paths([folder])
while window.loader.busy or window.after_paint.busy:
    app.processEvents()
    time.sleep(0.001)
settle = time.perf_counter()
while time.perf_counter() - settle < 0.3:
    app.processEvents()

"""
    + STALL_PROBE
    + r"""app.processEvents()
last[0], last_cpu[0] = time.perf_counter(), time.thread_time()
started = time.perf_counter()
window.show_view(title)  # what a click on the rail does
computing = window.page_computer.computing(window.current_view())
while title in window._unbuilt and time.perf_counter() - started < 60:
    app.processEvents()
    time.sleep(0.0005)
window.repaint()  # the page's first paint with its content
painted = time.perf_counter()
tick()  # the paint's own gap
while time.perf_counter() - painted < 0.3:
    app.processEvents()
    time.sleep(0.0005)
print(json.dumps({
    "content_s": painted - started,
    "longest_stall_s": max(gaps),
    "longest_stall_cpu_s": max(cpu_gaps),
    "computing": computing,
    "failures": window.page_failures,
}))
"""
)


def _child(*args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(folder: Path) -> None:
    print(f"report {folder}: first show of each page (one child process per page and mode)")
    with tempfile.TemporaryDirectory() as tmp:
        settings = str(Path(tmp) / "settings.ini")
        for title in PAGES:
            before = _child(str(folder), title, "gui-thread", settings)
            after = _child(str(folder), title, "worker", settings)
            for shown in (before, after):
                if shown["failures"]:
                    print(f"  {title} FAILED: {shown['failures']}")
            how = "view model in a worker" if after["computing"] else "built on the GUI thread"
            report(
                f"{title}: longest stall, built on the GUI thread",
                before["longest_stall_s"] * 1e3,
                "ms",
                "",
                True,
            )
            stall = after["longest_stall_s"]
            report(
                f"{title}: longest stall ({how})",
                stall * 1e3,
                "ms",
                "<= 50 ms",
                stall <= STALL_TARGET_S,
            )
            cpu = after["longest_stall_cpu_s"]
            report(
                f"{title}: longest GUI-thread CPU between two ticks",
                cpu * 1e3,
                "ms",
                "<= 50 ms",
                cpu <= STALL_TARGET_S,
            )
            report(f"{title}: click to content painted", after["content_s"] * 1e3, "ms", "", True)


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
