"""The child side of test_window_cycles.py (not collected on its own: its name does not start
with ``test_``): a pytest-qt session that, ``WINDOW_CYCLES`` times in one process, makes a
main window, opens tutorial 4 through File > Open, compares it with its variant through the
Compare dialog, shows every rail page, checks what the pages show, then closes and deletes
the window. After each cycle it notes the process's resident memory (RSS, not its peak),
and at the end prints them and every Qt warning as one JSON line for the parent to judge.

The reports come from the environment (``WINDOW_CYCLES_A`` / ``WINDOW_CYCLES_B``), so the
parent's session fixtures make them once.
"""

from __future__ import annotations

import gc
import json
import os
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QFileDialog

from popvision_py.app.compare_opening import choose_and_compare
from popvision_py.app.main_window import MainWindow
from popvision_py.app.settings import AppSettings, make_settings
from popvision_py.views.table_model import RAW_ROLE
from profiler_core.analysis.compare import compare_reports
from profiler_core.heap import limit_malloc_arenas
from profiler_core.model.kinds import MemoryCategory
from profiler_core.report import open_report

CYCLES = int(os.environ.get("WINDOW_CYCLES", "20"))
#: What the offscreen platform says of every window it shows: not the program's doing.
PLATFORM_NOTE = "This plugin does not support propagateSizeHints()"
WARNINGS: list[str] = []


def _note_warning(kind: QtMsgType, context: object, message: str) -> None:
    if (
        kind != QtMsgType.QtDebugMsg
        and kind != QtMsgType.QtInfoMsg
        and PLATFORM_NOTE not in message
    ):
        WARNINGS.append(message)


def resident_bytes() -> int:
    """The process's resident memory now (Linux ``/proc/self/statm``)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


def _memory_rows(summary) -> dict[str, list]:
    """The Summary's compare Memory tab: category label -> (A, B, B - A) as shown."""
    model = summary.compare_block.tabs.panels["Memory"].model
    rows = {}
    for row in range(model.rowCount()):
        values = [model.data(model.index(row, c), RAW_ROLE) for c in range(4)]
        rows[values[0]] = values[1:]
    return rows


def _wait_loaded(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.loader.busy, timeout=30_000)


def test_open_compare_close_windows_many_times(qtbot, tmp_path, monkeypatch) -> None:
    a, b = Path(os.environ["WINDOW_CYCLES_A"]), Path(os.environ["WINDOW_CYCLES_B"])
    memory = compare_reports(open_report(a), open_report(b)).memory  # the expected numbers
    expected_memory = {
        c.label: [int(memory.a[c]), int(memory.b[c]), int(memory.b[c] - memory.a[c])]
        for c in MemoryCategory
        if memory.a[c] or memory.b[c]
    }
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a, **_k: str(a))
    limit_malloc_arenas()  # as popvision's main does at start
    previous = qInstallMessageHandler(_note_warning)
    rss = []
    for cycle in range(CYCLES):
        window = MainWindow(AppSettings(make_settings(tmp_path / f"settings{cycle}.ini")))
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)

        window.actions.open.trigger()  # File > Open report…
        _wait_loaded(qtbot, window)
        assert [o.name for o in window.opened] == ["tutorial4"], cycle
        assert window.view("Summary").value("Program", "Program") == "tutorial4"

        dialog = choose_and_compare(window)  # File > Compare…, A already filled in
        assert dialog.source.text() == str(a)
        dialog.target.setText(str(b))
        dialog.accept()
        _wait_loaded(qtbot, window)
        assert [o.name for o in window.opened] == ["tutorial4", "variant"], cycle
        # the graph, the steps' costs and debug.cbor are decoded by a worker after the paint
        qtbot.waitUntil(lambda after=window.after_paint: not after.busy, timeout=30_000)

        for view in window.views:
            window.show_view(view.title)
            QApplication.processEvents()
            assert window.current_view() is view, (cycle, view.title)
        # pages compute their view models in workers: on a busy machine the last ones shown
        # may still be computing here
        qtbot.waitUntil(lambda pages=window.page_computer: not pages.busy, timeout=30_000)
        assert window.page_failures == [], (cycle, window.page_failures)
        summary = window.view("Summary")
        names = [summary.value("Program", "Program", side) for side in (0, 1)]
        assert names == ["tutorial4", "variant"], (cycle, names)
        assert summary.value("Target", "Total tiles") == "1,472"
        shown = _memory_rows(summary)
        for label, values in expected_memory.items():
            assert shown[label][:3] == values, (cycle, label, shown[label])
        operations = window.view("Operations")
        message = (
            operations.pages.currentWidget() is operations.message and operations.message.text()
        )
        assert operations.compare_tabs is not None, (cycle, message)  # the page's message, if any
        assert operations.compare_tabs.panels["Compare: cycles"].model.rowCount() > 0

        window.close()
        window.deleteLater()
        del window, dialog, summary, operations
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QApplication.processEvents()
        gc.collect()
        rss.append(resident_bytes())
    qInstallMessageHandler(previous)
    print(f"window cycles done: {CYCLES}")
    figures = {
        "rss": rss,
        "qt_warnings": WARNINGS,
        # what the closed windows left behind: widgets Qt still has, windows Python still has
        "widgets_left": [type(w).__name__ for w in QApplication.allWidgets()][:20],
        "windows_left": sum(isinstance(o, MainWindow) for o in gc.get_objects()),
    }
    print("window cycles figures: " + json.dumps(figures))
