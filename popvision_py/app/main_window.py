"""The main window: a left rail of reports, the pages, toolbar, menus and status bar.

Opening goes through ``open_paths`` whatever starts it (File > Open, the start page, recent
reports, drag-and-drop, the command line): the ``ReportLoader`` reads the report off the GUI
thread while the status bar shows progress and a Cancel button.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QWidget,
)

from popvision_py.app import compare_opening, remote_opening
from popvision_py.app.actions import install_actions
from popvision_py.app.after_paint import AfterPaintDecoding
from popvision_py.app.dialogs import HELP_INTRO, show_message
from popvision_py.app.loader import ReportLoader
from popvision_py.app.page_building import HOME, PageBuilding
from popvision_py.app.page_compute import PageComputer
from popvision_py.app.runner import RunController, install_run_actions
from popvision_py.app.runs_opening import RunsOpening
from popvision_py.app.settings import AppSettings
from popvision_py.app.start_page import StartPage
from popvision_py.app.trace_loader import TraceOpening
from popvision_py.theme import apply_theme
from popvision_py.viewmodels.compare import compared_names
from popvision_py.viewmodels.opened import OpenedReport, carry_selections, opened_status
from popvision_py.viewmodels.remote_traces import is_remote_trace
from popvision_py.views.base import ReportView
from popvision_py.views.execution_trace.view import ExecutionTraceView
from popvision_py.views.insights.view import InsightsView
from popvision_py.views.liveness.view import LivenessView
from popvision_py.views.memory.view import MemoryView
from popvision_py.views.operations.view import OperationsView
from popvision_py.views.operations_graph.view import OperationsGraphView
from popvision_py.views.plain_text import plain_label, plain_tooltip
from popvision_py.views.program_tree.view import ProgramTreeView
from popvision_py.views.runs.view import RunsView
from popvision_py.views.summary_view import SummaryView
from popvision_py.views.system_trace.view import SystemTraceView
from profiler_core.remote import is_remote, source_of

APP_TITLE = "PopVision-py"


class MainWindow(PageBuilding, QMainWindow):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.setWindowTitle(APP_TITLE)
        self.setAcceptDrops(True)
        self.resize(1400, 900)
        self.opened: list[OpenedReport] = []
        self.paths: list[Path] = []
        self._unbuilt: set[str] = set()  # titles of views not yet shown the opened reports
        # Pages compute their view models in workers (page_compute.py); tests that drive
        # the window without an event loop turn this off to get pages built at once.
        self.pages_in_worker = True
        self.page_computer = PageComputer(self._on_page_computed, self)
        self.page_failures: list[str] = []  # pages that could not show the opened reports
        self.message_box: QMessageBox | None = None
        self.loader = ReportLoader(self)
        self.loader.progress.connect(self._on_progress)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_failed)
        self.loader.cancelled.connect(self._on_cancelled)
        self.after_paint = AfterPaintDecoding(lambda: self.opened, self._show_damaged, self)
        self.runner = RunController(self)
        self.views: list[ReportView] = [
            SummaryView(),
            InsightsView(),  # first after Summary
            MemoryView(),
            LivenessView(),
            ProgramTreeView(),
            OperationsView(),
            OperationsGraphView(),  # the framework's graph
            ExecutionTraceView(),
            SystemTraceView(),
            RunsView(),  # many reports: a folder of them, or a sweep
        ]
        self._build_pages()
        self._build_status_bar()
        self.actions = install_actions(self)
        self.actions.recent_menu.aboutToShow.connect(lambda: remote_opening.fill_recent_menu(self))
        self._install_traces()
        self.runs = RunsOpening(self)
        self._install_compare()
        self.remote_action = remote_opening.install_remote(self)  # File > Open remote…
        install_run_actions(self, self.runner)
        self.settings.restore_window(self)
        self._give_views_settings()
        self.set_theme(self.settings.theme())
        self._update_state()

    def _give_views_settings(self) -> None:
        """Views that remember something between sessions (the Summary's folded blocks)."""
        for view in self.views:
            attach = getattr(view, "attach_settings", None)
            if attach is not None:
                attach(self.settings)

    def _install_traces(self) -> None:
        """The trace side (System Trace): its loader, File > Open trace… and routing."""
        self.traces = TraceOpening(self)
        self.traces.loader.progress.connect(self._on_progress)
        self.traces.finished.connect(self._loading_done)

    def _install_compare(self) -> None:
        """Compare mode's window parts (app/compare_opening.py): Swap A and B, labels."""
        self.compare_labels: tuple[str, str] | None = None
        self.swap_action = compare_opening.install_swap_action(self)

    # -- layout ---------------------------------------------------------------------------
    def _build_pages(self) -> None:
        self.start_page = StartPage()
        self.start_page.open_requested.connect(self.choose_and_open)
        self.start_page.compare_requested.connect(self.choose_and_compare)
        self.start_page.recent_chosen.connect(lambda text: remote_opening.open_recent(self, text))
        self.pages = QStackedWidget()
        self.pages.addWidget(self.start_page)
        self.rail = QListWidget()
        self.rail.setObjectName("rail")
        self.rail.setFixedWidth(170)
        self.rail.addItem(_rail_item(HOME, "The start page: open a report, or a recent one."))
        for view in self.views:
            self.pages.addWidget(view)
            self.rail.addItem(_rail_item(view.title, view.rail_help))
        self.rail.currentRowChanged.connect(self._on_rail_row)
        self.rail.setStyleSheet("QListWidget#rail::item { padding: 6px 8px; }")
        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.rail)
        row.addWidget(self.pages, 1)
        self.setCentralWidget(central)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.report_label = plain_label()
        self.report_label.setToolTip("The report shown, and what is selected in it.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setFixedWidth(220)
        self.progress.setToolTip("Opening the report off the window's thread.")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop opening the report; the window keeps what it shows.")
        self.cancel_button.clicked.connect(self.loader.cancel)
        bar.addPermanentWidget(self.report_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self.progress.hide()
        self.cancel_button.hide()

    # -- opening --------------------------------------------------------------------------
    def open_paths(self, paths: list[str | Path]) -> None:
        """Open one report, or two to compare (the second is compared with the first); a
        report or trace may be an ssh:// address of one on another machine."""
        if paths and is_remote_trace(paths[0]):
            self.traces.open_remote(str(paths[0]))
            return
        if self.traces.claims(paths):
            self.traces.open(paths)
            return
        if self.runs.claims(paths):  # a folder of reports or a sweep: the Runs page
            self.runs.open(paths[0])
            return
        paths = [source_of(p) for p in paths][:2]
        if not paths:
            return
        self.loader.open(paths)
        self._pending = paths
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.statusBar().showMessage(f"Opening {', '.join(str(p) for p in paths)}…")

    def choose_and_open(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a report folder", self.start_dir())
        if path:
            self.open_paths([path])

    def choose_and_compare(self) -> None:
        compare_opening.choose_and_compare(self)

    def reload(self) -> None:
        if self.paths:
            self.open_paths(self.paths)
        else:
            self.statusBar().showMessage("No report is open to reload.", 5000)

    def close_report(self) -> None:
        self.page_computer.cancel_all()
        self.after_paint.cancel()
        for view in self.views:
            view.clear()
        for opened in self.opened:
            opened.report.close()
        self.opened, self.paths = [], []
        self._unbuilt = set()
        self._update_state()
        self.rail.setCurrentRow(0)

    def start_dir(self) -> str:
        recent = [p for p in self.settings.recent_reports() if not is_remote(p)]
        return str(Path(recent[0]).parent) if recent else str(Path.cwd())

    def _on_progress(self, fraction: float, text: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.statusBar().showMessage(text)

    def _loading_done(self) -> None:
        self.progress.hide()
        self.cancel_button.hide()

    def _on_loaded(self, opened: list[OpenedReport]) -> None:
        self._loading_done()
        carry_selections(self.opened, opened)
        compare_opening.apply_labels(self, opened)
        self.page_computer.cancel_all()  # pages computed for the reports shown before
        self.after_paint.cancel()  # their sections' decoding: their readers close next
        for old in self.opened:
            old.report.close()
        self.opened = opened
        self.after_paint.schedule(opened)  # once the window has painted the first page
        self.paths = list(self._pending)
        for each in opened:
            each.selection.changed.connect(lambda _what: self._show_report_label())
        for view in self.views:
            view.clear()
        self._unbuilt = {view.title for view in self.views}
        self.page_failures = []
        current = self.current_view()
        if current is not None:
            self._build_view(current)
        remote_opening.record_recent(self, self.paths)
        self._update_state()
        damaged = " ".join(o.damaged_summary() for o in opened if o.errors)
        if damaged:  # the box says why each section is missing ("fails its checksum", ...)
            errors = "\n\n".join(str(e) for o in opened for e in o.errors.values())
            self._show_damaged(damaged, errors)
        status = [opened_status(opened), remote_opening.remote_status(opened)]
        self.statusBar().showMessage(" ".join(s for s in status if s))
        if self.current_view() is None or self.pages.currentWidget() is self.start_page:
            self.show_view("Summary")
        self.traces.report_opened(*opened[:2])

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.UpdateRequest:
            self.after_paint.painted()  # the window has just painted the report's page
        return handled

    def _show_damaged(self, text: str, details: str = "") -> None:
        self.statusBar().showMessage(text)
        box_text = f"{text}\n\n{details}" if details else text
        self.message_box = show_message(self, "Part of the report is damaged", box_text)

    def _on_failed(self, path: str, message: str) -> None:
        self._loading_done()
        if not is_remote(path) and not Path(path).exists():
            self.settings.remove_recent(path)
            self.start_page.set_recent(self.settings.recent_entries())
        self.statusBar().showMessage(f"Could not open {path}: see the message.")
        self.message_box = show_message(self, "Could not open the report", message)

    def _on_cancelled(self) -> None:
        self._loading_done()
        self.statusBar().showMessage("Opening was cancelled.", 5000)

    def _update_state(self) -> None:
        has_report = bool(self.opened)
        for row in range(1, self.rail.count()):
            item = self.rail.item(row)
            flags = item.flags()
            enabled = flags | Qt.ItemFlag.ItemIsEnabled
            item.setFlags(enabled if has_report else flags & ~Qt.ItemFlag.ItemIsEnabled)
        names = " vs ".join(compared_names(self.opened))
        self.setWindowTitle(f"{names} — {APP_TITLE}" if names else APP_TITLE)
        self._show_report_label()
        for action in (self.actions.reload, self.actions.close):
            action.setEnabled(has_report)
        if hasattr(self, "swap_action"):
            self.swap_action.setEnabled(len(self.opened) == 2)
        self.actions.export_menu.setEnabled(has_report and self.current_view() is not None)
        self.start_page.set_recent(self.settings.recent_entries())
        if hasattr(self, "traces"):  # _update_state runs once before the trace side exists
            self.traces.update_rail()
        if hasattr(self, "runs"):
            self.runs.update_rail()

    def _show_report_label(self) -> None:
        """Which report, run and selection is shown, always in the status bar."""
        if not self.opened:
            self.report_label.setText("")
            return
        first = self.opened[0]
        names = " vs ".join(compared_names(self.opened))
        self.report_label.setText(f"{names} · {first.selection.describe()}")

    # -- run, export, help, theme ---------------------------------------------------------
    def choose_and_run(self) -> None:
        self.runner.choose_and_run()

    def choose_and_record(self) -> None:
        self.runner.choose_and_run(record=True)

    def choose_and_export_png(self) -> None:
        self._choose_and_export("PNG image (*.png)", ".png", self.export_png)

    def choose_and_export_csv(self) -> None:
        self._choose_and_export("CSV file (*.csv)", ".csv", self.export_csv)

    def _choose_and_export(self, kind: str, suffix: str, export: object) -> None:
        view = self.current_view()
        if view is None:
            return
        name = f"{self.opened[0].name if self.opened else 'view'}-{view.title.lower()}{suffix}"
        path, _ = QFileDialog.getSaveFileName(self, "Export", name, kind)
        if path:
            export(path)  # type: ignore[operator]

    def export_png(self, path: str | Path) -> bool:
        view = self.current_view()
        ok = view is not None and view.export_png(path)
        self.statusBar().showMessage(f"Saved {path}" if ok else f"Could not save {path}", 5000)
        return ok

    def export_csv(self, path: str | Path) -> bool:
        view = self.current_view()
        ok = view is not None and view.export_csv(path)
        text = f"Saved {path}" if ok else f"{view.title if view else 'This page'} has no CSV export"
        self.statusBar().showMessage(text, 5000)
        return ok

    def show_help(self) -> None:
        view = self.current_view()
        text = f"{view.title}\n\n{view.help_text()}" if view is not None else HELP_INTRO
        self.message_box = show_message(self, "Help", text, QMessageBox.Icon.Information)

    def set_theme(self, name: str) -> None:
        apply_theme(name, self)
        self.settings.set_theme(name)
        (self.actions.dark if name == "dark" else self.actions.light).setChecked(True)

    # -- window events --------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            if not compare_opening.dropped(self, paths):
                self.open_paths(paths)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.settings.save_window(self)
        self.settings.sync()
        self.loader.cancel()
        self.loader.wait(10_000)
        self.traces.loader.cancel()
        self.traces.loader.wait(10_000)
        self.runs.loader.cancel()
        self.runs.loader.wait(10_000)
        self.page_computer.cancel_all()
        self.page_computer.wait(10_000)
        self.after_paint.cancel()
        self.after_paint.wait(10_000)
        self.runner.shutdown()
        super().closeEvent(event)


def _rail_item(title: str, help_text: str) -> QListWidgetItem:
    item = QListWidgetItem(title)
    item.setToolTip(plain_tooltip(help_text))
    return item
