"""What the main window's collaborators (the runner, compare and trace opening, the
command-line recorder) use of it, as protocols: they are given the window but see only
these parts, so none of them imports ``main_window`` while it imports them."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QListWidget,
    QMenuBar,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStatusBar,
    QToolBar,
)

from popvision_py.app.actions import Actions
from popvision_py.app.after_paint import AfterPaintDecoding
from popvision_py.app.loader import BackgroundLoader, ReportLoader
from popvision_py.app.settings import AppSettings
from popvision_py.app.start_page import StartPage
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.trace_open import OpenedTrace
from popvision_py.views.base import ReportView
from popvision_py.views.system_trace.view import SystemTraceView


class TraceSide(Protocol):
    """The window's trace side (``trace_loader.TraceOpening``) as the runner uses it."""

    opened: OpenedTrace | None
    loader: BackgroundLoader

    @property
    def view(self) -> SystemTraceView: ...

    def claims(self, paths: list[str | Path]) -> bool: ...

    def open(self, paths: list[str | Path], for_report: bool = False) -> None: ...


class WindowParts(Protocol):
    """The window's widgets, state and entry points its collaborators read and call."""

    settings: AppSettings
    opened: list[OpenedReport]
    paths: list[Path]
    views: list[ReportView]
    rail: QListWidget
    progress: QProgressBar
    cancel_button: QPushButton
    message_box: QMessageBox | None
    actions: Actions
    toolbar: QToolBar
    compare_labels: tuple[str, str] | None
    start_page: StartPage
    loader: ReportLoader
    after_paint: AfterPaintDecoding

    @property
    def traces(self) -> TraceSide: ...

    def statusBar(self) -> QStatusBar: ...

    def menuBar(self) -> QMenuBar: ...

    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget) -> None: ...

    def resizeDocks(self, docks: list, sizes: list[int], o: Qt.Orientation) -> None: ...

    def start_dir(self) -> str: ...

    def open_paths(self, paths: list[str | Path]) -> None: ...

    def show_view(self, title: str) -> None: ...

    def current_view(self) -> ReportView | None: ...

    def show_reports_again(self) -> None: ...
