"""The run console: a dock at the bottom of the window streaming the child's stdout and
stderr from a ``ConsoleBuffer`` (bounded scrollback, ANSI stripped), with search, Stop,
and the run's state. It repaints on a timer, never once per chunk, so a program printing
megabytes per second costs the window a few appends a second."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFont, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.console_buffer import ConsoleBuffer

REFRESH_MS = 100


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
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(buffer.max_lines)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
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
        self.text.clear()
        self._shown_total = 0
        self.text.appendPlainText(first_line)
        self.stop.setEnabled(True)
        self.matches.setText("")
        self.timer.start()
        self.show()

    def finish(self) -> None:
        self.buffer.finish()
        self.refresh()
        self.timer.stop()
        self.stop.setEnabled(False)

    def refresh(self) -> None:
        """Append the lines completed since the last refresh (all of them if more came than
        the scrollback keeps)."""
        new = self.buffer.total_lines - self._shown_total
        if new <= 0:
            return
        lines = list(self.buffer.lines)[-min(new, len(self.buffer.lines)) :]
        if new > len(self.buffer.lines):
            lines.insert(0, f"… {new - len(lines):,} lines dropped (scrollback keeps "
                         f"{self.buffer.max_lines:,}) …")  # fmt: skip
        self._shown_total = self.buffer.total_lines
        bar = self.text.verticalScrollBar()
        at_bottom = bar.value() >= bar.maximum() - 2
        self.text.appendPlainText("\n".join(lines))
        if self.follow.isChecked() and at_bottom:
            bar.setValue(bar.maximum())

    def shown_text(self) -> str:
        return self.text.toPlainText()

    def find_next(self) -> bool:
        """Select the next line holding the search text (wrapping round); False if none."""
        needle = self.search_box.text()
        count = len(self.buffer.search(needle))
        self.matches.setText(f"{count:,} lines" if needle else "")
        if not needle or not count:
            return False
        if self.text.find(needle):
            return True
        self.text.moveCursor(QTextCursor.MoveOperation.Start)  # wrap round
        return self.text.find(needle, QTextDocument.FindFlag(0))

    def set_state(self, text: str) -> None:
        self.state.setText(text)
