"""The Runs page's controls: which reports to show, what the scatter's axes and colours are,
and Open / Compare for the reports picked."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QWidget

from popvision_py.viewmodels.runs import SHOW_CHOICES
from popvision_py.views.plain_text import plain_tooltip


def _combo(tip: str) -> QComboBox:
    combo = QComboBox()
    combo.setToolTip(plain_tooltip(tip))
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
    return combo


class RunsControls(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.show_choice = _combo("Show every report, or only those that fit, do not fit, or "
                                  "have no report to show")  # fmt: skip
        self.show_choice.addItems(SHOW_CHOICES)
        self.x_choice = _combo("What the scatter's horizontal axis shows")
        self.y_choice = _combo("What the scatter's vertical axis and the line over runs show")
        self.color_choice = _combo("What the points' colours tell apart: fits / does not fit, "
                                   "or each value of a sweep parameter")  # fmt: skip
        self.open_button = QPushButton("Open report")
        self.open_button.setToolTip("Open the picked report (or double-click its row)")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Compare the two picked reports (Ctrl+click a second)")
        self.loaded = QLabel()
        self.loaded.setToolTip("Reports read so far; the table fills as they are read")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for label, widget in (("Show", self.show_choice), ("x", self.x_choice),
                              ("y", self.y_choice), ("Colour", self.color_choice)):  # fmt: skip
            row.addWidget(QLabel(label))
            row.addWidget(widget)
        row.addSpacing(12)
        row.addWidget(self.open_button)
        row.addWidget(self.compare_button)
        row.addStretch(1)
        row.addWidget(self.loaded)

    def set_choices(self, combo: QComboBox, choices: list[tuple[str, str]], current: str) -> None:
        """Fill ``combo`` with (key, label) choices, ``current`` chosen when it is one."""
        combo.blockSignals(True)
        combo.clear()
        for key, label in choices:
            combo.addItem(label, key)
        index = combo.findData(current)
        combo.setCurrentIndex(max(index, 0))
        combo.blockSignals(False)
