"""The Memory report's controls row: Select tile box and chart options, each explained on hover."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from popvision_py.viewmodels.memory import LAYOUT_HELP, Layout

SELECT_HELP = (
    "Tiles to show in the details below: comma-separated tiles and ranges, e.g. "
    "0,5,100-120. Press Enter to apply; empty selects none. Shift-click the chart to add tiles."
)


class MemoryControls(QWidget):
    """Widgets only; the view connects them to its view models."""

    selection_typed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.select_box = QLineEdit()
        self.select_box.setPlaceholderText("e.g. 0,5,100-120")
        self.select_box.setToolTip(SELECT_HELP)
        self.select_box.setClearButtonEnabled(True)
        self.select_box.setMinimumWidth(180)
        self.select_box.returnPressed.connect(self._typed)
        self.select_error = QLabel()
        self.select_error.setStyleSheet("color: #d03030")
        self.include_gaps = QCheckBox("Include gaps")
        self.include_gaps.setChecked(True)
        self.include_gaps.setToolTip(
            "Count alignment gaps and memory-region gaps in each tile's memory. Gaps are "
            "memory no variable or code uses, but the tile still needs it."
        )
        self.show_max = QCheckBox("Show max memory")
        self.show_max.setChecked(True)
        self.show_max.setToolTip(
            "Draw the memory each tile has as a dashed line: a bar above it does not fit."
        )
        self.sort = QCheckBox("Sort by memory")
        self.sort.setToolTip(
            "Order tiles from the most to the least memory (the x axis becomes the rank); "
            "tooltips still name each tile."
        )
        self.layout_box = QComboBox()
        for layout in Layout:
            self.layout_box.addItem(layout.value, layout)
            self.layout_box.setItemData(
                self.layout_box.count() - 1,
                LAYOUT_HELP[layout],
                role=3,  # Qt.ToolTipRole
            )
        self.layout_box.setToolTip(
            "By tile: a bar per tile. By IPU: a bar per IPU. Heat map: IPUs x tiles, coloured "
            "by memory, for many IPUs."
        )
        self.reset_zoom = QPushButton("Show all")
        self.reset_zoom.setToolTip("Zoom out to every tile (or double-click the chart).")
        select_label = QLabel("Select tile:")
        select_label.setToolTip(SELECT_HELP)
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for widget in (select_label, self.select_box, self.select_error):
            row.addWidget(widget)
        row.addStretch(1)
        for widget in (self.include_gaps, self.show_max, self.sort, QLabel("Layout:")):
            row.addWidget(widget)
        row.addWidget(self.layout_box)
        row.addWidget(self.reset_zoom)

    def _typed(self) -> None:
        self.selection_typed.emit(self.select_box.text())

    def layout_choice(self) -> Layout:
        return self.layout_box.currentData()
