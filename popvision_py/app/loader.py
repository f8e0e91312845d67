"""Opening reports and traces off the GUI thread, with progress and cancel.

A ``BackgroundLoader`` runs one job at a time in a worker of its own thread pool and reports
back through queued signals: ``progress(fraction, text)``, then exactly one of
``loaded(result)``, ``failed(path, message)`` or ``cancelled()``. ``ReportLoader`` opens
reports (two load one after the other in the same worker to compare); ``TraceLoader`` (in
``trace_loader.py``) opens host traces.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from popvision_py.viewmodels.opened import AFTER_PAINT, OpenedReport
from popvision_py.viewmodels.summary import summary_sections
from profiler_core.errors import LoadCancelledError, RemoteError, ReportError
from profiler_core.remote import RemoteReport, is_remote, open_source, source_of
from profiler_core.report import SECTIONS

log = logging.getLogger(__name__)

# What opening decodes (and checks) before the window shows the report: what the Summary
# shows. The graph's columns (a variable's name, size and tile regions: two thirds of a big
# profile.pop), the program steps' costs (cycles per IPU, exchanges and compute per tile) and
# the debug contexts (debug.cbor) are decoded by a worker after the first paint
# (decode_after_paint): no first page needs them, and the pages that do wait for that decode
# or do it themselves.
AFTER_PAINT_SECTIONS = (*AFTER_PAINT, "debug")
FIRST_SECTIONS = (
    *(s for s in SECTIONS if s not in AFTER_PAINT_SECTIONS),
    "graph_counts",  # what the Summary shows of the graph (counted from it before 1.3)
    "program_steps",  # and of the programs (checked apart from their costs since 1.4)
)

Progress = Callable[[float, str], None]
Job = Callable[[Progress, Callable[[], bool]], object]
"""``job(progress, stopped)``: the work; raises LoadCancelledError when ``stopped()``."""


class _Signals(QObject):
    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()


class _Task(QRunnable):
    def __init__(
        self,
        job: Job,
        path: Path | str,
        signals: _Signals,
        stop: threading.Event,
        discard: Callable,
    ) -> None:
        super().__init__()
        self.job, self.path, self.signals, self.stop = job, path, signals, stop
        self.discard = discard
        self.setAutoDelete(True)

    def run(self) -> None:
        try:
            self._run()
        finally:
            # PySide keeps a finished runnable's wrapper: let go of the job (and the reports
            # and pages its closure holds) and the rest, so a closed window's data is freed.
            vars(self).clear()

    def _run(self) -> None:
        try:
            result = self.job(self.signals.progress.emit, self.stop.is_set)
        except LoadCancelledError:
            self.signals.cancelled.emit()
        except ReportError as error:
            self.signals.failed.emit(str(error.path or self.path), str(error))
        except Exception as error:  # a reader bug must not take the window down
            self.signals.failed.emit(
                str(self.path),
                f"{self.path}: could not be opened ({type(error).__name__}: {error})",
            )
        else:
            self.signals.loaded.emit(result)


class BackgroundLoader(QObject):
    """One job at a time; ``start`` while busy cancels the earlier job first."""

    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str, str)  # path, message naming the file and the reason
    cancelled = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(2)
        self._stop: threading.Event | None = None
        self._signals: _Signals | None = None

    @property
    def busy(self) -> bool:
        return self._signals is not None

    def discard(self, result: object) -> None:
        """Release a result nobody will see (it finished although cancelled)."""

    def start(self, job: Job, path: Path | str) -> None:
        self._abandon()
        stop = threading.Event()
        signals = _Signals()
        signals.progress.connect(self.progress)
        signals.loaded.connect(lambda result: self._finish(signals, self.loaded, result))
        signals.failed.connect(lambda p, m: self._finish(signals, self.failed, p, m))
        signals.cancelled.connect(lambda: self._finish(signals, self.cancelled))
        self._stop, self._signals = stop, signals
        self.pool.start(_Task(job, path, signals, stop, self.discard))

    def cancel(self) -> None:
        """Ask the running job to stop; ``cancelled`` follows when it has."""
        if self._stop is not None:
            self._stop.set()

    def _abandon(self) -> None:
        self.cancel()
        self._signals = self._stop = None  # the earlier task's late signals are ignored

    def _finish(self, signals: _Signals, signal: Signal, *args: object) -> None:
        # The job's last signal: its signals object goes. Its connections hold the lambdas
        # above, which hold it and this loader -- a cycle through Qt that Python's collector
        # cannot see, so each job kept its window's pages alive after the window closed.
        signals.deleteLater()
        if not shiboken6.isValid(self):  # its window was closed and deleted while the job ran
            return
        stopped = self._stop is not None and self._stop.is_set()
        if signal is self.loaded and (signals is not self._signals or stopped):
            self.discard(args[0])
            signal, args = self.cancelled, ()
        if signals is not self._signals:
            return
        self._signals = self._stop = None
        signal.emit(*args)

    def wait(self, msecs: int = 60_000) -> bool:
        return self.pool.waitForDone(msecs)


class ReportLoader(BackgroundLoader):
    """Opens one report, or two to compare; ``loaded`` carries ``list[OpenedReport]``."""

    def open(self, paths: list[str | Path]) -> None:
        """Open report folders, or ``ssh://`` addresses of folders on another machine."""
        paths = [source_of(p) for p in paths]
        self.start(lambda progress, stopped: _load_reports(paths, progress, stopped), paths[0])

    def discard(self, result: object) -> None:
        _close(result)  # type: ignore[arg-type]


