"""Opening a folder of reports (or a sweep) in the window: ``RunsLoader`` reads each report's
row of the ``reports`` table off the GUI thread and hands them over a batch at a time, so the
Runs page fills as they come (1,000 reports: the first rows at once, never a frozen window);
``RunsOpening`` routes folders of reports there and opens the reports picked on the page."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from popvision_py.app.dialogs import show_message
from popvision_py.app.loader import BackgroundLoader
from popvision_py.viewmodels.runs import RunsModel
from popvision_py.views.runs.view import RunsView
from profiler_core.tables.sources import is_folder_of_reports

if TYPE_CHECKING:
    from popvision_py.app.window_parts import WindowParts

BATCH_SECONDS = 0.1  # the worker hands its rows over at most this often
DRAIN_MS = 200  # the page takes them (and the progress) at most this often


class Inbox:
    """What the worker has read and the page has not yet shown, under a lock: the page
    drains it on a timer, so however fast the reports are read the window does one refresh
    per tick, and its event loop never falls behind a stream of queued signals."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sources: Any = None
        self.batches: list[dict[str, list]] = []
        self.progress: tuple[float, str] | None = None

    def take(self) -> tuple[Any, list[dict[str, list]], tuple[float, str] | None]:
        with self.lock:
            taken = (self.sources, self.batches, self.progress)
            self.sources, self.batches, self.progress = None, [], None
        return taken


class RunsLoader(BackgroundLoader):
    """Reads the reports of a folder; ``started(sources)``, ``batch(columns)`` as they are
    read, then ``loaded(count)`` (or ``failed`` / ``cancelled``), all on the GUI thread."""

    started = Signal(object)
    batch = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.inbox = Inbox()
        self.timer = QTimer(self)
        self.timer.setInterval(DRAIN_MS)
        self.timer.timeout.connect(self.drain)
        # before anyone else hears of the end: what is still in the inbox goes first
        for ended in (self.loaded, self.failed, self.cancelled):
            ended.connect(self._ended)

    def open(self, path: Path) -> None:
        inbox = self.inbox = Inbox()
        self.timer.setInterval(DRAIN_MS)
        self.start(lambda progress, stopped: read_rows(path, inbox, stopped), path)
        self.timer.start()

    def drain(self) -> None:
        """Hand over what the worker has read since the last time."""
        sources, batches, progress = self.inbox.take()
        if sources is not None:
            self.started.emit(sources)
        if batches:
            merged = {key: [v for b in batches for v in b[key]] for key in batches[0]}
            self.batch.emit(merged)
        if progress is not None:
            self.progress.emit(*progress)

    def _ended(self, *_: object) -> None:
        self.timer.stop()
        if self.busy:  # a newer load is running: its inbox is not this one's
            return
        self.drain()


def read_rows(path: Path, inbox: Inbox, stopped: Callable[[], bool]) -> int:
    """The job: every report's row into ``inbox``, a batch at a time; returns how many."""
    from profiler_core.tables.build import iter_reports, reports_table
    from profiler_core.tables.sources import find_sources

    sources = find_sources([path])
    with inbox.lock:
        inbox.sources = sources
    total = len(sources.reports)
    rows: list[dict] = []
    indices: list[int] = []
    handed = time.monotonic()
    for index, row, _ in iter_reports(sources, ["reports"], stopped):
        rows.append(row)
        indices.append(index)
        now = time.monotonic()
        if index == 0 or now - handed >= BATCH_SECONDS or index == total - 1:
            batch = reports_table(sources, rows, indices).to_pydict()
            name = sources.reports[index].name
            with inbox.lock:
                inbox.batches.append(batch)
                inbox.progress = (
                    (index + 1) / total,
                    f"Reading {name} ({index + 1:,} of {total:,})",
                )
            rows, indices, handed = [], [], now
    return total


