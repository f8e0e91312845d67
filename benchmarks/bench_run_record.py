"""Run and Record: the live latency from a tracepoint's end in the child to the System Trace
showing it (the window's repaint after it included), what one tail poll costs the worker and
one snapshot costs the window's thread, and the longest stall of the window's event loop
(a 5 ms timer notes every gap) while a child prints 100 MB.

    python -m benchmarks.bench_run_record
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from benchmarks._timing import report
from popvision_py.app.main_window import MainWindow
from popvision_py.app.runner import EXAMPLES
from popvision_py.app.settings import AppSettings, make_settings
from popvision_py.viewmodels.run_config import RunConfig
from profiler_core.formats.pvti import EventKind

FLOOD = """
import sys
line = "y" * 99 + "\\n"
block = line * 10_000
for _ in range(100):
    sys.stdout.write(block)
"""


def _wait(app: QApplication, until, timeout: float) -> None:
    deadline = time.perf_counter() + timeout
    while not until() and time.perf_counter() < deadline:
        app.processEvents()
        time.sleep(0.002)


class Gaps:
    """The longest wait between ticks of a 5 ms timer (what the window's thread was held)."""

    def __init__(self) -> None:
        self.gaps: list[float] = []
        self.last = time.perf_counter()
        self.timer = QTimer()
        self.timer.setInterval(5)
        self.timer.timeout.connect(self.tick)
        self.timer.start()

    def tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self.last)
        self.last = now


def live_latency(app: QApplication, window: MainWindow, folder: Path) -> None:
    runner = window.runner
    latencies: list[float] = []
    seen = [0]  # newest finished end (wall ns) already shown

    def drawn() -> None:
        shown = runner.live.shown if runner.live else None
        if shown is None:
            return
        window.traces.view.timeline.repaint()  # the paint that draws the new spans
        now_ns = time.time_ns()
        model = shown.model  # a live model: its pieces, read without joining them
        pieces = model.pieces if hasattr(model, "pieces") else (model.trace,)
        ends = model.tables.origin_wall_ns + np.concatenate(
            [p.end_ns[p.kind != EventKind.OPEN] for p in pieces]
        )
        new = ends[ends > seen[0]]
        latencies.extend(((now_ns - new) / 1e6).tolist())
        if len(new):
            seen[0] = int(new.max())

    config = RunConfig(str(EXAMPLES / "pvti_epochs.py"), ["300", "10"], report_dir=str(folder),
                       pvti=True, auto_report=False)  # fmt: skip
    gaps = Gaps()
    runner.start(config, record=True)
    runner.live.snapshot_ready.connect(drawn)
    _wait(app, lambda: not runner.running, 120)
    _wait(app, lambda: not window.traces.loader.busy, 60)  # the finished trace, in full
    _wait(app, lambda: False, 0.5)  # ... and its first paint, counted here, not in the flood
    gaps.timer.stop()
    live = runner.live
    report("live latency, tracepoint end -> drawn (median)", statistics.median(latencies), "ms",
           "<= 500", statistics.median(latencies) <= 500)  # fmt: skip
    p95 = float(np.percentile(latencies, 95))
    report("live latency, 95th percentile", p95, "ms", "(info)", True)
    report("events followed live", len(latencies), "events", "(info)", True)
    poll = statistics.median(live.poll_seconds) * 1e3
    report("worker: one poll + snapshot + layout (median)", poll, "ms", "off GUI", True)
    updates = [t for t, b in zip(live.show_seconds, live.built, strict=True) if not b]
    builds = [t for t, b in zip(live.show_seconds, live.built, strict=True) if b]
    show = max(updates) * 1e3
    report("window thread: showing a newer snapshot (max)", show, "ms", "<= 50", show <= 50)
    report(f"window thread: snapshots making new charts ({len(builds)}, max)",
           max(builds) * 1e3, "ms", "(info)", True)  # fmt: skip
    report("window thread held while recording (max gap)", max(gaps.gaps) * 1e3, "ms", "<= 50",
           max(gaps.gaps) <= 0.05)  # fmt: skip


def flood(app: QApplication, window: MainWindow, folder: Path) -> None:
    script = folder / "flood.py"
    script.write_text(FLOOD)
    runner = window.runner
    gaps = Gaps()
    started = time.perf_counter()
    runner.start(RunConfig(str(script), report_dir=str(folder), auto_report=False))
    _wait(app, lambda: not runner.running, 300)
    seconds = time.perf_counter() - started
    gaps.timer.stop()
    megabytes = runner.buffer.total_bytes / 1e6
    report("child prints (MB, all read)", megabytes, "MB", "100", megabytes >= 100)
    report("  read and shown at", megabytes / seconds, "MB/s", "(info)", True)
    worst = max(gaps.gaps) * 1e3
    report("window thread held while it prints 100 MB (max gap)", worst, "ms", "<= 50",
           worst <= 50)  # fmt: skip
    lines = runner.console.lines.rowCount()
    report("console lines kept", lines, "lines", f"<= {runner.buffer.max_lines + 2}",
           lines <= runner.buffer.max_lines + 2)  # fmt: skip


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    with tempfile.TemporaryDirectory() as tmp:
        window = MainWindow(AppSettings(make_settings(Path(tmp) / "settings.ini")))
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        live_latency(app, window, Path(tmp) / "record")
        flood(app, window, Path(tmp))
        window.close()


if __name__ == "__main__":
    main()
