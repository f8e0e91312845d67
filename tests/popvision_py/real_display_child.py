"""Run by test_real_display.py under ``xvfb-run``: the real ``popvision`` command line on a real
X server (Qt's xcb platform, not offscreen), driven from outside with ``xdotool`` as a user's
mouse and keyboard would, the X server's root window grabbed after each step.

``python real_display_child.py REPORT OUT_DIR`` writes OUT_DIR/result.json and root-*.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtGui import QGuiApplication, QImage
from PySide6.QtWidgets import QApplication

from popvision_py.__main__ import main
from popvision_py.app.display_check import missing_xcb_message
from popvision_py.app.main_window import MainWindow

REPORT, OUT = Path(sys.argv[1]), Path(sys.argv[2])
result: dict[str, object] = {"platform": "", "steps": []}


def xdotool(*args: str) -> str:
    done = subprocess.run(["xdotool", *args], capture_output=True, text=True, timeout=20)
    return done.stdout.strip()


def the_window() -> MainWindow | None:
    return next((w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)), None)


def root_crop(name: str, window: MainWindow) -> dict[str, object]:
    """Grab the X server's root window, save it, and compare the part where the current
    page is with the page's own rendering; and read the rail's rows off the root image."""
    root = QGuiApplication.primaryScreen().grabWindow(0).toImage()
    root.save(str(OUT / f"root-{name}.png"))
    page = window.pages.currentWidget()
    top_left = page.mapToGlobal(QPoint(0, 0))
    own = page.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    shown = root.copy(top_left.x(), top_left.y(), own.width(), own.height())
    shown = shown.convertToFormat(QImage.Format.Format_RGB32)
    same = total = 0
    for y in range(0, own.height(), 4):
        for x in range(0, own.width(), 4):
            total += 1
            same += own.pixel(x, y) == shown.pixel(x, y)
    rail = window.rail
    highlighted = []
    for row in range(rail.count()):
        rect = rail.visualItemRect(rail.item(row))
        spot = rail.viewport().mapToGlobal(QPoint(rect.left() + 3, rect.center().y()))
        highlighted.append(root.pixelColor(spot.x(), spot.y()).name())
    return {
        "name": name,
        "crop_hash": hash(bytes(shown.constBits())),
        "title": window.current_view().title if window.current_view() else "Home",
        "same_fraction": same / max(total, 1),
        "rail_colors": highlighted,
        "rail_row": rail.currentRow(),
        "window_title": window.windowTitle(),
    }


def click_rail(window: MainWindow, title: str) -> None:
    rail = window.rail
    row = next(r for r in range(rail.count()) if rail.item(r).text() == title)
    centre = rail.viewport().mapToGlobal(rail.visualItemRect(rail.item(row)).center())
    xdotool("mousemove", "--sync", str(centre.x()), str(centre.y()))
    xdotool("click", "1")


def ready(window: MainWindow) -> bool:
    return bool(window.opened) and not window.page_computer.busy and not window.loader.busy


def finish(code: int) -> None:
    (OUT / "result.json").write_text(json.dumps(result, indent=1))
    QApplication.instance().exit(code)


def run_steps() -> None:
    """One step per tick, each waiting until the window has done what the last asked."""
    window = the_window()
    steps = [
        lambda w: result.update(window_ids=xdotool("search", "--name", "PopVision-py")),
        lambda w: click_rail(w, "Memory"),  # the mouse
        lambda w: result["steps"].append(root_crop("memory", w)),
        lambda w: xdotool("key", "Down"),  # the keyboard, on the rail the click focused
        lambda w: result["steps"].append(root_crop("liveness", w)),
        lambda w: click_rail(w, "Summary"),
        lambda w: result["steps"].append(root_crop("summary", w)),
    ]

    def tick() -> None:
        if window is None or not ready(window):
            QTimer.singleShot(200, tick)
            return
        if not steps:
            finish(0)
            return
        steps.pop(0)(window)
        QTimer.singleShot(600, tick)  # the X server and the window answer in their time

    result["platform"] = QGuiApplication.platformName()
    result["visible"] = bool(window and window.isVisible())
    tick()


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    result["xcb_check"] = missing_xcb_message()
    app = QApplication(sys.argv[:1])  # so the driver's timer exists before main runs exec
    QTimer.singleShot(500, run_steps)
    QTimer.singleShot(90_000, lambda: (result.update(timed_out=True), finish(3)))
    settings = OUT / "settings.ini"
    sys.exit(main(["--settings", str(settings), "--theme", "light", str(REPORT)]))