def _load_reports(paths: list[str | Path], progress: Progress, stopped: Callable[[], bool]) -> list:
    opened: list[OpenedReport] = []
    try:
        for i, path in enumerate(paths):
            try:
                opened.append(_load(path, i, len(paths), progress, stopped))
            except ReportError as error:
                if len(paths) < 2:
                    raise
                # A comparison says which side could not be read.
                side = f"report {'AB'[i]} of the comparison"
                if isinstance(error, RemoteError):  # named by its ssh:// address
                    raise RemoteError(error.url, f"{side}: {error.problem}") from error
                raise ReportError(error.path or path, f"{side}: {error.problem}") from error
    except BaseException:
        _close(opened)
        raise
    return opened


def _load(
    path: str | Path, index: int, count: int, progress: Progress, stopped: Callable[[], bool]
) -> OpenedReport:
    started = time.perf_counter()

    name = str(path).rstrip("/").rsplit("/", 1)[-1]
    fetched = 0.5 if is_remote(path) else 0.0  # of the bar: fetching a remote profile.pop

    def section_progress(fraction: float, section: str) -> None:
        share = fetched + (1 - fetched) * fraction
        progress((index + share) / count, f"Opening {name}: {section}")

    def fetch_progress(fraction: float, text: str) -> None:
        progress((index + fetched * fraction) / count, text)

    report = open_source(path, fetch_progress, stopped)
    try:
        errors = report.load(FIRST_SECTIONS, section_progress, stopped)
        # The header too, so nothing reads profile.pop after this: pages compute their view
        # models in workers from decoded columns (page_compute.py), even while it is closed.
        report.section_error("header")
    except BaseException:
        report.close()
        raise
    opened = OpenedReport(report, errors)
    try:
        opened.summary = summary_sections(opened)  # the first page, ready to be shown
    except Exception:  # the Summary page makes it again, and shows why it cannot
        log.exception("the summary of %s", path)
    opened.seconds_to_load = time.perf_counter() - started
    return opened


def decode_after_paint(
    opened: list[OpenedReport], stopped: Callable[[], bool], progress: Progress | None = None
) -> dict[int, dict[str, ReportError]]:
    """Decode each report's graph section, program steps' costs and debug.cbor (after the
    first paint: no first page needs them; a report on another machine fetches its
    debug.cbor here, with ``progress``); returns the errors of damaged ones by position
    in ``opened``."""
    errors: dict[int, dict[str, ReportError]] = {}
    for i, o in enumerate(opened):
        if isinstance(o.report, RemoteReport):
            o.report.fetch_debug(progress, stopped)
        for section in AFTER_PAINT_SECTIONS:
            if section == "debug" and o.report.debug_path is None:
                continue
            if section == "programs" and "program_steps" in o.errors:
                continue  # said on opening: the steps are part of the section
            if stopped():
                raise LoadCancelledError(o.folder, f"closed before its {section} was read")
            error = o.report.section_error(section)
            if error is not None:
                errors.setdefault(i, {})[section] = error
    return errors


def _close(opened: list[OpenedReport]) -> None:
    for o in opened:
        o.report.close()
