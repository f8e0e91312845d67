"""Render every view of a window to PNG files (``--screenshot-dir``, ``make run`` offscreen)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from popvision_py.app.main_window import HOME, MainWindow
from popvision_py.viewmodels.execution_trace import TraceLayout
from popvision_py.viewmodels.memory import Layout
from popvision_py.views.execution_trace.view import ExecutionTraceView
from popvision_py.views.liveness.view import LivenessView
from popvision_py.views.memory.view import MemoryView
from popvision_py.views.operations.view import OperationsView
from popvision_py.views.operations_graph.view import OperationsGraphView
from popvision_py.views.program_tree.view import ProgramTreeView


def wait_for_loader(window: MainWindow, timeout_ms: int = 120_000) -> None:
    """Run the event loop until the window's report loader has finished."""
    loaders = (window.loader, window.traces.loader, window.runs.loader)
    _wait_until(lambda: not any(loader.busy for loader in loaders), timeout_ms)


def wait_for_pages(window: MainWindow, timeout_ms: int = 120_000) -> None:
    """Run the event loop until no page's view model is computing in a worker, so a
    screenshot shows the page, not its "Computing…" message."""
    _wait_until(lambda: not window.page_computer.busy, timeout_ms)


def _wait_until(done: Callable[[], bool], timeout_ms: int) -> None:
    if done():
        return
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(lambda: loop.quit() if done() else None)
    timer.start()
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    timer.stop()


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _save(window: MainWindow, directory: Path, name: str) -> Path:
    wait_for_pages(window)
    QApplication.processEvents()
    path = directory / f"{name}.png"
    window.grab().save(str(path))
    return path


def _program_views(window: MainWindow, directory: Path, prefix: str) -> list[Path]:
    """Operations with the most expensive operation selected (its steps highlighted), then
    the Program Tree with that operation's first step selected."""
    operations, tree = window.view("Operations"), window.view("Program Tree")
    if not isinstance(operations, OperationsView) or operations.model is None:
        return []
    if not isinstance(tree, ProgramTreeView) or tree.model is None:
        return []
    window.show_view("Operations")
    operations.select_operation(operations.model.label_at(0))
    operations.operation.setCurrentWidget(operations.operation.cycles)
    saved = [_save(window, directory, f"{prefix}operations-selected")]
    window.show_view("Program Tree")
    steps = window.opened[0].selection.operation_steps
    tree.expand_all()
    if steps.size:
        window.opened[0].selection.select_step(int(steps[0]))
    saved.append(_save(window, directory, f"{prefix}program-tree-selected"))
    return saved


def _save_memory_parity(
    window: MainWindow, memory: MemoryView, directory: Path, prefix: str
) -> list[Path]:
    """Issue 14's states, light and dark: By tile with its IPU boundaries, the memory-region
    layout, and the Compute Sets, Vertices and Exchanges tabs for a selection."""
    saved = []
    theme = window.settings.theme()
    per_ipu = memory.model.table.tiles_per_ipu
    for palette in (theme, "dark" if theme == "light" else "light"):
        window.set_theme(palette)
        memory.select_text(f"0-{min(per_ipu, memory.model.table.num_tiles) - 1}")
        for layout in (Layout.BY_TILE, Layout.BY_REGION):
            memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(layout))
            saved.append(
                _save(window, directory, f"{prefix}memory-{_slug(layout.value)}-{palette}")
            )
        memory.control_bar.layout_box.setCurrentIndex(0)
        for tab in memory.tab_names()[1:]:
            memory.show_tab(tab)
            saved.append(_save(window, directory, f"{prefix}memory-tab-{_slug(tab)}-{palette}"))
        memory.details.setCurrentWidget(memory.breakdown)
    window.set_theme(theme)
    memory.select_text("")
    return saved


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
        saved += _save_memory_parity(window, memory, directory, prefix)
    saved += save_liveness_screenshots(window, directory, prefix)
    saved += _program_views(window, directory, prefix)
    saved += save_system_trace_screenshots(window, directory, prefix)
    saved += _insights_and_tile_map(window, directory, prefix)
    saved += save_operations_graph_screenshots(window, directory, prefix)
    saved += save_execution_trace_screenshots(window, directory, prefix.rstrip("-"))
    other = "dark" if theme == "light" else "light"
    window.set_theme(other)
    for title in ("Summary", "Memory"):
        window.show_view(title)
        saved.append(_save(window, directory, f"{prefix}{_slug(title)}-{other}"))
    saved += _program_views(window, directory, f"{prefix}{other}-")
    window.set_theme(theme)
    window.show_view("Summary")
    return saved


def save_liveness_screenshots(window: MainWindow, directory: Path, prefix: str = "") -> list[Path]:
    """Liveness with the peak step selected and its live variables listed, light and dark."""
    liveness = window.view("Liveness")
    if not isinstance(liveness, LivenessView) or liveness.model is None:
        return []
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    prefix = f"{prefix}-" if prefix and not prefix.endswith("-") else prefix
    window.show_view("Liveness")
    liveness.model.click_step(liveness.model.peak()[0])
    liveness.details.setCurrentWidget(liveness.not_always_live)
    theme = window.settings.theme()
    saved = []
    for name in (theme, "dark" if theme == "light" else "light"):
        window.set_theme(name)
        suffix = "" if name == "light" else f"-{name}"
        saved.append(_save(window, directory, f"{prefix}liveness-peak{suffix}"))
    window.set_theme(theme)
    return saved


