"""Opening reports off the GUI thread, with progress and cancel.

A ``ReportLoader`` runs ``open_report`` and ``Report.load`` in a worker of its own thread
pool and reports back through queued signals: ``progress(fraction, text)``, then exactly one
of ``loaded(list[OpenedReport])``, ``failed(path, message)`` or ``cancelled()``. Two paths
(compare) load one after the other in the same worker.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from popvision_py.viewmodels.opened import OpenedReport
from profiler_core.errors import LoadCancelledError, ReportError
from profiler_core.report import SECTIONS, open_report


class _Signals(QObject):
    progress = Signal(float, str)
    loaded = Signal(object)
    failed = Signal(str, str)
    cancelled = Signal()


class _LoadTask(QRunnable):
    def __init__(self, paths: list[Path], signals: _Signals, stop: threading.Event) -> None:
        super().__init__()
        self.paths, self.signals, self.stop = paths, signals, stop
        self.setAutoDelete(True)

    def run(self) -> None:
        opened: list[OpenedReport] = []
        current = self.paths[0]
        try:
            for i, path in enumerate(self.paths):
                current = path
                opened.append(self._load(path, i, len(self.paths)))
        except LoadCancelledError:
            _close(opened)
            self.signals.cancelled.emit()
        except ReportError as error:
            _close(opened)
            self.signals.failed.emit(str(error.path or current), str(error))
        except Exception as error:  # a reader bug must not take the window down
            _close(opened)
            self.signals.failed.emit(
                str(current), f"{current}: could not be opened ({type(error).__name__}: {error})"
            )
        else:
            self.signals.loaded.emit(opened)

    def _load(self, path: Path, index: int, count: int) -> OpenedReport:
        started = time.perf_counter()

        def progress(fraction: float, section: str) -> None:
            overall = (index + fraction) / count
            self.signals.progress.emit(overall, f"Opening {path.name}: {section}")

        report = open_report(path, progress, self.stop.is_set)
        try:
            errors = report.load(SECTIONS, progress, self.stop.is_set)
        except BaseException:
            report.close()
            raise
        return OpenedReport(report, errors, time.perf_counter() - started)


def _close(opened: list[OpenedReport]) -> None:
    for o in opened:
        o.report.close()


class ReportLoader(QObject):
    """One load at a time; ``open`` while busy cancels the earlier load first."""

    progress = Signal(float, str)
    loaded = Signal(object)  # list[OpenedReport]
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

    def open(self, paths: list[str | Path]) -> None:
        self._abandon()
        stop = threading.Event()
        signals = _Signals()
        signals.progress.connect(self.progress)
        signals.loaded.connect(lambda opened: self._finish(signals, self.loaded, opened))
        signals.failed.connect(lambda p, m: self._finish(signals, self.failed, p, m))
        signals.cancelled.connect(lambda: self._finish(signals, self.cancelled))
        self._stop, self._signals = stop, signals
        self.pool.start(_LoadTask([Path(p) for p in paths], signals, stop))

    def cancel(self) -> None:
        """Ask the running load to stop; ``cancelled`` follows when it has."""
        if self._stop is not None:
            self._stop.set()

    def _abandon(self) -> None:
        self.cancel()
        self._signals = self._stop = None  # the earlier task's late signals are ignored

    def _finish(self, signals: _Signals, signal: Signal, *args: object) -> None:
        stopped = self._stop is not None and self._stop.is_set()
        if signal is self.loaded and (signals is not self._signals or stopped):
            _close(args[0])  # type: ignore[arg-type]  # finished although cancelled
            signal, args = self.cancelled, ()
        if signals is not self._signals:
            return
        self._signals = self._stop = None
        signal.emit(*args)

    def wait(self, msecs: int = 60_000) -> bool:
        return self.pool.waitForDone(msecs)
