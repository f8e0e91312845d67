"""The Execution Trace's Lightweight mode: every execution of each timed block (runs x
blocks) on one cycle axis per IPU, as Graph Analyser shows lightweight profiles, with a
Blocks tab of each block's executions and cycles. Shown only for reports with blocks
(``profiler.blocks.filter`` / ``profiler.programs.filter``); a report whose blocks section is
damaged says so here while the detailed trace still works.

``LightweightMode`` adds itself to the page: a Mode box in the controls row, its chart in the
chart area and its tab in the details, each shown while the mode is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, Qt, QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.lightweight_trace import LightweightTraceModel
from popvision_py.viewmodels.timeline import SpanBatch
from popvision_py.views.messages import message_label
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.table_model import (
    ColumnTableModel,
    make_table_view,
    size_columns_from_sample,
)
from popvision_py.views.timeline.plot import TimelinePlot
from popvision_py.views.typed_entry import read_range, typed_entry
from profiler_core.analysis.blocks import block_executions
from profiler_core.errors import ReportError

DETAILED, LIGHTWEIGHT = "Detailed", "Lightweight"
MODE_HELP = (
    "Detailed: the run's program steps as the engine modelled them (each compute set's last "
    "execution). Lightweight: every execution of each block timed by lightweight profiling "
    "(profiler.blocks.filter / profiler.programs.filter), in every kept run."
)
RANGE_HELP = "Show a range of cycles (or µs when the axis shows time), e.g. 1000-25000."
MAX_LANE_PX = 40  # rows stop growing here: a few blocks are rows, not the whole chart


@dataclass(frozen=True)
class LightweightReady:
    """What the page's worker computes for the mode: the model, or why it cannot be shown."""

    model: LightweightTraceModel | None
    problem: str = ""


def lightweight_ready(report: Any) -> LightweightReady | None:
    """The Lightweight mode's model of ``report`` (None when it has no blocks); a damaged
    blocks section is a problem to show, never an exception."""
    try:
        executions = block_executions(report)
    except ReportError as error:
        return LightweightReady(None, f"The lightweight profile cannot be shown.\n\n{error}")
    if executions is None:
        return None
    return LightweightReady(LightweightTraceModel(executions, float(report.target.clock_hz)))


class LightweightTrace(QWidget):
    """The mode's chart: axis and range controls over a timeline of every execution."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: LightweightTraceModel | None = None
        self.axis_box = QComboBox()
        self.axis_box.addItems(["Cycles", "Time"])
        self.axis_box.setToolTip(
            "The axis in cycles of the IPU's counter, or in time at its clock."
        )
        self.range_box, self.range_error = typed_entry(
            "e.g. 1000-25000", RANGE_HELP, self.show_range
        )
        self.show_all = QPushButton("Show all")
        self.show_all.setToolTip("Zoom out to every kept run (Home, or double-click the chart).")
        self.counts = QLabel()
        controls = QHBoxLayout()
        for widget in (QLabel("Axis:"), self.axis_box, QLabel("Range:"), self.range_box):
            controls.addWidget(widget)
        controls.addWidget(self.range_error)
        controls.addStretch(1)
        controls.addWidget(self.counts)
        controls.addWidget(self.show_all)
        self.plot = TimelinePlot(lambda *_: SpanBatch.empty())
        self.message = message_label()
        self.message.hide()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(controls)
        column.addWidget(self.plot, 1)
        column.addWidget(self.message, 1)
        self.axis_box.currentIndexChanged.connect(lambda _: self._apply_axis())
        self.show_all.clicked.connect(self.plot.show_all)
        self.plot.span_hovered.connect(self._on_span_hovered)

    def show_ready(self, ready: LightweightReady) -> None:
        self.model = ready.model
        shown = ready.model is not None
        self.plot.setVisible(shown)
        self.message.setVisible(not shown)
        self.message.setText(ready.problem)
        if ready.model is None:
            self.plot.set_lanes([], lambda *_: SpanBatch.empty(), (0.0, 1.0))
            self.counts.clear()
            return
        model = ready.model
        self.plot.set_lanes(model.lane_names(), model.spans, model.x_limits)
        self._fit_lanes()
        ex = model.executions
        self.counts.setText(
            f"{len(ex):,} executions of {len(ex.block_names):,} blocks in "
            f"{len(ex.run_names):,} run(s)"
        )
        self._apply_axis()

    def clear(self) -> None:
        self.show_ready(LightweightReady(None, ""))

    def _fit_lanes(self) -> None:
        """Every row shown, none taller than MAX_LANE_PX (the rest of the chart stays empty)."""
        lanes = len(self.plot.lane_axis.names)
        rows = max(lanes, 1, self.plot.view_box.height() / MAX_LANE_PX)
        self.plot.view_box.setLimits(yMin=0, yMax=rows)
        self.plot.view_box.setYRange(0, rows, padding=0)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self._fit_lanes)

    def _apply_axis(self) -> None:
        if self.model is not None and self.axis_box.currentText() == "Time":
            self.plot.time_axis.set_seconds(self.model.clock_hz, 0.0, "Time")
        else:
            self.plot.time_axis.set_cycles()
        self.plot.time_axis.picture = None
        self.plot.time_axis.update()

    def show_range(self, text: str) -> bool:
        typed = read_range(text, self.range_error)
        if self.model is None or typed is None:
            return False
        start, end = typed
        if self.axis_box.currentText() == "Time":
            start, end = (t * 1e-6 * self.model.clock_hz for t in (start, end))
        self.plot.set_x_range(start, end)
        return True

    def _on_span_hovered(self, index: int, scene_pos: QPointF) -> None:
        text = self.model.tooltip(index) if self.model is not None and index >= 0 else ""
        if not text:
            QToolTip.hideText()
            return
        pos = self.plot.mapToGlobal(self.plot.mapFromScene(scene_pos))
        QToolTip.showText(pos, plain_tooltip(text), self.plot)


class BlocksPanel(QWidget):
    """The Blocks tab: each block's executions and cycles, and the execution clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table_model = ColumnTableModel()
        self.table = make_table_view(self.table_model, sortable=True)
        self.selected = QLabel("Click an execution on the chart to see it here.")
        self.selected.setMinimumHeight(3 * self.selected.fontMetrics().lineSpacing() + 4)
        column = QVBoxLayout(self)
        column.addWidget(self.selected)
        column.addWidget(self.table, 1)

    def show_model(self, model: LightweightTraceModel | None) -> None:
        if model is None:
            self.table_model.set_table(self.table_model.table.__class__([]))
            return
        self.table_model.set_table(model.totals_table())
        size_columns_from_sample(self.table)


