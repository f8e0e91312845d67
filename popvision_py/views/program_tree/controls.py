"""The Program Tree's controls row: section tabs, search with previous / next, expand and
collapse, and a note on what is shown (capped expansion, no execution profile)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QTabBar, QWidget

from popvision_py.viewmodels.program_lines import SECTIONS
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip

SEARCH_HELP = (
    "Find program nodes and program steps whose name contains this text (any case). Enter "
    "goes to the next match in program order, Shift+Enter to the previous one; the tree "
    "expands to each match."
)


class SearchBox(QLineEdit):
    """Enter asks for the next match, Shift+Enter for the previous one."""

    step = Signal(bool)  # backwards

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.step.emit(bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
            return
        super().keyPressEvent(event)


class NoteLabel(QLabel):
    """A note shown only while it says something (an empty one takes no room in the row)."""

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setVisible(bool(text))


class ProgramTreeControls(QWidget):
    """Widgets only; the view connects them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sections = QTabBar()
        for section in SECTIONS:
            self.sections.addTab(section)
        self.sections.setTabToolTip(0, "The engine programs (what Engine.run runs), as written.")
        self.sections.setTabToolTip(1, "Functions: program bodies that Call nodes run.")
        self.search = SearchBox()
        self.search.setPlaceholderText("Search names")
        self.search.setToolTip(plain_tooltip(SEARCH_HELP))
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(180)
        self.previous = QPushButton("◀ Previous")
        self.previous.setToolTip("The previous match in program order (Shift+Enter).")
        self.next = QPushButton("Next ▶")
        self.next.setToolTip("The next match in program order (Enter).")
        self.matches = QLabel()
        self.matches.setMinimumWidth(70)
        self.expand = QPushButton("Expand all")
        self.expand.setToolTip(
            "Expand the tree. On a huge tree only the first lines are expanded (the note "
            "says how many); expand the rest by hand."
        )
        self.collapse = QPushButton("Collapse all")
        self.collapse.setToolTip("Collapse every line.")
        self.note = NoteLabel()
        self.note.setWordWrap(True)
        self.note.hide()
        # a row that wraps: at 1024 px every control keeps its size, on two lines if need be
        row = FlowLayout(self)
        row.addWidget(self.sections)
        row.addSpacing(12)
        row.addWidget(group(self.search, self.previous, self.next, self.matches))
        row.addStretch()
        row.addWidget(self.expand)
        row.addWidget(self.collapse)
        row.addWidget(self.note)  # last: a note (capped expansion) takes a line of its own
