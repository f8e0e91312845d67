"""The run console: a dock at the bottom of the window streaming the child's stdout and
stderr from a ``ConsoleBuffer`` (bounded scrollback, ANSI stripped), with search, Stop,
and the run's state. The lines are a lazy list model over the buffer (only the rows on
screen are drawn) refreshed on a timer, never once per chunk, so a program printing
megabytes per second costs the window a row count update a few times a second."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.console_buffer import ConsoleBuffer
from popvision_py.views.plain_text import plain_tooltip

REFRESH_MS = 100
Index = QModelIndex | QPersistentModelIndex


class ConsoleLines(QAbstractListModel):
    """The buffer's kept lines as rows (read only when drawn)."""

    def __init__(self, buffer: ConsoleBuffer) -> None:
        super().__init__()
        self.buffer = buffer
        self.rows = 0  # rows the view knows of
        self.seen_total = 0  # buffer.total_lines at the last sync

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.rows

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not 0 <= index.row() < len(self.buffer.lines):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.buffer.lines[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole:  # a program's output may print markup
            return plain_tooltip(self.buffer.lines[index.row()])
        return None

    def sync(self) -> bool:
        """Tell the view what arrived since the last sync; True if anything did."""
        total, kept = self.buffer.total_lines, len(self.buffer.lines)
        new = total - self.seen_total
        if new <= 0 and kept == self.rows:
            return False
        if kept == self.rows + new:  # nothing dropped from the top: rows appended
            self.beginInsertRows(QModelIndex(), self.rows, kept - 1)
            self.rows = kept
            self.endInsertRows()
        else:  # the scrollback dropped lines: the rows shifted
            self.beginResetModel()
            self.rows = kept
            self.endResetModel()
        self.seen_total = total
        return True


class RunConsole(QDockWidget):
    """Shows ``buffer``; ``stop_requested`` when Stop is pressed."""

    stop_requested = Signal()

    def __init__(self, buffer: ConsoleBuffer, parent: QWidget | None = None) -> None:
        super().__init__("Run console", parent)
        self.setObjectName("run-console")
        self.buffer = buffer
        self._shown_total = 0  # buffer.total_lines already put in the text view
        body = QWidget()
        column = QVBoxLayout(body)
        column.setContentsMargins(4, 2, 4, 4)
        row = QHBoxLayout()
        self.state = QLabel("No run yet.")
        self.state.setToolTip("The program run, how long it has run, and how it ended")
        self.stop = QPushButton("Stop")
        self.stop.setToolTip("End the run: ask it to terminate, kill it after a grace period")
        self.stop.setEnabled(False)
        self.stop.clicked.connect(self.stop_requested)
        self.follow = QCheckBox("Follow")
        self.follow.setChecked(True)
        self.follow.setToolTip("Keep the newest output line in view")
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Search the output…")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setMaximumWidth(260)
        self.search_box.returnPressed.connect(self.find_next)
        self.matches = QLabel("")
        row.addWidget(self.state, 1)
        row.addWidget(self.search_box)
        row.addWidget(self.matches)
        row.addWidget(self.follow)
        row.addWidget(self.stop)
        column.addLayout(row)
        self.lines = ConsoleLines(buffer)
        self.text = QListView()
        self.text.setModel(self.lines)
        self.text.setUniformItemSizes(True)  # row heights are not measured one by one
        self.text.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.text.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        font = QFont("monospace")
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.text.setFont(font)
        self.text.setToolTip("The program's output (stdout and stderr); colours are stripped")
        column.addWidget(self.text, 1)
        self.setWidget(body)
        self.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.refresh)

    def start(self, first_line: str) -> None:
        """A new run: the buffer was cleared; ``first_line`` is its command line."""
        self.buffer.append(first_line + "\n")
        self.lines.beginResetModel()
        self.lines.rows = self.lines.seen_total = 0
        self.lines.endResetModel()
        self.refresh()
        self.stop.setEnabled(True)
        self.matches.setText("")
        self.timer.start()
        self.show()

    def finish(self, last_line: str) -> None:
        self.buffer.finish()
        self.buffer.append(last_line + "\n")
        self.refresh()
        self.timer.stop()
        self.stop.setEnabled(False)

    def refresh(self) -> None:
        """Show the lines completed since the last refresh, the newest in view if following."""
        bar = self.text.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        if self.lines.sync() and self.follow.isChecked() and at_bottom:
            self.text.scrollToBottom()

    def shown_text(self) -> str:
        """The lines the console holds (its scrollback)."""
        return self.buffer.text()

    def current_line(self) -> str:
        index = self.text.currentIndex()
        return str(self.lines.data(index)) if index.isValid() else ""

    def find_next(self) -> bool:
        """Go to the next line holding the search text (wrapping round); False if none."""
        needle = self.search_box.text()
        found = self.buffer.search(needle)
        self.matches.setText(f"{len(found):,} lines" if needle else "")
        if not found:
            return False
        self.refresh()
        current = self.text.currentIndex().row()
        row = next((r for r in found if r > current), found[0])
        index = self.lines.index(row, 0)
        self.text.setCurrentIndex(index)
        self.text.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.follow.setChecked(False)  # stay on the match while output goes on
        return True

    def set_state(self, text: str) -> None:
        self.state.setText(text)
