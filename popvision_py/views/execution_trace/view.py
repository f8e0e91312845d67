"""The Execution Trace page: each IPU's program steps of a run on the shared timeline (Flat or
Flame, BSP phase rows, tile heat maps of expanded IPUs), a Summary of cycles by kind for the
run and the visible range, and the Details of the selected step.

It writes the user's picks to ``opened.selection`` (run, steps, operation) and follows it:
steps picked in other views are outlined, and the trace zooms to the current one if hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollBar, QWidget

from popvision_py.viewmodels.compare import ComparePair, pair_of
from popvision_py.viewmodels.compare_tables import CompareSpec, execution_specs
from popvision_py.viewmodels.execution_trace import ExecutionTraceModel, LaneRole
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.selection import ReportSelection
from popvision_py.viewmodels.step_colors import MERGED_COLOR
from popvision_py.viewmodels.tile_map_metrics import STEP_CYCLES, TOTAL
from popvision_py.viewmodels.timeline import SpanBatch
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.compare.stacked_trace import StackedTraces
from popvision_py.views.execution_trace.controls import TraceControls
from popvision_py.views.execution_trace.heatmap_item import TileHeatItem, heat_legend_pixmap
from popvision_py.views.execution_trace.lightweight import (
    LightweightMode,
    LightweightReady,
    lightweight_ready,
)
from popvision_py.views.execution_trace.panels import DetailsPanel, SummaryPanel
from popvision_py.views.execution_trace.picking import TracePicking
from popvision_py.views.messages import message_label
from popvision_py.views.tile_map.widget import TileMapWidget
from popvision_py.views.timeline.plot import TimelinePlot
from popvision_py.views.typed_entry import read_range
from profiler_core.analysis.execution import CycleBreakdown, cycle_breakdown, cycles_in_range
from profiler_core.analysis.execution_summary import ExecutionSummary, execution_summary
from profiler_core.errors import ReportError

MIN_LANE_PX = 22  # below this lanes scroll instead of shrinking
FIRST_PAINT_PX = 1200  # about the trace's width in a full-screen window
MAX_LANE_PX = 64  # above this lanes stop growing: one IPU is a row, not the whole chart
NOT_RUN = (
    "This report was compiled but its program was not run with execution profiling, so "
    "there is no execution trace.\n\nRun the program with autoReport.outputExecutionProfile "
    '(or autoReport.all) set to "true" in POPLAR_ENGINE_OPTIONS to record one.'
)
NOT_RUN_OOM = (
    "This report was compiled with debug.allowOutOfMemory but did not fit in tile memory, so "
    "the program was never run and there is no execution trace.\n\nFix the out-of-memory "
    "tiles (see the Memory report), then run the program with "
    'autoReport.outputExecutionProfile (or autoReport.all) set to "true".'
)


class ExecutionTraceView(TracePicking, ChartDetailsView):
    title = "Execution Trace"
    rail_help = (
        "Each run's program steps on a timeline per IPU, coloured by kind (compute, "
        "exchange, sync, stream copy), with the cycles by kind and the tile balance of a step."
    )
    needs = ("target", "graph", "programs", "execution")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: ExecutionTraceModel | None = None
        self._selection: ReportSelection | None = None  # the selection followed
        self.control_bar = TraceControls()
        self.controls_layout.addWidget(self.control_bar)
        self.plot = TimelinePlot(lambda *_: _empty())
        self.heat = TileHeatItem(self._heat_source)
        self.plot.addItem(self.heat)
        self.scroll = QScrollBar()
        self.scroll.setToolTip("Scroll the IPUs when their rows do not all fit.")
        row = QWidget()
        row_layout = QHBoxLayout(row)
        row_layout.setContentsMargins(0, 0, 0, 0)
        row_layout.addWidget(self.plot, 1)
        row_layout.addWidget(self.scroll)
        self.legend = _heat_legend()
        self.chart_layout.addWidget(self.legend)
        self.chart_layout.addWidget(row, 1)
        self.summary = SummaryPanel()
        self.step_panel = DetailsPanel()
        self.details.addTab(self.summary, "Summary")
        self.details.setTabToolTip(0, "Cycles by step kind and IPU: the run and the visible range.")
        self.details.addTab(self.step_panel, "Details")
        self.details.setTabToolTip(1, "The selected program step: codelets, tiles, exchange.")
        self.tile_map = TileMapWidget(metrics=[STEP_CYCLES, TOTAL])
        self.details.addTab(self.tile_map, "Tile map")
        self.details.setTabToolTip(2, "The selected step's cycles on every tile, as the chip.")
        self._summary_timer = QTimer(self)
        self._summary_timer.setSingleShot(True)
        self._summary_timer.setInterval(150)  # range summaries follow zooming, throttled
        self._summary_timer.timeout.connect(self._update_summary)
        self._connect_controls()
        self._breakdown = None
        self._execution_summary: ExecutionSummary | None = None
        self._summary_shown: tuple | None = None  # (breakdown, range) the Summary tab shows
        self.lightweight = LightweightMode(self)  # every execution of timed blocks, if any
        self.clear()

    def _connect_controls(self) -> None:
        c = self.control_bar
        c.run_box.currentIndexChanged.connect(self._on_run_picked)
        c.layout_box.currentIndexChanged.connect(
            lambda _: self._with_model(lambda m: m.set_layout(c.layout_choice()))
        )
        c.bsp.toggled.connect(lambda on: self._with_model(lambda m: m.set_bsp(on)))
        c.tiles_toggled.connect(lambda ipu, on: self._with_model(lambda m: m.set_expanded(ipu, on)))
        c.group_box.currentTextChanged.connect(
            lambda text: self._with_model(lambda m: m.set_group_by(text))
        )
        c.axis_box.currentIndexChanged.connect(lambda _: self._apply_axis())
        c.range_typed.connect(self.show_range_text)
        c.show_all.clicked.connect(self.plot.show_all)
        self.plot.span_clicked.connect(self._on_span_clicked)
        self.plot.scene().sigMouseClicked.connect(self._on_lane_name_clicked)
        self.plot.lane_axis.setToolTip("Click an IPU's name to show or hide its tiles.")
        self.plot.span_hovered.connect(self._on_span_hovered)
        self.plot.range_changed.connect(lambda *_: self._summary_timer.start())
        self.plot.view_box.sigYRangeChanged.connect(lambda *_: self._on_y_range())
        self.scroll.valueChanged.connect(self._on_scroll)
        self.details.currentChanged.connect(lambda _: self._summary_timer.start())

    # -- building -------------------------------------------------------------------------
    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return execution_specs(pair)

    def _show_compare(self, opened: OpenedReport, other: OpenedReport | None) -> None:
        """Compare mode adds both runs stacked on one cycle axis (views/compare)."""
        super()._show_compare(opened, other)
        tabs = self.compare_tabs
        if other is not None and not self.compare_problem and tabs is not None:
            try:
                traces = StackedTraces(pair_of(opened, other))
            except ReportError as error:
                traces = message_label(f"The runs cannot be stacked: {error}")
            tabs.add_page("Compare: timelines", traces)  # type: ignore[attr-defined]

    def compute(self, opened: OpenedReport, other: OpenedReport | None) -> TraceReady | str:
        """The trace's model for the selected run, its cycle breakdown and its whole-run
        spans (what the first paint draws), or why there is no trace."""
        report = opened.report
        lightweight = lightweight_ready(report)
        try:
            execution = report.execution
            if execution is None or not execution.runs:
                if lightweight is not None:  # a lightweight profile alone
                    return TraceReady(None, None, None, lightweight)
                return NOT_RUN_OOM if report.header.out_of_memory else NOT_RUN
            model = ExecutionTraceModel(report, report.debug_or_none())
            model.set_run(min(max(opened.selection.run, 0), len(model.runs) - 1))
            # checks every cross-section reference once
            breakdown = cycle_breakdown(report, model.run)
            summary = execution_summary(report, model.run)
        except ReportError as error:
            return f"The execution profile of this report cannot be shown.\n\n{error}"
        model.spans(0, model.total_cycles, FIRST_PAINT_PX)  # fills the whole-run span cache
        return TraceReady(model, breakdown, summary, lightweight)

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self._disconnect()
        ready = self.computed(opened, other)
        if isinstance(ready, str):
            return ready
        self.lightweight.show(ready.lightweight, detailed=ready.model is not None)
        if ready.model is None:
            return ""
        model, self._breakdown = ready.model, ready.breakdown
        self._execution_summary = ready.summary
        self.model = model
        model.changed.connect(self._on_model_changed)
        self._selection = opened.selection
        self._selection.changed.connect(self._on_selection_changed)
        c = self.control_bar
        c.set_runs(model.run_labels(), model.run)
        c.set_ipus(model.num_ipus)
        model.configure(c.layout_choice(), c.bsp.isChecked(), c.group_box.currentText())
        c.range_box.clear()
        c.range_error.clear()
        self._apply_axis()
        self._show_run()
        self._follow_steps()
        self.tile_map.show_report(opened)  # a memory problem is said in the tab itself
        return ""

    def clear(self) -> None:
        self._disconnect()
        self.lightweight.show(None, detailed=True)
        super().clear()

    def _disconnect(self) -> None:
        """Stop following the model and the selection of the report shown before."""
        if self.model is not None:
            self.model.changed.disconnect(self._on_model_changed)
        if self._selection is not None:
            self._selection.changed.disconnect(self._on_selection_changed)
        self.model = self._selection = None
        self._summary_shown = None
        self.tile_map.clear()
        self.plot.set_lanes([], lambda *_: _empty(), (0.0, 1.0))
        self.heat.set_strips([], (0.0, 1.0))

    def _with_model(self, action: Callable[[ExecutionTraceModel], None]) -> None:
        if self.model is not None:
            action(self.model)

    # -- the model drives the chart -------------------------------------------------------
    def _on_model_changed(self, what: str) -> None:
        if what == "run":
            self._show_run()
        elif what == "lanes":
            self._set_lanes(keep_range=True)
        else:
            self.plot.refresh()

    def _show_run(self) -> None:
        model = self.model
        try:
            if self._breakdown is None or self._breakdown.run != model.run:
                self._breakdown = cycle_breakdown(model.report, model.run)
            if self._execution_summary is None or self._execution_summary.run != model.run:
                self._execution_summary = execution_summary(model.report, model.run)
            self.summary.show_execution_summary(self._execution_summary)
        except ReportError as error:
            self.show_message(f"Run {model.run} of this report cannot be shown.\n\n{error}")
            return
        self._set_lanes(keep_range=False)
        self._update_summary()

    def _set_lanes(self, keep_range: bool) -> None:
        model = self.model
        x_range = self.plot.x_range
        limits = (0.0, float(max(model.total_cycles, 1)))
        self.plot.set_lanes(model.lane_names(), model.spans, limits)
        self.heat.set_strips(model.tile_strips(), limits)
        self.legend.setVisible(bool(model.tile_strips()))
        if keep_range:
            self.plot.set_x_range(*x_range)
        self._fit_lanes()

    def _fit_lanes(self) -> None:
        """Show as many lanes as fit at MIN_LANE_PX; the scroll bar reaches the others."""
        if self.model is None:
            return
        lanes = len(self.model.lanes)
        shown = max(1, min(lanes, self.plot.view_box.height() // MIN_LANE_PX or lanes))
        self.scroll.setRange(0, max(lanes - int(shown), 0))
        self.scroll.setPageStep(int(shown))
        self.scroll.setVisible(lanes > shown)
        self._on_scroll(self.scroll.value())

    def _on_scroll(self, value: int) -> None:
        if self.model is None:
            return
        lanes = len(self.model.lanes)
        shown = self.scroll.pageStep() if self.scroll.isVisible() else lanes
        first = min(value, max(lanes - shown, 0))
        rows = max(shown, 1, self.plot.view_box.height() / MAX_LANE_PX)
        self.plot.view_box.setLimits(yMin=0, yMax=max(lanes, rows))
        self.plot.view_box.setYRange(first, first + rows, padding=0)

    def _on_y_range(self) -> None:
        if self.model is None:
            return
        (_, _), (y0, y1) = self.plot.view_box.viewRange()
        window = (int(np.floor(y0)), int(np.ceil(y1)))
        if window != self.model.lane_window:
            self.model.lane_window = window  # only the IPUs on screen are queried
            self.plot.refresh()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self._fit_lanes)

    def _heat_source(self, ipu: int, x0: float, x1: float, width: int, rows: int) -> np.ndarray:
        if self.model is None:
            return np.full((rows, width), np.nan, np.float32)
        return self.model.heat_image(ipu, x0, x1, width, rows)

    def _apply_axis(self) -> None:
        if self.model is not None and self.control_bar.axis_box.currentText() == "Time":
            self.plot.time_axis.set_seconds(self.model.clock_hz, 0.0, "Time")
            self.control_bar.range_box.setPlaceholderText("e.g. 1-15 (µs)")
        else:
            self.plot.time_axis.set_cycles()
            self.control_bar.range_box.setPlaceholderText("e.g. 1000-25000")
        self.plot.time_axis.picture = None
        self.plot.time_axis.update()

    # -- range ----------------------------------------------------------------------------
    def show_range_text(self, text: str) -> bool:
        """What typing a range and pressing Enter does; False (and a message) if unreadable."""
        typed = read_range(text, self.control_bar.range_error)
        if self.model is None or typed is None:
            return False
        start, end = typed
        if self.control_bar.axis_box.currentText() == "Time":
            start, end = start * 1e-6 * self.model.clock_hz, end * 1e-6 * self.model.clock_hz
        if start >= self.model.total_cycles:
            self.control_bar.range_error.setText(
                f"the run has {self.model.total_cycles:,} cycles: the range starts after it"
            )
            return False
        self.plot.set_x_range(start, end)
        return True

    def _update_summary(self) -> None:
        if self.model is None or self._breakdown is None:
            return
        x0, x1 = self.plot.x_range
        start, end = max(int(x0), 0), min(int(np.ceil(x1)), self.model.total_cycles)
        whole = start <= 0 and end >= self.model.total_cycles
        shown = (self._breakdown, None if whole else (start, end))
        before = self._summary_shown  # the timer also fires when nothing moved
        if before is None or before[0] is not shown[0] or before[1] != shown[1]:
            visible = (
                None if whole else cycles_in_range(self.model.report, self.model.run, start, end)
            )
            self.summary.show_breakdown(self._breakdown, visible)
            self._summary_shown = shown
        if self._selection is not None:  # throttled by the timer, like the summary
            self._selection.select_range(None if whole else (start, end))

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nZoom with the wheel, W/S or +/-; pan by dragging or A/D; "
            "Home or double-click shows the whole run; type a range such as 1000-25000. "
            "Click a step to select it (shift-click adds); hover for its cycles and tiles. "
            "Layouts: Flat (a row per IPU) or Flame (run > operation > step); BSP phases "
            "splits steps by phase; Tiles of IPU (or a click on an IPU's name) adds a heat "
            "map of its tiles' cycles."
        )

    def csv_rows(self) -> list[list[object]] | None:
        table = self.summary.model.table
        if self.model is None or not table.columns:
            return None
        rows: list[list[object]] = [[c.header for c in table.columns]]
        rows += [[table.raw(r, c) for c in range(len(table.columns))] for r in range(len(table))]
        return rows

    @property
    def lane_roles(self) -> list[LaneRole]:
        return [lane.role for lane in self.model.lanes] if self.model else []


@dataclass(frozen=True)
class TraceReady:
    """What the worker computes for the first show (``ExecutionTraceView.compute``)."""

    model: ExecutionTraceModel | None  # None: the report has a lightweight profile alone
    breakdown: CycleBreakdown | None  # of the model's run
    summary: ExecutionSummary | None  # Poplar's execution summary of the model's run
    lightweight: LightweightReady | None = None  # the Lightweight mode's, when it has blocks


def _heat_legend() -> QWidget:
    """What the tile strips' colours mean, shown while an IPU is expanded."""
    legend = QWidget()
    row = QHBoxLayout(legend)
    row.setContentsMargins(8, 0, 8, 0)
    scale = QLabel()
    scale.setPixmap(heat_legend_pixmap())
    row.addStretch(1)
    row.addWidget(QLabel("Tiles: cycles of the step's slowest tile"))
    row.addWidget(QLabel("0%"))
    row.addWidget(scale)
    row.addWidget(QLabel("100%"))
    swatch = QLabel()
    swatch.setFixedSize(12, 12)
    swatch.setStyleSheet(f"background: {MERGED_COLOR};")
    row.addWidget(swatch)
    row.addWidget(QLabel("steps merged below a pixel (zoom in)"))
    legend.setToolTip(
        "Each tile strip row is a group of tiles (the slowest of them); each column the "
        "compute step running there. Hover a strip for one tile's cycles."
    )
    legend.hide()
    return legend


def _empty() -> SpanBatch:
    return SpanBatch.empty()
