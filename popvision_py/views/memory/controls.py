"""The Memory report's controls row: Select tile box and chart options, each explained on hover."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QLabel, QPushButton, QWidget

from popvision_py.viewmodels.format import BYTE_UNITS
from popvision_py.viewmodels.memory import LAYOUT_HELP, HeatScale, Layout
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.typed_entry import typed_entry

SELECT_HELP = (
    "Tiles to show in the details below: comma-separated tiles and ranges, e.g. "
    "0,5,100-120. Press Enter to apply; empty selects none. Shift-click the chart to add tiles."
)


class MemoryControls(QWidget):
    """Widgets only; the view connects them to its view models."""

    selection_typed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.select_box, self.select_error = typed_entry(
            "e.g. 0,5,100-120", SELECT_HELP, self.selection_typed.emit
        )
        self.include_gaps = QCheckBox("Include gaps")
        self.include_gaps.setChecked(True)
        self.include_gaps.setToolTip(
            "Count alignment gaps and memory-region gaps in each tile's memory. Gaps are "
            "memory no variable or code uses, but the tile still needs it."
        )
        self.show_max = QCheckBox("Show max memory")
        self.show_max.setChecked(False)
        self.show_max.setToolTip(
            "Stretch the y axis up to the memory each tile has. Off, the axis fits the data: "
            "the tile limit is a dashed line when it is in range, else a label at the top "
            "says it is above."
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
                plain_tooltip(LAYOUT_HELP[layout]),
                role=Qt.ItemDataRole.ToolTipRole,
            )
        self.layout_box.setToolTip(
            "By tile: a bar per tile. By IPU: a bar per IPU. Heat map: IPUs x tiles, coloured "
            "by memory, for many IPUs. By memory region: interleaved and non-interleaved bytes "
            "of each tile."
        )
        self.heat_scale_box = QComboBox()
        for scale in HeatScale:
            self.heat_scale_box.addItem(scale.value, scale)
        self.heat_scale_box.setToolTip(
            "Heat map colours: from 0 to the tile limit (a tile at half its memory is the "
            "middle colour), or from 0 to the hottest tile. Both sides of a comparison share it."
        )
        for box in (self.layout_box, self.heat_scale_box):  # elide, so the row fits 1400 px
            box.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
            )
            box.setMinimumContentsLength(12)
        self.units_box = QComboBox()
        for units in BYTE_UNITS:
            self.units_box.addItem(units, units)
        self.units_box.setToolTip(
            "Units of the axis, tooltips and tables: KiB (1,024 bytes), kB (1,000 bytes) or bytes."
        )
        self.reset_zoom = QPushButton("Show all")
        self.reset_zoom.setToolTip("Zoom out to every tile (or double-click the chart).")
        select_label = QLabel("Select tile:")
        select_label.setToolTip(plain_tooltip(SELECT_HELP))
        # a row that wraps: at 1024 px every control keeps its size, on two lines if need be
        row = FlowLayout(self)
        row.addWidget(group(select_label, self.select_box, self.select_error))
        row.addStretch()
        for widget in (self.include_gaps, self.show_max, self.sort):
            row.addWidget(widget)
        row.addWidget(group(QLabel("Layout:"), self.layout_box))
        self.heat_scale_label = QLabel("Colours:")
        self.heat_scale_group = group(self.heat_scale_label, self.heat_scale_box)
        row.addWidget(self.heat_scale_group)
        row.addWidget(group(QLabel("Units:"), self.units_box))
        row.addWidget(self.reset_zoom)
        self.layout_box.currentIndexChanged.connect(lambda _: self._show_heat_scale())
        self._show_heat_scale()

    def _show_heat_scale(self) -> None:
        heat = self.layout_choice() is Layout.HEAT_MAP
        self.heat_scale_group.setVisible(heat)

    def heat_scale(self) -> HeatScale:
        return self.heat_scale_box.currentData()

    def units(self) -> str:
        return self.units_box.currentData()

    def layout_choice(self) -> Layout:
        return self.layout_box.currentData()
