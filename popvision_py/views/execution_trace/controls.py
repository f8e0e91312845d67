"""The Execution Trace's controls row: run, layout, BSP phases, tiles of IPUs, operation
grouping, cycles or time, and a typed range; each explained on hover. Widgets only."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QLabel,
    QMenu,
    QPushButton,
    QToolButton,
    QWidget,
)

from popvision_py.viewmodels.execution_trace import TraceLayout
from popvision_py.views.flow_layout import FlowLayout, group
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.typed_entry import typed_entry
from profiler_core.analysis.debug_groups import GROUPINGS

RANGE_HELP = (
    "Show a range of the run: two numbers such as 1000-25000 (cycles, or µs when the axis "
    "shows time), then Enter. On the chart: wheel or W/S (+/-) zooms, drag or A/D pans, "
    "Home or double-click shows all."
)


RUN_BOX_MAX = 460  # px


class TraceControls(QWidget):
    range_typed = Signal(str)
    tiles_toggled = Signal(int, bool)  # IPU, expanded

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.run_box = QComboBox()
        # sized to its runs' names, so "Run 0: name (cycles)" shows whole; past RUN_BOX_MAX
        # px a long name is elided (the list shows it whole) rather than widen the window
        self.run_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.run_box.setMaximumWidth(RUN_BOX_MAX)
        self.run_box.setToolTip(
            "The run shown: each execution of an engine program that was profiled "
            "(autoReport.executionProfileProgramRunCount runs of each)."
        )
        self.layout_box = QComboBox()
        for layout in TraceLayout:
            self.layout_box.addItem(layout.value, layout)
        self.layout_box.setToolTip(
            "Flat: one row of program steps per IPU. Flame: per IPU, the run, then the "
            "operation (debug context), then the program steps under it."
        )
        self.bsp = QCheckBox("BSP phases")
        self.bsp.setToolTip(
            "Split each IPU's steps into rows by bulk-synchronous phase: compute, sync, "
            "exchange (internal and global), stream copies and control."
        )
        self.tiles_button = QToolButton()
        self.tiles_button.setText("Tiles of IPU ▾")
        self.tiles_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.tiles_button.setToolTip(
            "Expand an IPU: a heat map of its tiles under its row, for compute steps. Colour "
            "is a tile's cycles over the step's slowest tile, so imbalance shows."
        )
        self.tiles_menu = QMenu(self.tiles_button)
        self.tiles_button.setMenu(self.tiles_menu)
        self.tile_actions: list[QAction] = []
        self.group_box = QComboBox()
        for grouping in GROUPINGS:
            self.group_box.addItem(grouping)
        self.group_box.setCurrentText("name")
        self.group_box.setToolTip(
            "What an operation is in the Flame layout: the op call's name (name: m4, "
            "linear0/add), the library op (op: poplin::matMul), the layer, or each debug "
            "context (context)."
        )
        self.axis_box = QComboBox()
        self.axis_box.addItems(["Cycles", "Time"])
        self.axis_box.setToolTip("The axis in cycles, or in time at the target's clock.")
        self.range_box, self.range_error = typed_entry(
            "e.g. 1000-25000", RANGE_HELP, self.range_typed.emit, width=110
        )
        self.show_all = QPushButton("Show all")
        self.show_all.setToolTip("Zoom out to the whole run (Home, or double-click the chart).")
        run_label = QLabel("Run:")
        run_label.setToolTip(self.run_box.toolTip())
        range_label = QLabel("Range:")
        range_label.setToolTip(plain_tooltip(RANGE_HELP))
        # a row that wraps: at 1024 px every control keeps its size, on two lines if need be
        row = FlowLayout(self)
        row.addWidget(group(run_label, self.run_box))
        row.addWidget(group(QLabel("Layout:"), self.layout_box))
        row.addWidget(self.bsp)
        row.addWidget(self.tiles_button)
        row.addWidget(group(QLabel("Operations by:"), self.group_box))
        row.addWidget(group(QLabel("Axis:"), self.axis_box))
        row.addWidget(group(range_label, self.range_box, self.range_error))
        row.addStretch()
        row.addWidget(self.show_all)

    def set_runs(self, labels: list[str], current: int) -> None:
        self.run_box.blockSignals(True)
        self.run_box.clear()
        self.run_box.addItems(labels)
        self.run_box.setCurrentIndex(current)
        self.run_box.setEnabled(len(labels) > 1)
        self.run_box.blockSignals(False)

    def set_ipus(self, count: int) -> None:
        self.tiles_menu.clear()
        self.tile_actions = []
        for ipu in range(count):
            action = self.tiles_menu.addAction(f"IPU {ipu}: show tiles")
            action.setCheckable(True)
            action.toggled.connect(lambda on, i=ipu: self.tiles_toggled.emit(i, on))
            self.tile_actions.append(action)

    def layout_choice(self) -> TraceLayout:
        return self.layout_box.currentData()
