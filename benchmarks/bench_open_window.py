"""What a user waits for when opening the biggest report in the window: from File > Open to
the first paint of the Summary (profile.pop read and decoded; debug.cbor decoded by a worker
after that paint, timed too), against the time to read both files' bytes; the longest stall
of the window's event loop meanwhile (a 5 ms timer notes every gap, until debug.cbor is
decoded); how soon Cancel acts; and the peak memory.

    python -m benchmarks.bench_open_window [--report DIR]   (default: build one, ~20 s)

Each figure is measured in a child process of its own, so the peak memory is the window's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks._timing import STALL_PROBE, report
from benchmarks.scale_report import measure_scale_report

_CHILD = (
    r"""
import json, os, sys, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings

folder, mode, settings_file = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
if mode == "unchecked":  # bench_checksums: the same window, checksums not checked
    import profiler_core.report.open as report_open
    report_open.open_report.__defaults__ = (None, None, False, False)  # verify=False
app = QApplication([])
window = MainWindow(AppSettings(make_settings(settings_file)))
window.resize(1400, 900)
window.show()
app.processEvents()

"""
    + STALL_PROBE
    + r"""
def vmhwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0

empty_window_rss = vmhwm()  # the application before any report: Qt, numpy, pyqtgraph
started = time.perf_counter()
started_cpu = time.process_time()  # every thread's: the worker's decoding too
window.open_paths([folder])
if mode == "cancel":
    def cancel_when_busy():
        if window.progress.value() > 0:
            cancel_at[0] = time.perf_counter()
            window.cancel_button.click()
        else:
            QTimer.singleShot(1, cancel_when_busy)
    cancel_at = [None]
    done_at = [None]
    window.loader.cancelled.connect(lambda: done_at.__setitem__(0, time.perf_counter()))
    QTimer.singleShot(1, cancel_when_busy)
    while done_at[0] is None and time.perf_counter() - started < 60:
        app.processEvents()
    print(json.dumps({"cancel_s": (done_at[0] or 0) - (cancel_at[0] or 0)}))
    sys.exit(0)
while window.loader.busy and time.perf_counter() - started < 120:
    app.processEvents()
    time.sleep(0.001)
window.repaint()  # the Summary is the current page: this is its first paint
painted = time.perf_counter()
painted_cpu = time.process_time()
debug_at = None  # debug.cbor is decoded by a worker after the first paint
while time.perf_counter() - painted < 60:
    app.processEvents()
    if debug_at is None and not window.after_paint.busy:
        debug_at = time.perf_counter()
        assert window.opened[0].report.debug_loaded
    if debug_at is not None and time.perf_counter() - max(painted, debug_at) > 0.3:
        break
    time.sleep(0.001)
print(json.dumps({
    "open_s": painted - started,
    "open_cpu_s": painted_cpu - started_cpu,
    "debug_s": debug_at - started,
    "longest_stall_s": max(gaps) if gaps else 0.0,
    "longest_stall_cpu_s": max(cpu_gaps) if cpu_gaps else 0.0,
    "peak_rss": vmhwm(),
    "empty_window_rss": empty_window_rss,
    "status": window.statusBar().currentMessage(),
}))
"""
)

_READ_CHILD = r"""
import json, sys, time
from pathlib import Path
files = [Path(p) for p in sys.argv[1:]]
started = time.perf_counter()
total = sum(len(f.read_bytes()) for f in files)
print(json.dumps({"read_s": time.perf_counter() - started, "bytes": total}))
"""


def _child(code: str, *args: str) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def measure(folder: Path, rounds: int = 3) -> None:
    files = [folder / "profile.pop", folder / "debug.cbor"]
    size = sum(f.stat().st_size for f in files)
    with tempfile.TemporaryDirectory() as tmp:
        settings = str(Path(tmp) / "settings.ini")
        opens, reads, stalls, rss, cancels, empty, debugs, cpus = ([] for _ in range(8))
        for _ in range(rounds):  # alternate, so both see the same machine
            reads.append(_child(_READ_CHILD, *map(str, files))["read_s"])
            opened = _child(_CHILD, str(folder), "open", settings)
            opens.append(opened["open_s"])
            debugs.append(opened["debug_s"])
            stalls.append(opened["longest_stall_s"])
            cpus.append(opened["longest_stall_cpu_s"])
            rss.append(opened["peak_rss"])
            empty.append(opened["empty_window_rss"])
            cancels.append(_child(_CHILD, str(folder), "cancel", settings)["cancel_s"])
    opens.sort(), reads.sort(), stalls.sort(), cancels.sort(), debugs.sort(), cpus.sort()
    open_s, read_s = opens[len(opens) // 2], reads[len(reads) // 2]
    print(f"report {folder}: {size / 1e6:.1f} MB in profile.pop + debug.cbor ({opened['status']})")
    print(
        "Opening reads and decodes all of profile.pop before the first paint; debug.cbor "
        "(which no first page needs) is decoded by a worker right after it, so 'open to "
        "first paint' does not include debug.cbor: 'open to debug.cbor decoded' does."
    )
    report("open to first paint of Summary (median)", open_s * 1e3, "ms", "", True)
    report("reading both files' bytes (median)", read_s * 1e3, "ms", "", True)
    ratio = open_s / read_s
    report("open / read bytes", ratio, "x", "<= 1.5x", ratio <= 1.5)
    debug_s = debugs[len(debugs) // 2]
    report("open to debug.cbor decoded, after the paint (median)", debug_s * 1e3, "ms", "", True)
    report("open to debug.cbor decoded / read bytes", debug_s / read_s, "x", "", True)
    report("longest GUI-thread stall while opening (median)", stalls[1] * 1e3, "ms", "<= 50 ms",
           stalls[1] <= 0.05)  # fmt: skip
    report("longest GUI-thread CPU between two ticks (median)", cpus[1] * 1e3, "ms",
           "<= 50 ms", cpus[1] <= 0.05)  # fmt: skip
    report("Cancel to cancelled (median)", cancels[1] * 1e3, "ms", "<= 100 ms", cancels[1] <= 0.1)
    report("peak RSS of the window / both files (with Qt's own)", max(rss) / size, "x", "", True)
    grown = max(p - e for p, e in zip(rss, empty, strict=True)) / size
    report("peak RSS the report adds to an empty window / both files", grown, "x", "<= 2x",
           grown <= 2.0)  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    measure_scale_report(measure, __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    main()
