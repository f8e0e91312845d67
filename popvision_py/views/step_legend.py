"""A legend of program step colours (``viewmodels/step_colors.py``): one swatch per step class,
so the colours of the Program Tree's lines can be read without hovering."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QLabel, QWidget

from popvision_py.viewmodels.step_colors import STEP_CLASS_COLORS
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip

SWATCH_PX = 12


class StepClassLegend(QWidget):
    """ "Step colours: ■ Compute ■ Internal exchange ..." in one row."""

    def __init__(self, note: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        row = FlowLayout(self, spacing=12)  # wraps in a narrow window instead of widening it
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(QLabel("Step colours:"))
        self.swatches: dict[str, QLabel] = {}  # class label -> its swatch
        for step_class, color in STEP_CLASS_COLORS.items():
            swatch = QLabel()
            pixmap = QPixmap(SWATCH_PX, SWATCH_PX)
            pixmap.fill(QColor(color))
            swatch.setPixmap(pixmap)
            swatch.setToolTip(plain_tooltip(f"{step_class.value}: {color}"))
            row.addWidget(group(swatch, QLabel(step_class.value)))
            self.swatches[step_class.value] = swatch
        if note:
            row.addWidget(QLabel(note))
        self.setToolTip("What the colour before each line's name means.")
