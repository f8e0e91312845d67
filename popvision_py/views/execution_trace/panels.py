"""The Execution Trace's details tabs: Summary (cycles by step kind as bars and a table, for
the run and the visible range) and Details of the selected program step (properties,
vertices per codelet, and the tile balance as a histogram)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QStackedWidget, QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.execution_summary import (
    percent,
    poplar_summary_table,
    shown_kinds,
    summary_table,
)
from popvision_py.viewmodels.step_colors import step_kind_color
from popvision_py.viewmodels.step_details import StepDetails, balance_histogram
from popvision_py.views.memory.details import make_table_view
from popvision_py.views.messages import message_label
from popvision_py.views.plot_menus import drop_context_menus
from popvision_py.views.table_model import ColumnTableModel, size_columns_from_sample
from profiler_core.analysis.execution import CycleBreakdown, RangeCycles
from profiler_core.analysis.execution_summary import ExecutionSummary
from profiler_core.model.kinds import StepKind


class _ThemedPlot(pg.PlotWidget):
    """A small chart that follows the light / dark theme."""

    def __init__(self) -> None:
        self._built = False  # Qt sends palette changes while the plot item is being made
        super().__init__()
        self._built = True

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and self.__dict__.get("_built"):
            _color_plot(self)
        super().changeEvent(event)


def _small_plot(bottom: str, left: str) -> pg.PlotWidget:
    plot = _ThemedPlot()
    drop_context_menus(plot)
    plot.hideButtons()
    plot.setMouseEnabled(x=False, y=False)
    plot.setLabel("bottom", bottom)
    plot.setLabel("left", left)
    plot.setMinimumWidth(260)
    return plot


def _color_plot(plot: pg.PlotWidget) -> None:
    colors = chart_colors(plot)
    plot.setBackground(colors.background)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(colors.foreground)
        axis.setTextPen(colors.foreground)


class SummaryPanel(QWidget):
    """Bars of each kind's share (run: solid, visible range: pale) beside the table."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.poplar_model = ColumnTableModel()
        self.poplar_table = make_table_view(self.poplar_model, sortable=False)
        self.poplar_table.setToolTip(
            "Poplar's execution summary of the run: the figures printProfileSummary and "
            "popvision-cli execution give."
        )
        self.model = ColumnTableModel()
        self.table = make_table_view(self.model, sortable=True)
        self.chart = _small_plot("% of cycles", "")
        self.chart.getAxis("left").setWidth(128)  # room for the longest kind name
        self.chart.getViewBox().sigResized.connect(self._fit_kind_names)
        self.kind_ticks: list[tuple[float, str]] = []
        self.kind_names_shown = False
        self.bars: list[pg.BarGraphItem] = []
        split = QSplitter(Qt.Orientation.Horizontal)
        self.ipu_chart = _small_plot("Active cycles", "")
        self.ipu_chart.setToolTip(
            "Each IPU's active cycles in the run, by step kind; the rest of the run it waits "
            "for slower IPUs (bulk synchronous)."
        )
        self.ipu_bars: list[pg.BarGraphItem] = []
        split.addWidget(self.chart)
        split.addWidget(self.ipu_chart)
        split.addWidget(self.table)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 5)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.heading)
        layout.addWidget(self.poplar_table)
        layout.addWidget(split, 1)

    def show_execution_summary(self, summary: ExecutionSummary) -> None:
        self.poplar_model.set_table(poplar_summary_table(summary))
        self.poplar_table.resizeColumnsToContents()
        rows = self.poplar_model.rowCount()
        header = self.poplar_table.horizontalHeader().height()
        row_height = self.poplar_table.verticalHeader().defaultSectionSize()
        self.poplar_table.setFixedHeight(header + rows * row_height + 4)

    def show_breakdown(self, run: CycleBreakdown, visible: RangeCycles | None) -> None:
        self.model.set_table(summary_table(run, visible))
        size_columns_from_sample(self.table)  # Qt's own sizing asks every role of every cell
        seconds = f"{run.seconds * 1e6:,.2f} µs at {run.clock_hz / 1e9:.2f} GHz"
        text = f"Run {run.run} ({run.name}): {run.total_cycles:,} cycles ({seconds})."
        if visible is not None:
            text += f" Visible: cycles {visible.start:,}-{visible.end:,}."
        self.heading.setText(text)
        self._draw_bars(run, visible)
        self._draw_ipu_bars(run)

    def _fit_kind_names(self, *_args: object) -> None:
        """The kinds' names beside their bars when each bar has a line of text; squeezed
        (a short details pane) they would overlap, so none is written -- the table beside
        names each kind by its colour."""
        rows = len(self.kind_ticks)
        room = self.chart.getViewBox().sceneBoundingRect().height()
        self.kind_names_shown = bool(rows) and room / rows >= self.chart.fontMetrics().height()
        # one level of no ticks (an empty list would ask pyqtgraph for numbers)
        self.chart.getAxis("left").setTicks([self.kind_ticks if self.kind_names_shown else []])

    def _draw_ipu_bars(self, run: CycleBreakdown) -> None:
        """Per IPU, its active cycles stacked by kind (one bar item per kind, not per IPU)."""
        plot = self.ipu_chart
        plot.clear()
        kinds = shown_kinds(run)
        ipus = np.arange(run.by_kind_ipu.shape[1], dtype=np.float64)
        left = np.zeros(ipus.size)
        self.ipu_bars = []
        for kind in kinds.tolist():
            width = run.by_kind_ipu[kind].astype(np.float64)
            bar = pg.BarGraphItem(
                x0=left.copy(), y=ipus, width=width, height=0.7, brush=step_kind_color(kind)
            )
            self.ipu_bars.append(bar)
            plot.addItem(bar)
            left += width
        plot.getAxis("left").setTicks([[(float(i), f"IPU {i}") for i in ipus.astype(int)]])
        plot.getViewBox().invertY(True)
        plot.setYRange(-0.6, ipus.size - 0.4, padding=0)
        plot.setXRange(0, max(float(left.max(initial=0)), 1.0), padding=0.02)
        _color_plot(plot)

    def _draw_bars(self, run: CycleBreakdown, visible: RangeCycles | None) -> None:
        """Horizontal bars, a kind per row (top down), so kind names never overlap."""
        plot = self.chart
        plot.clear()
        kinds = shown_kinds(run)
        y = np.arange(kinds.size, dtype=np.float64)
        brushes = [step_kind_color(int(k)) for k in kinds.tolist()]
        height = 0.4 if visible is not None else 0.7
        offset = height / 2 if visible is not None else 0.0
        self.bars = [
            pg.BarGraphItem(
                x0=0, y=y - offset, width=percent(run.by_kind)[kinds], height=height,
                brushes=brushes,
            )
        ]  # fmt: skip
        if visible is not None:
            pale = [pg.mkBrush(pg.mkColor(c).lighter(150)) for c in brushes]
            self.bars.append(
                pg.BarGraphItem(
                    x0=0, y=y + offset, width=percent(visible.by_kind)[kinds], height=height,
                    brushes=pale,
                )
            )  # fmt: skip
        for bar in self.bars:
            plot.addItem(bar)
        names = [StepKind(int(k)).poplar_name for k in kinds.tolist()]
        self.kind_ticks = list(zip(y.tolist(), names, strict=True))
        self._fit_kind_names()
        plot.getViewBox().invertY(True)
        plot.setYRange(-0.6, max(kinds.size - 0.4, 0.6), padding=0)
        plot.setXRange(0, 100, padding=0.02)
        plot.setToolTip(
            "Each kind's share of the run's cycles (solid) and of the visible range (pale)."
        )
        _color_plot(plot)


