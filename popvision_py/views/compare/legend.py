"""The one A/B legend and banner of compare mode: which report is A and which is B, in the
colours every view draws them with, and notes such as "the targets differ"."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import A_COLOR, B_COLOR, ComparePair
from popvision_py.views.plain_text import escape, plain_tooltip, rich_label


def side_html(letter: str, name: str, color: str, more: str = "") -> str:
    """``■ A: name, more`` as rich text: the square in the side's colour, the words escaped
    (a label showing it needs ``Qt.RichText``, else labels are made plain)."""
    words = f"{letter}: {name}" + (f", {more}" if more else "")
    return f'<span style="color:{color}; font-size:14pt">■</span> {escape(words)}'


class CompareLegend(QWidget):
    """``■ A: name  ■ B: name`` over a banner of notes (hidden when there is none)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.a_label = rich_label()
        self.b_label = rich_label()
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setObjectName("compare-banner")
        self.banner.setStyleSheet(
            "QLabel#compare-banner { background: rgba(214, 51, 132, 40); padding: 4px 8px; "
            "border-radius: 3px; }"
        )
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.a_label)
        row.addSpacing(16)
        row.addWidget(self.b_label)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 2)
        layout.setSpacing(2)
        layout.addLayout(row)
        layout.addWidget(self.banner)
        self.names: tuple[str, str] = ("", "")
        self.hide()

    def show_pair(self, pair: ComparePair | None, problem: str = "") -> None:
        """Name A and B; ``problem`` (why one side is not shown) joins the notes."""
        if pair is None:
            self.names = ("", "")
            self.hide()
            return
        self.names = pair.names
        a, b = pair.names
        self.a_label.setText(side_html("A", a, A_COLOR))
        self.b_label.setText(side_html("B", b, B_COLOR))
        self.a_label.setToolTip(plain_tooltip(f"Report A, the baseline: {pair.a.folder}"))
        self.b_label.setToolTip(
            plain_tooltip(f"Report B, compared with A (differences are B - A): {pair.b.folder}")
        )
        notes = pair.notes() + ([problem] if problem else [])
        self.banner.setText(" ".join(notes))
        self.banner.setVisible(bool(notes))
        self.show()
