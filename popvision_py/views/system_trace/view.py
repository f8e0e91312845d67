"""The System Trace page: host threads and IPU tracks of .pvti files or Chrome JSON on one
timeline (a flame per thread), instants above it, metric series and heatmaps below it on the
same time axis, search, a selection range, event details and the call tree.

The window gives it a trace with ``show_trace`` (File > Open trace…, drag-and-drop, the
command line, or the .pvti files an opened report recorded or has beside it).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QCursor, QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollBar, QToolTip, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.search_matches import SearchMatches
from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.viewmodels.timeline import SpanBatch
from popvision_py.viewmodels.trace_compare import ComparedTraces
from popvision_py.viewmodels.trace_format import format_duration
from popvision_py.viewmodels.trace_open import OpenedTrace
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.system_trace.charts import (
    HeatmapPlot,
    InstantsPlot,
    LinkedPlot,
    SeriesPlot,
    link_all,
)
from popvision_py.views.system_trace.compare import TraceCompare
from popvision_py.views.system_trace.controls import SystemTraceControls
from popvision_py.views.system_trace.details import CallTreePanel, EventDetails
from popvision_py.views.system_trace.flows import FlowArrowsItem, FlowSelection
from popvision_py.views.system_trace.menus import TrackMenus
from popvision_py.views.system_trace.ranges import RangeSelection
from popvision_py.views.timeline.plot import TimelinePlot
from profiler_core.formats.pvti import EventKind

MAX_LANES = 24  # lanes shown at once; more scroll
NO_TRACE = (
    "No host trace is open.\n\nOpen a .pvti file, a folder of them or a Chrome trace JSON "
    "with File > Open trace… (or drop it on the window). To record one, run your program "
    'with PVTI_OPTIONS=\'{"enable":"true","directory":"traces"}\'; a report shows the '
    ".pvti its program wrote, wherever it is (older reports: the .pvti files in or beside "
    "the report folder)."
)


class SystemTraceView(RangeSelection, FlowSelection, TrackMenus, ChartDetailsView):
    title = "System Trace"
    rail_help = (
        "The host trace (.pvti files, or Chrome trace JSON): each thread's nested "
        "tracepoints as a flame, IPU tracks, instant events, metric series and heatmaps "
        "on one time axis. Search labels, select a range, see the call tree."
    )
    needs = ()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: OpenedTrace | None = None
        self.report_note = ""  # why the opened report's trace is not shown (trace_loader)
        self.model: SystemTraceModel | None = None
        self.control_bar = SystemTraceControls()
        self._tracks_filled = False  # the Tracks menu is filled when first opened
        self.control_bar.track_menu.aboutToShow.connect(self._fill_track_menu)
        self.controls_layout.addWidget(self.control_bar)
        self.banner = QLabel()
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("background: #fff3cd; color: #5c4400; padding: 4px;")
        self.banner.hide()
        self.timeline = TimelinePlot(self._spans)
        self.lanes_shown = MAX_LANES
        self.flow_item = FlowArrowsItem(self._flow_arrows)
        self.timeline.addItem(self.flow_item)
        # Many threads: show MAX_LANES lanes at a time, the scroll bar picks which.
        self.lane_scroll = QScrollBar(Qt.Orientation.Vertical)
        self.lane_scroll.setToolTip("Scroll through the threads' lanes")
        self.lane_scroll.valueChanged.connect(self._show_lanes_from)
        timeline_row = QWidget()
        row = QHBoxLayout(timeline_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.timeline, 1)
        row.addWidget(self.lane_scroll)
        self.single_timeline, self.timeline_row = self.timeline, timeline_row
        self.compare: TraceCompare | None = None  # A and B stacked (compare.py)
        self.instants: InstantsPlot | None = None
        self.series_plots: list[SeriesPlot] = []
        self.heatmap_plots: list[HeatmapPlot] = []
        self.chart_layout.addWidget(self.banner)
        self.chart_layout.addWidget(timeline_row, 1)
        self.event_details = EventDetails()
        self.event_details.link_clicked.connect(self.go_to_event)
        self.call_tree = CallTreePanel()
        self.details.addTab(self.event_details, "Details")
        self.details.setTabToolTip(0, "The selected span or instant")
        self.details.addTab(self.call_tree, "Call Tree")
        self.details.setTabToolTip(1, "Time by label path, in the selected range or in all")
        self.details.currentChanged.connect(lambda _: self._update_call_tree())
        self.region: pg.LinearRegionItem | None = None
        self.matches = SearchMatches()  # events whose label holds the search text
        self.selected = -1
        self.hover_text = ""
        self._call_tree_key: tuple | None = None
        self._connect()
        self.clear()

    def _connect(self) -> None:
        c = self.control_bar
        c.search_box.textChanged.connect(lambda _: self.reset_search())
        c.search_box.returnPressed.connect(lambda: self.step_match(1))
        c.next.clicked.connect(lambda: self.step_match(1))
        c.previous.clicked.connect(lambda: self.step_match(-1))
        c.range_typed.connect(self.type_range)
        c.select_range.toggled.connect(self.set_range_selection)
        c.merge_all.toggled.connect(lambda on: self._relayout(lambda m: m.set_merge_all(on)))
        c.absolute.toggled.connect(lambda _: self._set_time_axis())
        c.area.toggled.connect(lambda on: [p.set_area(on) for p in self.series_plots])
        self.timeline.span_clicked.connect(self.click_span)
        self.timeline.span_hovered.connect(self.hover_span)

    # -- showing ----------------------------------------------------------------------
    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        if self.trace is not None:
            return ""
        return self.report_note or NO_TRACE

    def clear(self) -> None:
        super().clear()
        self._leave_compare()
        self.trace = self.model = None
        self.report_note = ""  # why the opened report's trace is not shown (trace_loader)
        self.show_message(NO_TRACE)

    def show_report_note(self, text: str) -> None:
        """Say why the opened report's trace cannot be shown, now and when the page is built."""
        self.report_note = text
        self.show_message(text)

    def show_trace(self, opened: OpenedTrace) -> None:
        """Show ``opened`` (replacing any trace shown)."""
        self._leave_compare()
        self.trace, self.model = opened, opened.model
        model = opened.model
        for plot in [self.instants, *self.series_plots, *self.heatmap_plots]:
            if plot is not None:
                plot.setXLink(None)  # the timeline must not keep signalling a deleted chart
                self.chart_layout.removeWidget(plot)
                plot.deleteLater()
        self.set_range_selection(False)
        self.control_bar.select_range.setChecked(False)
        self.instants = InstantsPlot(model)
        self.instants.instant_clicked.connect(lambda e: self.select_event(e) if e >= 0 else None)
        self.chart_layout.insertWidget(1, self.instants)
        self.instants.setVisible(model.has_instants())
        trace = model.tables  # names, series and heatmaps (a live model's events are pieces)
        self.series_plots = [
            SeriesPlot(graph, trace.series_units.get(graph, ""), series, model.time_limits()[1])
            for graph, series in trace.series.items()
        ]
        self.heatmap_plots = [HeatmapPlot(h) for h in trace.heatmaps.values()]
        for plot in [*self.series_plots, *self.heatmap_plots]:
            self.chart_layout.addWidget(plot)
            if isinstance(plot, SeriesPlot):
                plot.set_area(self.control_bar.area.isChecked())
        self._set_lanes()
        self._apply_colors()
        link_all(self.linked_plots(), self.timeline)
        self._set_time_axis()
        self._fill_menus()
        incomplete = opened.banner_text()
        self.banner.setText(incomplete)
        self.banner.setVisible(bool(incomplete))
        self.selected = -1
        self.event_details.show_rows([("Selected event", "none: click a span or an instant")])
        self.reset_search()
        self._call_tree_key = None
        self.pages.setCurrentIndex(0)
        self._update_call_tree()

    def show_compared(self, compared: ComparedTraces, pair: ComparePair) -> None:
        """Reports A and B's traces stacked on one time axis (compare.py), or the one side
        that has a trace with a banner naming the side that has none."""
        present = [t for t in compared.sides if t is not None]
        self.show_trace(present[0])
        notes = [compared.missing_text()] + [t.banner_text() for t in present]
        self.banner.setText("\n".join(n for n in notes if n))
        self.banner.setVisible(bool(self.banner.text()))
        if len(present) == 2:
            self.compare = TraceCompare(self, compared, pair)
            self.compare.enter()

    def _leave_compare(self) -> None:
        if self.compare is not None:
            self.compare.leave()
            self.compare = None

    def update_trace(self, opened: OpenedTrace) -> None:
        """Show a newer snapshot of the trace shown (a live recording): its charts keep
        their widgets when it has the same graphs and heatmaps, so an update costs the
        window a relayout and a repaint, not new plots. Otherwise as ``show_trace``."""
        old = self.model
        trace = opened.model.tables
        same = (
            old is not None
            and self.instants is not None
            and [(p.graph, list(p.series)) for p in self.series_plots]
            == [(g, list(s)) for g, s in trace.series.items()]
            and [(p.heatmap.name, p.buckets) for p in self.heatmap_plots]
            == [(h.name, h.counts.shape[1]) for h in trace.heatmaps.values()]
        )
        if not same:
            self.show_trace(opened)
            return
        assert self.instants is not None
        self.trace, self.model = opened, opened.model
        item = self.instants.item
        item.prepareGeometryChange()
        item.model, item.selected = opened.model, -1
        x0, x1 = opened.model.time_limits()
        item.bounds = QRectF(x0, 0.0, x1 - x0, 1.0)
        item.update()
        self.instants.setVisible(opened.model.has_instants())
        for plot in self.series_plots:
            plot.series = trace.series[plot.graph]
            plot.until = opened.model.time_limits()[1]
        for plot, heatmap in zip(self.heatmap_plots, trace.heatmaps.values(), strict=True):
            plot.heatmap = heatmap
            plot.peak = max(int(heatmap.counts.max()), 1) if heatmap.counts.size else 1
            plot.scale_text.setText(f"count: 0 (dark) … {plot.peak:,} (yellow)")
        self._set_lanes()
        self._fill_menus()
        incomplete = opened.banner_text()
        self.banner.setText(incomplete)
        self.banner.setVisible(bool(incomplete))
        self.selected = -1  # event numbers change with a new snapshot
        self.timeline.spans.set_highlight(np.zeros(0, np.int64))
        self.reset_search()
        self._call_tree_key = None
        self.pages.setCurrentIndex(0)  # the charts, not a message shown meanwhile
        self._update_call_tree()
        for plot in self.linked_plots():
            plot.redraw()

    def _set_lanes(self) -> None:
        assert self.model is not None
        names = self.model.lane_names()
        self.timeline.set_lanes(names, self._spans, self.model.time_limits())
        self.flow_item.set_bounds(*self.model.time_limits(), len(names))
        self.flow_item.selected_flows = np.zeros(0, np.int64)
        extra = max(len(names) - MAX_LANES, 0)
        self.lane_scroll.setRange(0, extra)
        self.lane_scroll.setPageStep(MAX_LANES)
        self.lane_scroll.setVisible(extra > 0)
        self.lane_scroll.setValue(0)
        self._show_lanes_from(0)
        self.size_label_column()

    def size_label_column(self) -> None:
        """The lane names' column as wide as its names, at most a third of the page; every
        chart's left axis as wide, so their times line up."""
        if self.model is None or self.compare is not None:
            return  # compare stacks its own timelines and charts, each 140 px of names
        width = self.timeline.size_lane_names(max(self.width() // 3, 60))
        for plot in self.linked_plots():
            plot.plot_item.getAxis("left").setWidth(width)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.size_label_column()

    def _show_lanes_from(self, first: int) -> None:
        lanes = len(self.timeline.lane_axis.names)
        self.timeline.view_box.setYRange(first, min(first + MAX_LANES, max(lanes, 1)), padding=0)
        self.timeline.refresh()

    def linked_plots(self) -> list[LinkedPlot]:
        plots: list[LinkedPlot] = [self.instants] if self.instants is not None else []
        return plots + [*self.series_plots, *self.heatmap_plots]

    def _spans(self, x0: float, x1: float, width: int) -> SpanBatch:
        if self.model is None:
            return SpanBatch.empty()
        first = self.lane_scroll.value()  # only the lanes on screen are read
        return self.model.spans(x0, x1, width, range(first, first + MAX_LANES))

    def _relayout(self, change: object) -> None:
        """Apply ``change(model)`` to the lanes, keeping the time range shown."""
        if self.model is None or self.compare is not None:
            return
        x0, x1 = self.timeline.x_range
        change(self.model)  # type: ignore[operator]
        self._set_lanes()
        self.timeline.set_x_range(x0, x1)
        self._update_range_info()

    def _set_time_axis(self) -> None:
        if self.model is None:
            return
        axis = self.timeline.time_axis
        if self.control_bar.absolute.isChecked():
            axis.set_clock(1e9, self.model.tables.origin_wall_ns, "Wall clock (UTC)")
        else:
            axis.set_seconds(1e9, self.model.time_limits()[0], "Time from the first event")
        axis.picture = None  # pyqtgraph caches tick text
        axis.update()

    # -- selection --------------------------------------------------------------------
    def select_event(self, event: int) -> None:
        if self.model is None or event < 0:
            return
        self.selected = event
        self.timeline.spans.set_highlight(np.array([event]))
        if self.instants is not None:
            self.instants.select(event)
        self._show_event_rows(event)
        self.details.setCurrentWidget(self.event_details)

    def click_span(self, index: int, _shift: bool) -> None:
        if index >= 0:
            key = int(self.timeline.spans.batch.key[index])
            if key >= 0:
                self.select_event(key)

    def hover_span(self, index: int, scene_pos: QPointF) -> None:
        if index < 0 or self.model is None:
            self.hover_text = ""
            QToolTip.hideText()
            return
        batch = self.timeline.spans.batch
        key = int(batch.key[index])
        if key >= 0:
            trace = self.model.trace
            duration = int(trace.end_ns[key] - trace.start_ns[key])
            self.hover_text = (
                f"{self.model.labels[int(trace.label[key])]}\n{format_duration(duration)}"
            )
        else:
            span = batch.end[index] - batch.start[index]
            self.hover_text = f"{batch.labels[index]} merged in {format_duration(span)}"
        QToolTip.showText(QCursor.pos(), plain_tooltip(self.hover_text), self.timeline)

    # -- search -----------------------------------------------------------------------
    def reset_search(self) -> None:
        self.matches.reset()
        self.control_bar.matches.setText("")

    def step_match(self, step: int) -> None:
        """Go to the next (1) or previous (-1) match of the search text, in time order."""
        if self.model is None:
            return
        text = self.control_bar.search_box.text()
        if not self.matches.found:  # the text changed since the last step: search again
            self.matches.set(text, self.model.search(text))
        event = self.matches.step(backwards=step < 0)
        self.control_bar.matches.setText(self.matches.describe())
        if event >= 0:
            self.zoom_to(event)
            self.select_event(event)

    def zoom_to(self, event: int) -> None:
        """Show ``event`` with some context either side."""
        assert self.model is not None
        trace = self.model.trace
        s, e = float(trace.start_ns[event]), float(trace.end_ns[event])
        lo, hi = self.model.time_limits()
        span = max(e - s, 2000.0, (hi - lo) / 200)  # an instant gets some context too
        self.timeline.set_x_range(s - 0.25 * span, s + 1.25 * span)

    def is_instant(self, event: int) -> bool:
        return self.model is not None and self.model.trace.kind[event] == EventKind.INSTANT

    # -- look -------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            # After the charts themselves have their new palette (they get it after us).
            QTimer.singleShot(0, self, self._apply_colors)  # dropped with the view
        super().changeEvent(event)

    def _apply_colors(self) -> None:
        self.timeline.apply_colors()
        # The selection outline in the text colour: it stands out on every label colour.
        self.timeline.spans.highlight_color = QColor(chart_colors(self.timeline).foreground)
        self.timeline.spans.update()
        for plot in self.linked_plots():
            plot.apply_colors()
