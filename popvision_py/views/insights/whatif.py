"""The findings list's what-if: a "Try it" button per finding whose suggestion can be
re-planned, the engine's re-planning run off the GUI thread (a ``BackgroundLoader`` job, in
a child process) with progress and cancel, and its predictions shown under the finding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidgetItem,
    QWidget,
)

from popvision_py.app.loader import BackgroundLoader
from popvision_py.viewmodels.whatif import WhatIfViewModel
from popvision_py.views.plain_text import plain_tooltip
from profiler_core.insights import Finding, Insights
from profiler_core.insights.whatif import what_if

TRY_TIP = (
    "Re-plan this suggestion with the engine: each value tried is built and compiled from "
    "the report's serialized graph, and the best one's memory and cycles are shown."
)


class WhatIfBar(QWidget):
    """Progress of a running what-if, with its cancel button (hidden when idle)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel()
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel = QPushButton("Cancel")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.label, 1)
        row.addWidget(self.progress)
        row.addWidget(self.cancel)
        self.setVisible(False)

    def show_progress(self, fraction: float, text: str) -> None:
        self.setVisible(True)
        self.progress.setValue(int(1000 * fraction))
        self.label.setText(text)


class WhatIfRunner(QObject):
    """Runs one finding's what-if at a time in a worker; ``finished(item, model)`` on the
    GUI thread with a ``WhatIfViewModel`` (or ``failed(item, message)``)."""

    finished = Signal(object, object)
    failed = Signal(object, str)

    def __init__(self, bar: WhatIfBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bar = bar
        self.loader = BackgroundLoader(self)
        self.loader.progress.connect(bar.show_progress)
        self.loader.loaded.connect(self._loaded)
        self.loader.failed.connect(lambda _path, message: self._done(message))
        self.loader.cancelled.connect(lambda: self._done("cancelled"))
        bar.cancel.clicked.connect(self.loader.cancel)
        self.item: QTreeWidgetItem | None = None

    @property
    def busy(self) -> bool:
        return self.loader.busy

    def start(
        self, item: QTreeWidgetItem, report: object, found: Insights, finding: Finding
    ) -> None:
        self.item = item

        def job(progress: Callable[[float, str], None], stopped: Callable[[], bool]) -> object:
            def say(done: int, total: int, what: str) -> None:
                progress(done / max(total, 1), f"Re-planning {done + 1} of {total}: {what}")

            progress(0.0, "Starting the engine…")
            return WhatIfViewModel(what_if(report, found, say, stopped, only=finding))

        self.bar.show_progress(0.0, "Starting the engine…")
        self.loader.start(job, Path(str(getattr(report, "folder", "."))))

    def _loaded(self, model: object) -> None:
        item, self.item = self.item, None
        self.bar.setVisible(False)
        self.finished.emit(item, model)

    def _done(self, message: str) -> None:
        item, self.item = self.item, None
        self.bar.setVisible(False)
        self.failed.emit(item, message)


def show_predictions(item: QTreeWidgetItem, model: WhatIfViewModel) -> QTreeWidgetItem:
    """The what-if under its finding: the headline (bold), the report now, then each trial's
    values with their predicted figures; returns the headline item."""
    headline = QTreeWidgetItem([f"What-if: {model.headline()}", ""])
    font = QFont(headline.font(0))
    font.setBold(True)
    headline.setFont(0, font)
    headline.setToolTip(0, plain_tooltip(model.headline()))
    if model.now_line():
        headline.addChild(QTreeWidgetItem([model.now_line(), ""]))
    for choice in model.choices():
        for row in model.tried_rows(choice):
            mark = "▶ " if row.chosen else ""
            child = QTreeWidgetItem([f"{mark}{row.value}: {row.figures}", ""])
            child.setToolTip(0, plain_tooltip(model.sentence(choice) or row.figures))
            headline.addChild(child)
    item.insertChild(0, headline)
    item.setExpanded(True)
    headline.setExpanded(True)
    return headline
