"""The Runs page: a folder of reports (or a sweep) as one table, a row per report, filling as
the reports are read; above it a scatter of two figures (cycles against peak memory by
default; fits / does not fit coloured, or a sweep value as an axis or colour) and a figure over
the runs in name order. Picking one report opens it; picking two compares them.

The window gives it a ``RunsModel`` with ``show_runs`` and each batch of rows with
``add_rows`` (``app/runs_opening.py``); opening a report keeps the runs shown here.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtWidgets import QApplication, QHBoxLayout, QWidget

from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.runs import RunsModel, RunsTable
from popvision_py.views.base import ChartDetailsView, ReportView
from popvision_py.views.runs.charts import RunsLine, RunsScatter
from popvision_py.views.runs.controls import RunsControls
from popvision_py.views.table_panel import TablePanel

NO_RUNS = (
    "No runs are open.\n\nOpen a folder of reports with File > Open (a sweep's --out folder, "
    "CI's reports, any folder with reports below it): each report is a row here, with its "
    "cycles, peak memory and whether it fits. Make a sweep with\n"
    "popvision-cli sweep --out DIR -- script.py '{a,b}'"
)


class RunsView(ChartDetailsView):
    title = "Runs"
    rail_help = (
        "Many reports at once (a folder of reports or a sweep): a row per report with its "
        "sweep values, cycles, peak live memory, fullest tile and whether it fits; a scatter "
        "of cycles against memory and a line over the runs. Pick one to open it, two to "
        "compare them."
    )
    needs = ()
    #: paths of the reports to open: one opens it, two compare them
    open_requested = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: RunsModel | None = None
        self.table: RunsTable | None = None
        self.picked: list[int] = []  # source rows, in the order picked
        self._sort: tuple[int, Qt.SortOrder] | None = None
        self.control_bar = RunsControls()
        self.controls_layout.addWidget(self.control_bar)
        self.scatter = RunsScatter()
        self.line = RunsLine()
        charts = QWidget()
        row = QHBoxLayout(charts)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.scatter, 3)
        row.addWidget(self.line, 2)
        self.chart_layout.addWidget(charts)
        self.panel = TablePanel("reports", "Filter by report, sweep value or warning")
        self.details.addTab(self.panel, "Runs")
        self.details.setTabToolTip(0, "A row per report; click a header to sort")
        self._connect()
        self.show_message(NO_RUNS)

    def _connect(self) -> None:
        c = self.control_bar
        c.show_choice.currentTextChanged.connect(self._on_show)
        for combo in (c.x_choice, c.y_choice, c.color_choice):
            combo.currentIndexChanged.connect(lambda _: self._draw_charts())
        c.open_button.clicked.connect(lambda: self._open(self.picked[-1:]))
        c.compare_button.clicked.connect(lambda: self._open(self.picked[-2:]))
        self.panel.search.textChanged.connect(lambda _: self._after_table_change())
        table = self.panel.table
        table.horizontalHeader().sortIndicatorChanged.connect(self._on_sort)
        table.doubleClicked.connect(lambda index: self._open([self._source_row(index.row())]))
        for chart in (self.scatter, self.line):
            chart.row_clicked.connect(self.pick_row)
            chart.describe = self._describe

    def give_chart_room(self) -> None:
        """Charts and table share the page: the table is what a folder of runs is read by."""
        sizes = self.splitter.sizes()
        total = sum(sizes)
        if total > 0 and abs(sizes[0] - total // 2) > total // 10:
            self.splitter.setSizes([total // 2, total - total // 2])

    # -- what the window calls -----------------------------------------------------------
    def show_runs(self, model: RunsModel) -> None:
        """Show ``model`` (its rows so far; more come with ``add_rows``)."""
        self.model, self.picked, self._sort = model, [], None
        c = self.control_bar
        c.set_choices(c.x_choice, model.axis_choices(), "total_cycles")
        c.set_choices(c.y_choice, model.axis_choices(), "peak_live_bytes")
        c.set_choices(c.color_choice, model.color_choices(), "fits")
        c.show_choice.setCurrentIndex(0)
        self.pages.setCurrentIndex(0)
        self._fresh = True
        self.refresh()

    def add_rows(self, batch: dict) -> None:
        if self.model is not None:
            self.model.add(batch)
            self.refresh()

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        ReportView.show_reports(self, opened, other)  # the runs stay as they are

    def clear(self) -> None:
        ReportView.clear(self)  # a report closed: the runs stay

    def refresh(self) -> None:
        """The table and charts afresh from the model (the sort and picks kept)."""
        model = self.model
        if model is None:
            return
        table = model.table()
        picked = list(self.picked)  # a model reset clears the table's selection
        self.panel.show_table(table, model.title)
        self.table, self.picked = table, picked
        if self._sort is not None:
            header = self.panel.table.horizontalHeader()
            self._restoring = True
            header.setSortIndicator(*self._sort)  # sorts the new table the same way
            header.setSortIndicatorShown(True)
            self._restoring = False
            self.panel.model.sort(*self._sort)
        self.control_bar.loaded.setText(model.progress_text())
        self._after_table_change()

    # -- rows shown and picked -------------------------------------------------------------
    def shown_rows(self) -> np.ndarray:
        return np.zeros(0, np.int64) if self.table is None else self.table.rows.copy()

    def pick_row(self, row: int) -> None:
        """Pick the report of source row ``row`` (a click on its point), adding it to the
        pick when Ctrl is held."""
        add = bool(QApplication.keyboardModifiers() & Qt.KeyboardModifier.ControlModifier)
        self._select([*self.picked, row] if add else [row])

    def _select(self, rows: list[int]) -> None:
        if self.table is None:
            return
        view = self.panel.table
        selection = QItemSelection()
        for row in rows:
            at = np.flatnonzero(self.table.rows == row)
            if at.size:
                index = self.panel.model.index(int(at[0]), 0)
                selection.select(index, index)
        flags = QItemSelectionModel.SelectionFlag
        view.selectionModel().select(selection, flags.ClearAndSelect | flags.Rows)
        if rows and selection.indexes():
            view.scrollTo(selection.indexes()[0])

    def _on_selection(self) -> None:
        rows = sorted({i.row() for i in self.panel.table.selectionModel().selectedRows()})
        now = [self._source_row(r) for r in rows]
        kept = [r for r in self.picked if r in now]
        self.picked = kept + [r for r in now if r not in kept]
        self._draw_picks()

    def _source_row(self, shown: int) -> int:
        return int(self.table.rows[shown]) if self.table is not None else -1

    def _after_table_change(self) -> None:
        view = self.panel.table
        selection = view.selectionModel()
        if not getattr(selection, "_runs_connected", False):
            selection.selectionChanged.connect(lambda *_: self._on_selection())
            selection._runs_connected = True  # a model reset keeps the selection model
        shown = set(self.shown_rows().tolist())
        picked = [r for r in self.picked if r in shown]  # a filtered-out report is unpicked
        self._select(picked)
        self.picked = picked
        self._draw_charts()

    def _draw_charts(self) -> None:
        model = self.model
        if model is None or self.table is None:
            return
        c = self.control_bar
        rows = self.table.rows
        x_key, y_key = c.x_choice.currentData(), c.y_choice.currentData()
        color = c.color_choice.currentData() or "fits"
        if x_key is None or y_key is None:
            return
        groups = model.groups(rows, x_key, y_key, color)
        x_axis, y_axis = model.axis(x_key, rows), model.axis(y_key, rows)
        title = f"{y_axis.label.split(' (')[0]} against {x_axis.label.split(' (')[0].lower()}"
        self.scatter.show_groups(groups, x_axis, y_axis, title)
        ordered, values = model.over_runs(rows, y_key)
        names = [model.report[r] for r in ordered.tolist()]
        fits = [model.fit[r] for r in ordered.tolist()]
        self.line.show_series(ordered, values, names, fits, y_axis)
        for chart in (self.scatter, self.line):
            chart.set_colors()
        self._draw_picks()

    def _describe(self, row: int) -> str:
        """A point's tooltip: the report, its sweep values and figures, as the table says."""
        table = self.table
        if table is None or row < 0:
            return ""
        return "\n".join(
            f"{column.header}: {column.display(row)}"
            for column in table.columns
            if column.display(row) not in ("", "—")
        )

    def _draw_picks(self) -> None:
        self.scatter.pick(self.picked)
        self.line.pick(self.picked)
        model = self.model
        paths = [model.path[r] for r in self.picked] if model is not None else []
        self.control_bar.open_button.setEnabled(len(paths) >= 1 and bool(paths[-1]))
        self.control_bar.compare_button.setEnabled(len(paths) >= 2 and all(paths[-2:]))

    def _on_show(self, choice: str) -> None:
        if self.model is not None:
            self.model.show = choice
            self.refresh()

    def _on_sort(self, column: int, order: Qt.SortOrder) -> None:
        if not getattr(self, "_restoring", False):
            self._sort = (column, order)  # the user's: kept as rows come
            self._after_table_change()

    def _open(self, rows: list[int]) -> None:
        model = self.model
        if model is None or not rows or any(r < 0 for r in rows):
            return
        paths = [model.path[r] for r in rows]
        if all(paths):
            self.open_requested.emit(paths)

    # -- exports ----------------------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        if self.table is None:
            return None
        table = self.table
        header = [column.header for column in table.columns]
        return [header] + [
            [table.display(row, col) for col in range(len(table.columns))]
            for row in range(len(table))
        ]
