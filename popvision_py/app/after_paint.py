"""The graph section, the program steps' costs and debug.cbor decoded (and checked) after the
window's first paint: no first page needs them, and decoding them beside that paint would
slow the paint. A damaged one is said as a damaged section is on opening; the other pages
keep working."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from popvision_py.app.loader import BackgroundLoader, decode_after_paint
from popvision_py.viewmodels.opened import OpenedReport
from profiler_core.errors import ReportError

LATEST_MS = 300  # decoded after the first paint, or after this when nothing paints


class AfterPaintDecoding(QObject):
    """Decodes the opened reports' graph sections, program steps' costs and debug.cbor in a
    worker once the window has painted.

    ``current()`` gives the reports the window shows now (a result for others is dropped);
    ``damaged(text)`` tells the user about the sections that could not be read.
    """

    def __init__(
        self,
        current: Callable[[], list[OpenedReport]],
        damaged: Callable[[str], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.current, self.damaged = current, damaged
        self.pending: list[OpenedReport] | None = None  # reports whose sections wait
        self.loader = BackgroundLoader(self)
        self.loader.loaded.connect(self._on_decoded)

    @property
    def busy(self) -> bool:
        return self.pending is not None or self.loader.busy

    def schedule(self, opened: list[OpenedReport]) -> None:
        """Decode ``opened``'s graph and debug.cbor after the next paint (or ``LATEST_MS``)."""
        self.pending = opened
        QTimer.singleShot(LATEST_MS, self, self.start)

    def painted(self) -> None:
        """The window has just painted: start what waits for that."""
        if self.pending is not None:
            self.start()

    def start(self) -> None:
        opened, self.pending = self.pending, None
        if opened is None or opened is not self.current():
            return

        def job(progress: object, stopped: Callable[[], bool]) -> tuple:
            return opened, decode_after_paint(opened, stopped, progress)

        self.loader.start(job, opened[0].folder)

    def cancel(self) -> None:
        self.loader.cancel()
        self.pending = None

    def wait(self, msecs: int = 10_000) -> None:
        self.loader.wait(msecs)

    def _on_decoded(
        self, result: tuple[list[OpenedReport], dict[int, dict[str, ReportError]]]
    ) -> None:
        decoded, errors = result
        opened = self.current()
        # the errors are of the reports decoded: others opened since (the same folder
        # again, read by a new reader) must not take a closed reader's errors as theirs
        if not errors or decoded is not opened:
            return
        for i, found in errors.items():
            opened[i].errors.update(found)
        # with the reason: a debug.cbor refused because the profile's header is damaged
        # says so, rather than hiding the header's message shown a moment before
        self.damaged(
            " ".join(
                f"{opened[i].damaged_summary()} {' '.join(str(e) for e in found.values())}"
                for i, found in errors.items()
            )
        )
