"""The start page: open or compare reports (here or on another machine over SSH), or pick
one of the Recent list: reports, traces and comparisons."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.recent import RecentEntry
from popvision_py.views.plain_text import plain_tooltip

MAX_RECENT_ROWS = 15


class StartPage(QWidget):
    """Buttons for the toolbar's first actions and the recent reports list."""

    open_requested = Signal()
    remote_requested = Signal()
    compare_requested = Signal()
    recent_chosen = Signal(str)  # an entry of the Recent list: a source, or "A\tB"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        title = QLabel("PopVision-py Graph Analyser")
        font = title.font()
        font.setPointSize(20)
        font.setBold(True)
        title.setFont(font)
        subtitle = QLabel(
            "Open a report folder written with autoReport (profile.pop and debug.cbor) to "
            "see its summary, memory per tile and more, here or on another machine over SSH. "
            "You can also drop a folder here."
        )
        subtitle.setWordWrap(True)
        self.open_button = QPushButton("Open a report…")
        self.open_button.setToolTip("Open a report folder, or the profile.pop inside one (Ctrl+O).")
        self.open_button.clicked.connect(self.open_requested)
        self.remote_button = QPushButton("Open a remote report…")
        self.remote_button.setToolTip(
            "Open a report on another machine over SSH (ssh://user@host/path): its files are "
            "fetched as pages need them and kept in a local cache."
        )
        self.remote_button.clicked.connect(self.remote_requested)
        self.compare_button = QPushButton("Compare two reports…")
        self.compare_button.setToolTip(
            "Open two reports side by side, e.g. before and after a change."
        )
        self.compare_button.clicked.connect(self.compare_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.remote_button)
        buttons.addWidget(self.compare_button)
        buttons.addStretch(1)
        recent_title = QLabel("Recent")
        bold = recent_title.font()
        bold.setBold(True)
        recent_title.setFont(bold)
        self.recent = QListWidget()
        self.recent.setToolTip("Click a report, trace or comparison to open it again.")
        self.recent.itemActivated.connect(self._chosen)
        self.recent.itemClicked.connect(self._chosen)
        self.empty = QLabel("No recent reports yet.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(48, 36, 48, 36)
        layout.addWidget(title)
        layout.addWidget(subtitle)
        layout.addSpacing(12)
        layout.addLayout(buttons)
        layout.addWidget(recent_title)
        layout.addWidget(self.empty)
        layout.addWidget(self.recent)
        layout.addStretch(1)  # the page ends under its last row, not in an empty box

    def set_recent(self, entries: list[RecentEntry]) -> None:
        self.recent.clear()
        for entry in entries:
            item = QListWidgetItem(entry.label)
            item.setData(Qt.ItemDataRole.UserRole, entry.text)
            item.setToolTip(plain_tooltip(entry.tooltip))
            if entry.missing:
                item.setForeground(self.palette().placeholderText())
            self.recent.addItem(item)
        self.empty.setVisible(not entries)
        self.recent.setVisible(bool(entries))
        self._fit_recent()

    def _fit_recent(self) -> None:
        """As tall as its rows (up to MAX_RECENT_ROWS, then it scrolls)."""
        rows = min(max(self.recent.count(), 1), MAX_RECENT_ROWS)
        row = self.recent.sizeHintForRow(0) if self.recent.count() else 20
        self.recent.setFixedHeight(rows * max(row, 1) + 2 * self.recent.frameWidth() + 4)

    def _chosen(self, item: QListWidgetItem) -> None:
        self.recent_chosen.emit(item.data(Qt.ItemDataRole.UserRole))