class RunsOpening(QObject):
    """The window's Runs side: its loader, the Runs page, and the reports it opens."""

    def __init__(self, window: WindowParts) -> None:
        super().__init__(window)
        self.window = window
        self.loader = RunsLoader(self)
        self.model: RunsModel | None = None
        self.loader.started.connect(self._on_started)
        self.loader.batch.connect(self._on_batch)
        self.loader.progress.connect(self._on_progress)
        self.loader.loaded.connect(self._on_loaded)
        self.loader.failed.connect(self._on_failed)
        self.loader.cancelled.connect(self._on_cancelled)
        window.cancel_button.clicked.connect(self.loader.cancel)
        self.view.open_requested.connect(self._open_reports)
        self._show_summary_next = False  # the reports picked here are being opened
        report_loader = getattr(window, "loader", None)  # the window's ReportLoader
        if report_loader is not None:
            report_loader.loaded.connect(self._show_summary)
            for ended in (report_loader.failed, report_loader.cancelled):
                ended.connect(self._forget_summary)

    @property
    def view(self) -> RunsView:
        return next(v for v in self.window.views if isinstance(v, RunsView))

    @staticmethod
    def claims(paths: list[str | Path]) -> bool:
        """One folder holding reports below it (or a sweep's), not a report itself."""
        return len(paths) == 1 and is_folder_of_reports(Path(paths[0]))

    def open(self, path: str | Path) -> None:
        path = Path(path)
        self.model = None
        self.loader.open(path)
        w = self.window
        w.progress.setValue(0)
        w.progress.show()
        w.cancel_button.show()
        w.statusBar().showMessage(f"Reading the reports in {path}…")
        self._opening = path

    def update_rail(self) -> None:
        """Keep the Runs page reachable while runs are shown without a report."""
        if self.model is None:
            return
        titles = [v.title for v in self.window.views]
        item = self.window.rail.item(1 + titles.index(self.view.title))
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEnabled)

    def _on_started(self, sources: Any) -> None:
        from profiler_core.tables.build import parameter_column

        types = sources.parameter_types()
        columns = [parameter_column(p) for p in sources.parameters]
        numeric = [parameter_column(p) for p in sources.parameters if types[p] != "string"]
        self.model = RunsModel(str(self._opening), columns, numeric)
        self.model.expected = len(sources.reports)
        self.view.show_runs(self.model)
        self.update_rail()
        self.window.show_view(self.view.title)
        self.window.settings.add_recent(self._opening)

    def _on_batch(self, batch: dict) -> None:
        started = time.perf_counter()
        self.view.add_rows(batch)
        # The page is redrawn at most a quarter of the time: more rows, fewer redraws.
        took_ms = (time.perf_counter() - started) * 1000
        self.loader.timer.setInterval(max(DRAIN_MS, int(4 * took_ms)))

    def _on_progress(self, fraction: float, text: str) -> None:
        self.window.progress.setValue(int(fraction * 1000))
        self.window.statusBar().showMessage(text)

    def _done(self) -> None:
        self.window.progress.hide()
        self.window.cancel_button.hide()

    def _on_loaded(self, count: int) -> None:
        self._done()
        text = self.model.progress_text() if self.model is not None else f"{count:,} reports"
        self.window.statusBar().showMessage(f"Read {text} in {self._opening}.")

    def _on_failed(self, path: str, message: str) -> None:
        self._done()
        self.window.statusBar().showMessage(f"Could not open {path}: see the message.")
        self.window.message_box = show_message(self.window, "Could not open the reports", message)

    def _on_cancelled(self) -> None:
        self._done()
        shown = f" ({self.model.progress_text()} shown)" if self.model is not None else ""
        self.window.statusBar().showMessage(f"Reading the reports was cancelled{shown}.", 10_000)

    def _open_reports(self, paths: list[str]) -> None:
        """One report opens; two are compared (the first picked is A). The Summary shows
        once they are open."""
        self._show_summary_next = True
        self.window.open_paths(paths)

    def _show_summary(self, _opened: object) -> None:
        if self._show_summary_next:
            self._show_summary_next = False
            self.window.show_view("Summary")

    def _forget_summary(self, *_: object) -> None:
        self._show_summary_next = False
