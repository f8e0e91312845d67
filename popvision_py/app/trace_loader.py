"""Opening host traces in the window: ``TraceLoader`` reads them off the GUI thread (the
shared ``BackgroundLoader``), ``TraceOpening`` routes trace paths there from File > Open
trace…, drag-and-drop and the command line, finds the traces of an opened report, and shows
the result on the System Trace page."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog

from popvision_py.app.actions import install_trace_action
from popvision_py.app.dialogs import show_message
from popvision_py.app.loader import BackgroundLoader
from popvision_py.viewmodels.compare import pair_of
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.remote_traces import (
    elsewhere_text,
    read_remote_trace,
    read_report_traces,
)
from popvision_py.viewmodels.trace_compare import ComparedTraces, read_compared_traces
from popvision_py.viewmodels.trace_open import (
    OpenedTrace,
    ReportTraces,
    is_trace_path,
    read_trace,
    traces_of_report,
)
from popvision_py.views.system_trace.view import SystemTraceView
from profiler_core.errors import ReportError
from profiler_core.remote import RemoteReport

if TYPE_CHECKING:
    from popvision_py.app.window_parts import WindowParts

#: what the dialog lists first; any file may be picked (All files): a trace is told by content
TRACE_FILTER = (
    "Traces (*.pvti *.json *.gz);;PVTI traces (*.pvti);;Chrome trace JSON (*.json *.json.gz);;"
    "All files (*)"
)


class TraceLoader(BackgroundLoader):
    """Reads traces; ``loaded`` carries an ``OpenedTrace``."""

    def open(self, paths: list[str | Path]) -> None:
        paths = [Path(p) for p in paths]
        self.start(lambda progress, stopped: read_trace(paths, progress, stopped), paths[0])


class TraceOpening(QObject):
    """The window's trace side: one loader, the System Trace page, and what it shows.
    ``finished`` says a load ended (loaded, failed or cancelled): the window hides its
    progress; the loader's ``progress`` is the window's to show."""

    finished = Signal()

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.loader = TraceLoader(self)
        self.opened: OpenedTrace | None = None
        self._for_report = False  # the load running was started by an opened report
        self._pair = None  # the ComparePair whose traces are being read
        self._remote_url = ""  # the ssh:// address of the trace being read, if any
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_failed)
        self.loader.cancelled.connect(self._on_cancelled)
        window.cancel_button.clicked.connect(self.loader.cancel)
        self.action = install_trace_action(window, self.choose_and_open)

    @property
    def view(self) -> SystemTraceView:
        return next(v for v in self.window.views if isinstance(v, SystemTraceView))

    @staticmethod
    def claims(paths: list[str | Path]) -> bool:
        """Whether ``paths`` are traces for this side (.pvti files, folders of them, Chrome
        JSON plain or gzip: by content, ``is_trace_path``)."""
        return bool(paths) and all(is_trace_path(p) for p in paths)

    def open(self, paths: list[str | Path], *, for_report: bool = False) -> None:
        self._for_report, self._remote_url = for_report, ""
        self.loader.open(paths)
        self._show_progress(paths)

    def open_remote(self, url: str) -> None:
        """A trace on another machine (an ssh:// address): fetched, then read, in the worker."""
        self._for_report, self._remote_url = False, url
        self.loader.start(lambda progress, stopped: read_remote_trace(url, progress, stopped), url)
        self._show_progress([url])

    def _show_progress(self, paths: list[str | Path]) -> None:
        w = self.window
        w.progress.setValue(0)
        w.progress.show()
        w.cancel_button.show()
        w.statusBar().showMessage(f"Opening trace {', '.join(str(p) for p in paths)}…")

    def choose_and_open(self) -> None:
        dialog = QFileDialog(self.window, "Open a trace (.pvti, Chrome JSON, or a folder)")
        dialog.setNameFilter(TRACE_FILTER)
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.setDirectory(self.window.start_dir())
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.filesSelected.connect(lambda paths: self.open(paths) if paths else None)
        # A folder of .pvti files: typing or picking a folder and pressing Open accepts it.
        dialog.currentChanged.connect(
            lambda path: dialog.setFileMode(
                QFileDialog.FileMode.Directory
                if Path(path).is_dir() and is_trace_path(path)
                else QFileDialog.FileMode.ExistingFiles
            )
        )
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.dialog = dialog

    def report_opened(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        """Show the traces written with ``opened`` (the ones it recorded, wherever they are;
        else in its folder or beside it), if any; comparing with ``other``, both reports'
        traces stacked. Recorded traces that are gone are said on the page, by path."""
        if other is not None:
            self._compare_opened(opened, other)
            return
        if isinstance(opened.report, RemoteReport):
            self._remote_report_opened(opened.report)
            return
        traces = self.traces_of(opened)
        if traces.missing and not traces.found:
            self.opened = None
            self.view.show_report_note(traces.missing_text())
            return
        if traces.found and not self.loader.busy:
            names = ", ".join(f.name for f in traces.found)
            self.view.show_message(f"Reading the host trace {names}…")
            self.open(traces.found, for_report=True)
            if traces.missing:
                missing = ", ".join(str(p) for p in traces.missing)
                self.window.statusBar().showMessage(f"Not found any more: {missing}", 10_000)

    def _remote_report_opened(self, report: RemoteReport) -> None:
        """The .pvti files in the report's folder on the other machine, fetched and read."""
        if not report.trace_names or self.loader.busy:
            elsewhere = elsewhere_text(report)
            if elsewhere:
                self.opened = None
                self.view.show_report_note(elsewhere)
            return
        self.view.show_message(f"Fetching the host trace {', '.join(report.trace_names)}…")
        self._for_report, self._remote_url = True, ""
        job = lambda progress, stopped: read_report_traces(report, progress, stopped)  # noqa: E731
        self.loader.start(job, report.location)
        self._show_progress([report.location])

    @staticmethod
    def traces_of(opened: OpenedReport) -> ReportTraces:
        if isinstance(opened.report, RemoteReport):  # its recorded paths are the other machine's
            return ReportTraces([])
        try:
            recorded = opened.report.header.traces
        except ReportError:  # a damaged header: the folder's traces, as for older reports
            recorded = []
        return traces_of_report(opened.folder, recorded)

    def _compare_opened(self, a: OpenedReport, b: OpenedReport) -> None:
        found_a, found_b = self.traces_of(a).found, self.traces_of(b).found
        if not (found_a or found_b) or self.loader.busy:
            return
        pair = pair_of(a, b)
        self.view.show_message("Reading the host traces of A and B…")
        self._for_report, self._pair = True, pair
        self.loader.start(
            lambda progress, stopped: read_compared_traces(
                found_a, found_b, pair.names, progress, stopped
            ),
            (found_a or found_b)[0],
        )
        self.window.progress.setValue(0)
        self.window.progress.show()
        self.window.cancel_button.show()

    def update_rail(self) -> None:
        """Keep the System Trace page reachable while a trace is shown without a report."""
        if self.opened is None:
            return
        titles = [v.title for v in self.window.views]
        item = self.window.rail.item(1 + titles.index(self.view.title))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEnabled)

    def _on_loaded(self, opened: OpenedTrace | ComparedTraces) -> None:
        w = self.window
        self.finished.emit()
        if isinstance(opened, ComparedTraces):
            self.opened = next(t for t in opened.sides if t is not None)
            self.view.show_compared(opened, self._pair)
            self.update_rail()
            w.statusBar().showMessage(opened.missing_text() or "Opened the traces of A and B.")
            return
        self.opened = opened
        self.view.show_trace(opened)
        self.update_rail()
        if not self._for_report:
            w.show_view(self.view.title)
            for path in [self._remote_url] if self._remote_url else opened.paths:
                w.settings.add_recent(path)
        incomplete = opened.incomplete_text()
        w.statusBar().showMessage(opened.status_text())
        # A recorded .pvti cut short is worth a box; what another tool's trace could not
        # show is the banner's to say (a box over every PyTorch trace said it twice).
        if incomplete and not self._for_report and not opened.third_party:
            w.message_box = show_message(w, "The trace is incomplete", incomplete)

    def _on_failed(self, path: str, message: str) -> None:
        w = self.window
        self.finished.emit()
        w.statusBar().showMessage(f"Could not open the trace {path}: see the message.")
        if self._for_report:
            self.view.show_message(f"The host trace of this report cannot be shown.\n\n{message}")
        else:
            w.message_box = show_message(w, "Could not open the trace", message)

    def _on_cancelled(self) -> None:
        self.finished.emit()
        self.window.statusBar().showMessage("Opening the trace was cancelled.", 5000)
