"""Render every view of a window to PNG files (``--screenshot-dir``, ``make run`` offscreen)."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from popvision_py.app.main_window import HOME, MainWindow
from popvision_py.viewmodels.execution_trace import TraceLayout
from popvision_py.viewmodels.memory import Layout
from popvision_py.views.execution_trace.view import ExecutionTraceView
from popvision_py.views.memory.view import MemoryView


def wait_for_loader(window: MainWindow, timeout_ms: int = 120_000) -> None:
    """Run the event loop until the window's report loader has finished."""
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: None if window.loader.busy else loop.quit())
    timer.start()
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    timer.stop()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _save(window: MainWindow, directory: Path, name: str) -> Path:
    QApplication.processEvents()
    path = directory / f"{name}.png"
    window.grab().save(str(path))
    return path


def save_screenshots(window: MainWindow, directory: str | Path, prefix: str = "") -> list[Path]:
    """Every rail page, the Memory report's layouts with a selection, and both palettes."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    prefix = f"{prefix}-" if prefix else ""
    saved = []
    theme = window.settings.theme()
    for number, title in enumerate([HOME] + [v.title for v in window.views]):
        window.show_view(title)
        saved.append(_save(window, directory, f"{prefix}{number:02d}-{_slug(title)}"))
    memory = window.view("Memory")
    if isinstance(memory, MemoryView) and memory.models:
        window.show_view("Memory")
        memory.select_text("0,5,100-120")
        saved.append(_save(window, directory, f"{prefix}memory-selected"))
        memory.details.setCurrentWidget(memory.variables)
        saved.append(_save(window, directory, f"{prefix}memory-variables"))
        for layout in (Layout.BY_IPU, Layout.HEAT_MAP):
            memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(layout))
            saved.append(_save(window, directory, f"{prefix}memory-{_slug(layout.value)}"))
        memory.control_bar.layout_box.setCurrentIndex(0)
        memory.details.setCurrentWidget(memory.breakdown)
    saved += save_execution_trace_screenshots(window, directory, prefix.rstrip("-"))
    other = "dark" if theme == "light" else "light"
    window.set_theme(other)
    for title in ("Summary", "Memory"):
        window.show_view(title)
        saved.append(_save(window, directory, f"{prefix}{_slug(title)}-{other}"))
    window.set_theme(theme)
    window.show_view("Summary")
    return saved


def save_execution_trace_screenshots(
    window: MainWindow, directory: str | Path, prefix: str = ""
) -> list[Path]:
    """The Execution Trace in its Flat, Flame and BSP layouts (a compute step selected, the
    tiles of IPU 0 shown in BSP), in the light and the dark palette."""
    view = window.view("Execution Trace")
    if not isinstance(view, ExecutionTraceView) or view.model is None or not window.opened:
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    prefix = f"{prefix}-" if prefix else ""
    theme = window.settings.theme()
    controls = view.control_bar
    steps = view.model.report.programs.step_kind
    compute = [int(s) for s in range(len(steps)) if int(steps[s]) == 0][:1]
    window.opened[0].selection.select_steps(compute)
    saved = []
    window.show_view("Execution Trace")
    for palette in (theme, "dark" if theme == "light" else "light"):
        window.set_theme(palette)
        view.plot.apply_colors()
        for name, layout, bsp in (
            ("flat", TraceLayout.FLAT, False),
            ("flame", TraceLayout.FLAME, False),
            ("bsp", TraceLayout.FLAME, True),
        ):
            controls.layout_box.setCurrentText(layout.value)
            controls.bsp.setChecked(bsp)
            if controls.tile_actions:
                controls.tile_actions[0].setChecked(bsp)
            view.plot.show_all()
            slug = f"{prefix}execution-trace-{name}-{palette}"
            saved.append(_save(window, directory, slug))
        view.details.setCurrentWidget(view.step_panel)
        saved.append(_save(window, directory, f"{prefix}execution-trace-details-{palette}"))
        view.details.setCurrentWidget(view.summary)
    controls.layout_box.setCurrentText(TraceLayout.FLAT.value)
    controls.bsp.setChecked(False)
    if controls.tile_actions:
        controls.tile_actions[0].setChecked(False)
    window.set_theme(theme)
    view.plot.apply_colors()
    return saved