class DetailsPanel(QWidget):
    """The selected program step: properties, codelets, and the tile balance histogram."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.properties = ColumnTableModel()
        self.properties_view = make_table_view(self.properties, sortable=False)
        self.codelets = ColumnTableModel()
        self.codelets_view = make_table_view(self.codelets, sortable=True)
        self.histogram = _small_plot("Tile cycles", "Tiles")
        self.histogram.setToolTip(
            "How many tiles took how many cycles in this compute step: a wide spread means "
            "the work is unevenly spread over the tiles."
        )
        self.bars: pg.BarGraphItem | None = None
        tables = QSplitter(Qt.Orientation.Vertical)
        tables.addWidget(self.properties_view)
        tables.addWidget(self.codelets_view)
        tables.setStretchFactor(0, 3)
        tables.setStretchFactor(1, 1)
        content = QSplitter(Qt.Orientation.Horizontal)
        content.addWidget(tables)
        content.addWidget(self.histogram)
        content.setStretchFactor(0, 3)
        content.setStretchFactor(1, 2)
        self.message = message_label("Click a step on the trace to see its details.")
        self.pages = QStackedWidget()
        self.pages.addWidget(content)
        self.pages.addWidget(self.message)
        self.pages.setCurrentWidget(self.message)
        top = QHBoxLayout()
        top.addWidget(self.heading, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(top)
        layout.addWidget(self.pages, 1)
        self.step = -1

    def show_nothing(self, text: str = "Click a step on the trace to see its details.") -> None:
        self.step = -1
        self.heading.setText("")
        self.message.setText(text)
        self.pages.setCurrentWidget(self.message)

    def show_step(self, details: StepDetails) -> None:
        self.step = details.step
        self.heading.setText(f"Program step {details.step}: {details.name} ({details.kind})")
        self.properties.set_table(details.properties)
        self.properties_view.resizeColumnToContents(0)
        self.codelets.set_table(details.codelets)
        self.codelets_view.resizeColumnToContents(0)
        self.histogram.clear()
        self.bars = None
        if details.balance is not None and details.balance.cycles.size:
            counts, edges = balance_histogram(details.balance)
            self.bars = pg.BarGraphItem(
                x0=edges[:-1], x1=edges[1:], height=counts, brush=step_kind_color(0)
            )
            self.histogram.addItem(self.bars)
            self.histogram.setTitle(None)
        else:
            self.histogram.setTitle("No tile balance: not a compute step", size="9pt")
        _color_plot(self.histogram)
        self.pages.setCurrentIndex(0)
