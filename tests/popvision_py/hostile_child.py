"""The child side of test_hostile_window.py (run as ``python -m``, not collected): opens one
path in a main window the way the command line does, waits for the report and trace
loaders, shows and renders every enabled rail page to PNG, and prints what the window
said as one JSON line (message box, status bar, System Trace banner, seconds, peak RSS).

An exception escaping a Qt slot goes to ``sys.excepthook``; it is recorded and makes the
child exit with 3, so the parent sees it even though Qt would carry on.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from popvision_py.app.main_window import HOME, MainWindow
from popvision_py.app.settings import AppSettings, make_settings

ESCAPED: list[str] = []


def _record(kind: type, value: BaseException, tb: object) -> None:
    ESCAPED.append("".join(traceback.format_exception(kind, value, tb))[-2000:])


def _quiet(kind: QtMsgType, context: object, message: str) -> None:
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


def _wait(app: QApplication, window: MainWindow, deadline: float) -> None:
    busy = lambda: (  # noqa: E731
        window.loader.busy or window.traces.loader.busy or window.after_paint.busy
    )
    app.processEvents()
    while busy() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)


def main(path: str, settings: str, shots: str, seconds: float) -> int:
    sys.excepthook = _record
    qInstallMessageHandler(_quiet)
    app = QApplication(sys.argv[:1])
    window = MainWindow(AppSettings(make_settings(settings)))
    window.pages_in_worker = False
    window.resize(1400, 900)
    window.show()
    started, cpu_started = time.monotonic(), time.process_time()
    window.open_paths([path])
    _wait(app, window, started + seconds)
    loaded = time.monotonic() - started
    loaded_cpu = time.process_time() - cpu_started  # every thread of this process
    Path(shots).mkdir(parents=True, exist_ok=True)
    pages = []
    for row, title in enumerate([HOME] + [v.title for v in window.views]):
        if row and not window.rail.item(row).flags() & Qt.ItemFlag.ItemIsEnabled:
            continue
        window.show_view(title)
        app.processEvents()
        window.grab().save(str(Path(shots) / f"{row:02d}.png"))
        pages.append(title)
    shown = time.monotonic() - started
    trace_view = window.traces.view
    box = window.message_box
    report = {
        "loaded_s": loaded,
        "loaded_cpu_s": loaded_cpu,
        "shown_s": shown,
        "busy": window.loader.busy or window.traces.loader.busy,
        "message": box.text() if box is not None else "",
        "message_title": box.windowTitle() if box is not None else "",
        "status": window.statusBar().currentMessage(),
        "banner": trace_view.banner.text() if trace_view.banner.isVisible() else "",
        "opened": [o.name for o in window.opened],
        "trace": window.traces.opened.name if window.traces.opened else "",
        "pages": pages,
        "page_failures": [str(f) for f in window.page_failures],
        "escaped": ESCAPED,
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print("HOSTILE " + json.dumps(report), flush=True)
    window.loader.cancel()
    window.traces.loader.cancel()
    os._exit(3 if ESCAPED else 0)  # a trace loader stuck on a FIFO must not hold the exit


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])))