class LightweightMode:
    """The Lightweight mode of an Execution Trace page (``view``): its Mode box, chart and
    Blocks tab, shown while the mode is on; the page's own widgets while it is off."""

    def __init__(self, view: Any) -> None:
        self.view = view
        self.ready: LightweightReady | None = None
        self.box = QComboBox()
        self.box.addItems([DETAILED, LIGHTWEIGHT])
        self.box.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        self.box.setToolTip(plain_tooltip(MODE_HELP))
        self.label = QLabel("Mode:")
        self.label.setToolTip(self.box.toolTip())
        self.row = QWidget()  # kept at the left when the detailed controls beside it hide
        row = QHBoxLayout(self.row)
        row.setContentsMargins(0, 0, 8, 0)
        row.addWidget(self.label)
        row.addWidget(self.box)
        view.controls_layout.insertWidget(0, self.row, 0, Qt.AlignmentFlag.AlignLeft)
        self.trace = LightweightTrace()
        view.chart_layout.addWidget(self.trace, 1)
        self.panel = BlocksPanel()
        index = view.details.addTab(self.panel, "Blocks")
        view.details.setTabToolTip(index, "Each timed block: executions and cycles.")
        self.trace.plot.span_clicked.connect(self._on_clicked)
        self.box.currentTextChanged.connect(lambda _: self._apply())
        self.show(None, detailed=True)

    @property
    def on(self) -> bool:
        return self.box.currentText() == LIGHTWEIGHT and self.ready is not None

    def show(self, ready: LightweightReady | None, detailed: bool) -> None:
        """Offer the mode when the report has blocks (``ready``); ``detailed``: whether the
        report has a detailed trace too (else the mode is all there is)."""
        self.ready = ready
        offered = ready is not None
        self.row.setVisible(offered)
        self.label.setVisible(offered)
        self.box.setVisible(offered and detailed)
        self.box.blockSignals(True)
        self.box.setCurrentText(LIGHTWEIGHT if offered and not detailed else DETAILED)
        self.box.blockSignals(False)
        self.label.setText("Mode: Lightweight" if offered and not detailed else "Mode:")
        self.trace.show_ready(ready or LightweightReady(None, ""))
        self.panel.show_model(ready.model if ready is not None else None)
        self._apply()

    def _apply(self) -> None:
        on, view = self.on, self.view
        self.trace.setVisible(on)
        for widget in (view.control_bar, view.plot.parentWidget()):
            widget.setVisible(not on)
        if on:
            view.legend.setVisible(False)
        details = view.details  # its own tabs by widget: compare mode puts tabs before them
        for page in (view.summary, view.step_panel, view.tile_map):
            details.setTabVisible(details.indexOf(page), not on)
        tab = details.indexOf(self.panel)
        details.setTabVisible(tab, on)
        if on:
            details.setCurrentIndex(tab)
        elif details.currentIndex() == tab:
            details.setCurrentIndex(details.indexOf(view.summary))

    def set_mode(self, mode: str) -> None:
        self.box.setCurrentText(mode)

    def _on_clicked(self, index: int, _shift: bool) -> None:
        model = self.trace.model
        if model is None or not 0 <= index < len(model.last) or model.last.key[index] < 0:
            return
        self.panel.selected.setText(model.execution_text(int(model.last.key[index])))
        self.trace.plot.spans.set_highlight(model.last.key[index : index + 1])
