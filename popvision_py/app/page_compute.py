"""A page's first show off the GUI thread: its view model (``ReportView.compute``) is made by a
``BackgroundLoader`` worker while the page says "Computing…", and its widgets are built on the
GUI thread from the ready view model when it arrives.

One ``PageComputer`` per window, one loader per page, so a page keeps computing while the user
looks at another. Results for reports no longer shown are dropped (``cancel_all``). A compute
reads only decoded report columns (``ReportLoader`` decodes every profile.pop section and the
header before the window sees a report), never the file, so closing the report meanwhile is safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject

from popvision_py.app.loader import BackgroundLoader
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.base import ReportView


@dataclass(frozen=True)
class ComputeFailure:
    """A compute that raised: the page shows ``text`` in its place (as a build that raised)."""

    error: BaseException


@dataclass(frozen=True)
class _Job:
    first: OpenedReport
    other: OpenedReport | None


Arrived = Callable[[ReportView, OpenedReport, OpenedReport | None, object], None]


class PageComputer(QObject):
    """Runs pages' ``compute`` in workers; ``arrived(view, first, other, result)`` is called on
    the GUI thread with the view model, or a ``ComputeFailure``, for the reports still shown."""

    def __init__(self, arrived: Arrived, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._arrived = arrived
        self._loaders: dict[str, BackgroundLoader] = {}
        self._jobs: dict[str, _Job] = {}

    def computing(self, view: ReportView) -> bool:
        return view.title in self._jobs

    @property
    def busy(self) -> bool:
        """Some page's view model is still being computed."""
        return bool(self._jobs)

    def start(self, view: ReportView, first: OpenedReport, other: OpenedReport | None) -> None:
        """Compute ``view``'s view model for the reports in a worker (if not already)."""
        job = self._jobs.get(view.title)
        if job is not None and job.first is first and job.other is other:
            return
        loader = self._loaders.get(view.title)
        if loader is None:
            loader = BackgroundLoader(self)
            loader.loaded.connect(lambda result, v=view: self._finish(v, result))
            self._loaders[view.title] = loader
        self._jobs[view.title] = _Job(first, other)

        def compute(_progress: object, _stopped: object) -> object:
            try:
                return view.compute(first, other)  # Qt-free: reads no widget
            except Exception as error:  # shown as the page's failure, as a build's would be
                return ComputeFailure(error)

        view.show_computing(f"Computing {view.title} for {first.name}…")
        loader.start(compute, Path(first.folder))

    def cancel(self, view: ReportView) -> None:
        """Forget ``view``'s compute (its result will be dropped)."""
        if self._jobs.pop(view.title, None) is not None:
            self._loaders[view.title].cancel()

    def cancel_all(self) -> None:
        """The reports were closed or replaced: drop every compute under way."""
        for title in list(self._jobs):
            self._jobs.pop(title)
            self._loaders[title].cancel()

    def wait(self, msecs: int = 10_000) -> None:
        for loader in self._loaders.values():
            loader.wait(msecs)

    def _finish(self, view: ReportView, result: object) -> None:
        job = self._jobs.pop(view.title, None)
        if job is None:  # cancelled after it finished: the reports are no longer shown
            return
        self._arrived(view, job.first, job.other, result)
