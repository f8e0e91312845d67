"""A block with a title bar that folds its content away (Graph Analyser's summary blocks);
whoever owns it remembers the state (``toggled(title, open)``)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from popvision_py.views.plain_text import plain_tooltip


class CollapsibleBlock(QFrame):
    toggled = Signal(str, bool)  # title, open

    def __init__(self, title: str, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.content = content
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.header = QToolButton()
        self.header.setText(title)
        self.header.setCheckable(True)
        self.header.setChecked(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setArrowType(Qt.ArrowType.DownArrow)
        self.header.setAutoRaise(True)
        self.header.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.header.setToolTip(plain_tooltip(f"Show or hide {title}; the choice is remembered."))
        font = self.header.font()
        font.setBold(True)
        self.header.setFont(font)
        self.header.toggled.connect(self._on_toggled)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.header)
        layout.addWidget(content)

    @property
    def is_open(self) -> bool:
        return self.header.isChecked()

    def set_open(self, open_: bool) -> None:
        self.header.setChecked(open_)

    def _on_toggled(self, open_: bool) -> None:
        self.header.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.content.setVisible(open_)
        self.toggled.emit(self.title, open_)
