"""Compare mode for timelines: A's timeline above B's on one synced axis, each named in its
A/B colour. ``StackedTimelines`` is the mechanism (any two span sources, each with its own
origin so both start at 0); ``StackedTraces`` stacks the Execution Trace's two runs (cycles
from 0) and the System Trace stacks two host traces (time from each one's first event)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import A_COLOR, B_COLOR, ComparePair
from popvision_py.viewmodels.execution_trace import ExecutionTraceModel
from popvision_py.viewmodels.timeline import SpanBatch
from popvision_py.views.compare.legend import side_html
from popvision_py.views.plain_text import rich_label
from popvision_py.views.timeline.plot import TimelinePlot


@dataclass
class StackedSide:
    """One side's timeline: what it says after "A: name", its lanes and spans, and where its
    time starts (``origin``, shown as 0) and how long it is after that."""

    title: str
    lane_names: list[str]
    source: Callable[[float, float, int], SpanBatch]
    origin: float = 0.0
    length: float = 1.0


class StackedTimelines(QWidget):
    """Two ``TimelinePlot``s, A above B; zooming or panning one moves the other so both
    show the same time after their own origin. ``seconds`` (units per second) gives both
    a seconds axis from their origin; else cycles."""

    def __init__(
        self,
        pair: ComparePair,
        sides: list[StackedSide],
        seconds: float | None = None,
        axis_label: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        self.sides = sides
        self.plots: list[TimelinePlot] = []
        self.titles: list[QLabel] = []
        longest = float(max(max(s.length for s in sides), 1.0))
        for side, name, color, letter in zip(
            sides, pair.names, (A_COLOR, B_COLOR), "AB", strict=True
        ):
            title = rich_label()
            title.setText(side_html(letter, name, color, side.title))
            plot = TimelinePlot(side.source)
            plot.setMinimumHeight(40)  # the details' height is shared: never grow the window
            plot.set_lanes(side.lane_names, side.source, (side.origin, side.origin + longest))
            if seconds is not None:
                plot.time_axis.set_seconds(seconds, side.origin, axis_label)
            plot.range_changed.connect(lambda x0, x1, side=side: self._sync(side, x0, x1))
            self.plots.append(plot)
            self.titles.append(title)
            layout.addWidget(title)
            layout.addWidget(plot, 1)
        self._syncing = False
        self.plots[0].set_x_range(sides[0].origin, sides[0].origin + longest)

    def add_below(self, index: int, widget: QWidget) -> None:
        """Put ``widget`` (a chart on side ``index``'s time axis) under that side's timeline,
        after any added before."""
        layout = self.layout()
        at = layout.indexOf(self.plots[index]) + 1
        while at < layout.count() and layout.itemAt(at).widget() not in self.titles:
            at += 1
        layout.insertWidget(at, widget)

    def relative_range(self, index: int) -> tuple[float, float]:
        """What plot ``index`` shows, in time after its own origin."""
        x0, x1 = self.plots[index].x_range
        origin = self.sides[index].origin
        return x0 - origin, x1 - origin

    def _sync(self, moved: StackedSide, x0: float, x1: float) -> None:
        """One axis: the other timeline follows the one the user moved, origin to origin."""
        if self._syncing:
            return
        self._syncing = True
        try:
            for side, plot in zip(self.sides, self.plots, strict=True):
                shift = side.origin - moved.origin
                wanted = (x0 + shift, x1 + shift)
                if plot.x_range != wanted:
                    plot.set_x_range(*wanted)
        finally:
            self._syncing = False


class StackedTraces(StackedTimelines):
    """Execution Trace compare: run A's trace above run B's on one cycle axis from 0."""

    def __init__(self, pair: ComparePair, parent: QWidget | None = None) -> None:
        self.models: list[ExecutionTraceModel] = []
        sides = []
        for opened in (pair.a, pair.b):
            # No debug groups: the stacked runs need steps and kinds, not operations (the
            # groups of a 400,000-context debug file take a second per report).
            model = ExecutionTraceModel(opened.report, None)
            run = min(max(opened.selection.run, 0), max(len(model.runs) - 1, 0))
            if len(model.runs):
                model.set_run(run)
            self.models.append(model)
            title = f"run {model.run}: {model.total_cycles:,} cycles"
            sides.append(
                StackedSide(title, model.lane_names(), model.spans, 0.0, model.total_cycles)
            )
        super().__init__(pair, sides, parent=parent)