def save_system_trace_screenshots(
    window: MainWindow, directory: Path, prefix: str = ""
) -> list[Path]:
    """The System Trace's flame, a search match, the call tree of a range, series as areas,
    merged charts, in both palettes; nothing when no trace is open."""
    view = window.traces.view
    if view.model is None:
        return []
    if view.compare is not None:
        return _system_trace_compare(window, directory, prefix)
    saved = []
    theme = window.settings.theme()
    window.show_view(view.title)
    for palette in (theme, "dark" if theme == "light" else "light"):
        window.set_theme(palette)
        view.timeline.show_all()
        view.details.setCurrentWidget(view.event_details)
        saved.append(_save(window, directory, f"{prefix}systrace-flame-{palette}"))
        view.control_bar.search_box.setText("epoch")
        view.step_match(1)
        view.step_match(1)
        saved.append(_save(window, directory, f"{prefix}systrace-search-{palette}"))
        view.timeline.show_all()
        lo, hi = view.timeline.x_range
        view.set_selection_range(lo + (hi - lo) * 0.3, lo + (hi - lo) * 0.7)
        view.details.setCurrentWidget(view.call_tree)
        saved.append(_save(window, directory, f"{prefix}systrace-call-tree-{palette}"))
        view.control_bar.select_range.setChecked(False)
        view.control_bar.area.setChecked(True)
        view.control_bar.merge_all.setChecked(True)
        saved.append(_save(window, directory, f"{prefix}systrace-merged-area-{palette}"))
        view.control_bar.area.setChecked(False)
        view.control_bar.merge_all.setChecked(False)
        view.control_bar.search_box.clear()
    window.set_theme(theme)
    return saved


def _system_trace_compare(window: MainWindow, directory: Path, prefix: str) -> list[Path]:
    """A and B's host traces stacked, whole and zoomed to A's first Engine::run (found by
    search, selected, B following), in both palettes."""
    view = window.traces.view
    assert view.compare is not None
    stacked = view.compare.stacked
    theme = window.settings.theme()
    window.show_view(view.title)
    saved = []
    for zoomed in (False, True):
        for palette in (theme, "dark" if theme == "light" else "light"):
            window.set_theme(palette)
            stacked.plots[0].show_all()
            if zoomed:
                view.control_bar.search_box.setText("Engine::run")
                view.step_match(1)
            name = "systrace-compare-zoomed" if zoomed else "systrace-compare"
            saved.append(_save(window, directory, f"{prefix}{name}-{palette}"))
    window.set_theme(theme)
    view.control_bar.search_box.clear()
    stacked.plots[0].show_all()
    return saved


def _insights_and_tile_map(window: MainWindow, directory: Path, prefix: str) -> list[Path]:
    """Insights with its findings, and the Memory report's Tile map layout, light and dark."""
    memory = window.view("Memory")
    if not isinstance(memory, MemoryView) or not memory.models:
        return []
    theme = window.settings.theme()
    saved = []
    for name in (theme, "dark" if theme == "light" else "light"):
        window.set_theme(name)
        QApplication.processEvents()
        suffix = "" if name == "light" else f"-{name}"
        window.show_view("Insights")
        saved.append(_save(window, directory, f"{prefix}insights{suffix}"))
        window.show_view("Memory")
        memory.control_bar.layout_box.setCurrentIndex(list(Layout).index(Layout.TILE_MAP))
        saved.append(_save(window, directory, f"{prefix}memory-tile-map{suffix}"))
        memory.control_bar.layout_box.setCurrentIndex(0)
    window.set_theme(theme)
    window.set_theme(theme)
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


def save_operations_graph_screenshots(
    window: MainWindow, directory: str | Path, prefix: str = ""
) -> list[Path]:
    """The Operations graph of a framework's report: its busiest node selected, with edge
    labels, and with every layer folded; nothing for a report without one (a Poplar
    program's: its rail page says why)."""
    view = window.view("Operations Graph")
    if not isinstance(view, OperationsGraphView) or view.model is None:
        return []
    directory = Path(directory)
    prefix = f"{prefix}-" if prefix and not prefix.endswith("-") else prefix
    window.show_view("Operations Graph")
    model = view.model
    view.select_node(int(model.values("Cycles").argmax()))
    view.canvas.center_on(model.current)
    saved = [_save(window, directory, f"{prefix}operations-graph-selected")]
    view.control_bar.edge_labels.setChecked(True)
    saved.append(_save(window, directory, f"{prefix}operations-graph-edge-labels"))
    view.control_bar.edge_labels.setChecked(False)
    view.control_bar.fold_all.click()
    _wait_until(lambda: not view.arranger.busy, 60_000)
    view.canvas.show_top()
    saved.append(_save(window, directory, f"{prefix}operations-graph-folded"))
    return saved
