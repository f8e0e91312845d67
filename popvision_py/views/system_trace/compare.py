"""System Trace compare mode: A's and B's host traces stacked on one synced time axis, each
from its own first event (the shared ``StackedTimelines``). Search, details, range and call
tree act on one side at a time: the side picked in the box, or the one last clicked."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QBoxLayout, QComboBox, QHBoxLayout, QLabel, QWidget

from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.system_trace import SystemTraceModel
from popvision_py.viewmodels.trace_compare import ComparedTraces, shared_label_colors
from popvision_py.viewmodels.trace_format import format_duration
from popvision_py.viewmodels.trace_open import OpenedTrace
from popvision_py.views.compare.stacked_trace import StackedSide, StackedTimelines
from popvision_py.views.system_trace.charts import InstantsPlot, LinkedPlot, SeriesPlot, link_all
from popvision_py.views.system_trace.controls import SystemTraceControls
from popvision_py.views.timeline.plot import TimelinePlot


class TraceHost(Protocol):
    """What compare mode uses of the System Trace page (``SystemTraceView``)."""

    trace: OpenedTrace | None
    model: SystemTraceModel | None
    timeline: TimelinePlot
    single_timeline: TimelinePlot  # the page's own, given back when compare mode ends
    timeline_row: QWidget
    chart_layout: QBoxLayout
    controls_layout: QBoxLayout
    control_bar: SystemTraceControls
    selected: int

    def linked_plots(self) -> list: ...

    def set_range_selection(self, on: bool) -> None: ...

    def reset_search(self) -> None: ...

    def refresh_call_tree(self) -> None: ...

    def click_span(self, index: int, shift: bool) -> None: ...

    def hover_span(self, index: int, scene_pos: QPointF) -> None: ...


def stacked_sides(compared: ComparedTraces) -> list[StackedSide]:
    sides = []
    for opened in compared.sides:
        assert opened is not None
        model = opened.model
        lo, hi = model.time_limits()
        title = f"{opened.name}: {len(model.trace):,} events over {format_duration(hi - lo)}"
        sides.append(StackedSide(title, model.lane_names(), model.spans, lo, hi - lo))
    return sides


class TraceCompare:
    """The stacked timelines of a comparison inside ``view``, and which side is active."""

    def __init__(self, view: TraceHost, compared: ComparedTraces, pair: ComparePair) -> None:
        self.view = view
        self.compared = compared
        self.traces: list[OpenedTrace] = [t for t in compared.sides if t is not None]
        a, b = (t.model for t in self.traces)  # one label, one colour on both sides
        b.colors = shared_label_colors(a.trace.labels, a.colors, b.trace.labels)
        self.stacked = StackedTimelines(
            pair, stacked_sides(compared), 1e9, "Time from the first event"
        )
        self.side_row = QWidget()  # "Trace: [A: name]" before the controls
        row = QHBoxLayout(self.side_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Trace:"))
        self.side_box = QComboBox()
        row.addWidget(self.side_box)
        self.side_box.addItems(
            [f"{letter}: {name}" for letter, name in zip("AB", pair.names, strict=True)]
        )
        self.side_box.setToolTip(
            "Which trace search, the selection range, details and the call tree act on "
            "(clicking a span picks its trace)"
        )
        self.side_box.currentIndexChanged.connect(self.activate)
        self.side_charts = [self._add_side_charts(k) for k in range(len(self.traces))]
        for k, plot in enumerate(self.stacked.plots):
            plot.span_clicked.connect(lambda i, shift, k=k: self._clicked(k, i, shift))
            plot.span_hovered.connect(lambda i, pos, k=k: self._hovered(k, i, pos))
        self.active = 0

    def _add_side_charts(self, side: int) -> list[LinkedPlot]:
        """Each side's instants and graphs under its own timeline, drawn as the page draws
        one trace's, following that side's time axis."""
        model = self.traces[side].model
        trace = model.trace
        charts: list[LinkedPlot] = []
        if len(model.instant_events) or bool(trace.is_instant().any()):
            charts.append(InstantsPlot(model))
        until = model.time_limits()[1]
        charts += [SeriesPlot(graph, trace.series_units.get(graph, ""), series, until)
                   for graph, series in trace.series.items()]  # fmt: skip
        for chart in charts:
            self.stacked.add_below(side, chart)
        link_all(charts, self.stacked.plots[side])
        return charts

    def enter(self) -> None:
        """Show the stacked timelines in place of the view's own timeline and charts."""
        view = self.view
        view.timeline_row.hide()
        for plot in view.linked_plots():
            plot.hide()
        view.chart_layout.addWidget(self.stacked, 1)
        view.controls_layout.insertWidget(0, self.side_row)
        self._set_single_controls(False)
        self.activate(0)

    def leave(self) -> None:
        """Give the view back its own timeline (its charts come back with its next trace)."""
        view = self.view
        view.set_range_selection(False)
        for widget in (self.stacked, self.side_row):
            widget.hide()
            widget.setParent(None)
            widget.deleteLater()
        view.timeline = view.single_timeline
        view.timeline_row.show()
        self._set_single_controls(True)

    def _set_single_controls(self, on: bool) -> None:
        """Lane layout and axis options act on one trace's timeline: off while comparing."""
        c = self.view.control_bar
        for widget in (c.channels, c.tracks, c.merge_all, c.absolute, c.area):
            widget.setEnabled(on)

    def activate(self, side: int) -> None:
        """Point the view's model and timeline at ``side``'s."""
        view = self.view
        view.set_range_selection(False)
        view.control_bar.select_range.setChecked(False)
        self.active = side
        self.side_box.blockSignals(True)
        self.side_box.setCurrentIndex(side)
        self.side_box.blockSignals(False)
        view.trace, view.model = self.traces[side], self.traces[side].model
        view.timeline = self.stacked.plots[side]
        view.selected = -1
        view.reset_search()
        view.refresh_call_tree()

    @contextmanager
    def on_side(self, side: int) -> Iterator[None]:
        view = self.view
        saved = view.model, view.timeline
        view.model, view.timeline = self.traces[side].model, self.stacked.plots[side]
        try:
            yield
        finally:
            view.model, view.timeline = saved

    def _clicked(self, side: int, index: int, shift: bool) -> None:
        if side != self.active:
            self.activate(side)
        self.view.click_span(index, shift)

    def _hovered(self, side: int, index: int, pos: QPointF) -> None:
        with self.on_side(side):
            self.view.hover_span(index, pos)
