"""Execution Trace compare mode: run A's trace above run B's, on one synced cycle axis (both
from 0, the longer run's length as the limit), each named in its A/B colour."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import A_COLOR, B_COLOR, ComparePair
from popvision_py.viewmodels.execution_trace import ExecutionTraceModel
from popvision_py.views.compare.legend import side_title
from popvision_py.views.plain_text import rich_label
from popvision_py.views.timeline.plot import TimelinePlot


class StackedTraces(QWidget):
    """Two ``TimelinePlot``s over each report's own trace model; panning one pans both."""

    def __init__(self, pair: ComparePair, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        self.models: list[ExecutionTraceModel] = []
        self.plots: list[TimelinePlot] = []
        self.titles: list[QLabel] = []
        for opened, name, color, side in (
            (pair.a, pair.names[0], A_COLOR, "A"), (pair.b, pair.names[1], B_COLOR, "B")
        ):  # fmt: skip
            # No debug groups: the stacked runs need steps and kinds, not operations (the
            # groups of a 400,000-context debug file take a second per report).
            model = ExecutionTraceModel(opened.report, None)
            run = min(max(opened.selection.run, 0), max(len(model.runs) - 1, 0))
            if len(model.runs):
                model.set_run(run)
            title = rich_label(
                f"{side_title(color, side, name)}, run {model.run}: {model.total_cycles:,} cycles"
            )
            plot = TimelinePlot(model.spans)
            plot.setMinimumHeight(40)  # the details' height is shared: never grow the window
            self.models.append(model)
            self.plots.append(plot)
            self.titles.append(title)
            layout.addWidget(title)
            layout.addWidget(plot, 1)
        longest = float(max(max(m.total_cycles for m in self.models), 1))
        for model, plot in zip(self.models, self.plots, strict=True):
            plot.set_lanes(model.lane_names(), model.spans, (0.0, longest))
            plot.range_changed.connect(self._sync)
        self.plots[0].set_x_range(0.0, longest)
        self._syncing = False

    def _sync(self, x0: float, x1: float) -> None:
        """One cycle axis: the other trace follows the one the user moved."""
        if self._syncing:
            return
        self._syncing = True
        try:
            for plot in self.plots:
                if plot.x_range != (x0, x1):
                    plot.set_x_range(x0, x1)
        finally:
            self._syncing = False
