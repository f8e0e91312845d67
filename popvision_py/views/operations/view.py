"""The Operations page: every operation of a software layer (library op, layer, operation
name, debug context) or every framework phase, with its cycles by class and by phase,
vertices, code, memory and FLOPs -- columns that add up, and a totals line beside the other
pages' figures; selecting one selects it (and its program steps) in the report's shared
selection."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QLabel, QWidget

from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.compare_tables import CompareSpec, operations_specs
from popvision_py.viewmodels.debug_chain import MISSING_DEBUG
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.operations import (
    NO_PHASE_LABEL,
    NONE_LABEL,
    REMAINDERS,
    OperationsViewModel,
    operation_label,
)
from popvision_py.viewmodels.report_runs import counted_runs
from popvision_py.viewmodels.table import ColumnTable
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.frozen_column import FrozenColumnTable, freeze_first_column
from popvision_py.views.operations.controls import OperationsControls
from popvision_py.views.operations.details import OperationDetails
from popvision_py.views.selection_following import FollowsSelection
from popvision_py.views.table_model import ColumnTableModel, make_table_view
from profiler_core.errors import ReportError


class OperationsView(FollowsSelection, ChartDetailsView):
    title = "Operations"
    rail_help = (
        "Every operation (PopLibs call, layer, named op) or framework phase with its cycles "
        "split into compute, exchange, sync and other and by the phase they ran in, vertices, "
        "code, memory and FLOPs; the totals line compares them with the other pages. Select "
        "one to see its steps, cycles per tile, FLOPs, shared code and debug contexts; it is "
        "highlighted in the other reports."
    )
    needs = ("graph", "programs")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: OperationsViewModel | None = None
        self.control_bar = OperationsControls()
        self.controls_layout.addWidget(self.control_bar)
        self.table_model = ColumnTableModel(wrap_headers=True)
        self.table = make_table_view(self.table_model, True, FrozenColumnTable)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setStretchLastSection(False)
        # most cycles first, as the analysis orders them (a stable sort keeps its ties)
        self.table.horizontalHeader().setSortIndicator(1, Qt.SortOrder.DescendingOrder)
        self.chart_layout.addWidget(self.table, 1)
        self.frozen = freeze_first_column(self.table)  # labels stay as the columns scroll
        self.totals = QLabel()  # what the rows add up to, beside the other pages' figures
        self.totals.setWordWrap(True)
        self.totals.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.totals.setContentsMargins(8, 2, 8, 4)
        self.chart_layout.addWidget(self.totals)
        self.operation = OperationDetails()
        self.splitter.replaceWidget(1, self.operation).deleteLater()
        self.details = self.operation
        c = self.control_bar
        c.group_by.currentIndexChanged.connect(lambda _: self._rebuild())
        c.group_by.currentIndexChanged.connect(lambda _: self._regroup_compare())
        c.run.currentIndexChanged.connect(self._on_run_picked)
        c.filter.textChanged.connect(self._on_filter)
        c.column_toggled.connect(self._on_column_toggled)
        self.table_model.layoutChanged.connect(self._reselect)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.operation.step_clicked.connect(self._on_step_clicked)
        self._current = ""  # the label of the operation shown in the details
        self.clear()

    # -- building ---------------------------------------------------------------------------
    def _regroup_compare(self) -> None:
        """The comparison tabs match operations by the grouping picked."""
        if self.opened is not None and self.other is not None:
            self._show_compare(self.opened, self.other)

    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return operations_specs(pair, self.control_bar.group())

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self.unfollow_selection()
        if opened.report.debug_or_none() is None and opened.missing("debug") is None:
            return f"Operations are debug contexts grouped.\n\n{MISSING_DEBUG}"
        self.control_bar.set_runs(counted_runs(opened).num_runs, opened.selection.run)
        problem = self._rebuild(opened)
        if problem:
            return problem
        self.follow_selection(opened.selection)
        return ""

    def _rebuild(self, opened: OpenedReport | None = None) -> str:
        opened = opened or self.opened
        if opened is None:
            return ""
        counted = counted_runs(opened)
        try:
            model = OperationsViewModel(counted.report, self.control_bar.group(), counted.run)
        except ReportError as error:
            text = f"The operations of this report cannot be shown.\n\n{error}"
            self.show_message(text)
            return text
        if self.other is not None and not self.compare_problem:  # B's rows beside A's
            try:
                other = counted_runs(self.other)
                model.include_other(OperationsViewModel(other.report, model.group_by, other.run))
            except ReportError as error:
                self.control_bar.note.setText(f"B's operations cannot be listed: {error}")
        self.model = model
        model.columns.search(self.control_bar.filter.text())
        self._current = ""
        self.table_model.set_table(model.columns)
        header = self.table.horizontalHeader()
        if 0 <= header.sortIndicatorSection() < len(model.columns.columns):
            self.table_model.sort(header.sortIndicatorSection(), header.sortIndicatorOrder())
        self.table.resizeColumnsToContents()
        self.frozen.refresh()
        headers = [h for h in model.headers if h not in REMAINDERS]
        self.control_bar.set_columns(headers, model.default_hidden())
        for column, header in enumerate(model.headers):
            self.table.setColumnHidden(column, not self.control_bar.column_shown(header))
        self._show_remainders()
        self.totals.setText(f"{model.totals_text()}\n{model.notes_text()}".strip())
        note = counted.note.split("\n\n")[0]
        if self.other is not None:
            names = f"{opened.name} (A) and {self.other.name} (B)"
            note = f"{note} Comparing {names}: In says which has each operation.".strip()
        self.control_bar.note.setText(note)
        self._update_count()
        self._current = ""
        self.operation.show_none()
        selection = opened.selection
        if selection.operation and selection.operation_group_by == model.group_by:
            self._select_label(selection.operation)
        return ""

    def clear(self) -> None:
        self.model = None
        self.table_model.set_table(ColumnTable([]))
        super().clear()

    # -- table controls ---------------------------------------------------------------------
    def _on_filter(self, text: str) -> None:
        if self.model is None:
            return
        self.table_model.search(text)
        self._update_count()
        self._reselect()

    def _on_column_toggled(self, header: str, shown: bool) -> None:
        if self.model is None:
            return
        headers = self.model.headers
        if header in headers:
            self.table.setColumnHidden(headers.index(header), not shown)
        self._show_remainders()

    def _show_remainders(self) -> None:
        """The cycles of hidden class or phase columns, shown when some are hidden, so the
        columns shown add up to the total."""
        if self.model is None:
            return
        headers = self.model.headers
        hidden = [h for h in headers if not self.control_bar.column_shown(h)]
        for header, shown in self.model.hidden_sums(hidden).items():
            self.table.setColumnHidden(headers.index(header), not shown)
        self.table_model.refresh()

    def _update_count(self) -> None:
        if self.model is not None:
            shown, size = len(self.model.columns), self.model.columns.size
            what = "phases" if self.model.group_by == "phase" else "operations"
            self.control_bar.count.setText(f"{shown:,} of {size:,} {what}")

    def _on_run_picked(self, index: int) -> None:
        if self.opened is not None and index >= 0 and not self.control_bar.filling:
            self.opened.selection.select_run(index)

    # -- selection ----------------------------------------------------------------------------
    def select_operation(self, label: str) -> bool:
        """Select the operation ``label`` (as a click on its row does)."""
        return self._select_label(label)

    def _select_label(self, label: str) -> bool:
        if self.model is None:
            return False
        row = self.model.shown_row_of("" if label in (NONE_LABEL, NO_PHASE_LABEL) else label)
        if row < 0:
            return False
        self.table.selectRow(row)
        self.table.scrollTo(self.table_model.index(row, 0))
        return True

    def _reselect(self) -> None:
        """After a sort or a filter, keep the shown operation's row selected."""
        if self.model is None or not self._current:
            return
        unlabelled = self._current in (NONE_LABEL, NO_PHASE_LABEL)
        row = self.model.shown_row_of("" if unlabelled else self._current)
        blocker = self.table.selectionModel()
        blocker.blockSignals(True)
        try:
            if row >= 0:
                self.table.selectRow(row)
            else:
                self.table.clearSelection()
        finally:
            blocker.blockSignals(False)

    def _on_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self.model is None or not current.isValid() or self.opened is None:
            return
        label = self.model.label_at(current.row())
        # the group without a context is written as "(none)": "" would clear the operation
        self._current = operation_label(label, self.model.group_by)
        try:
            parts = self.model.parts(label)
            self.operation.show_operation(self.model, parts)
        except ReportError as error:
            self.operation.summary.show_message(str(error))
            return
        self.operation.cycles.set_selected(self.opened.selection.tiles)
        self.opened.selection.select_operation(self._current, parts.steps, self.model.group_by)

    def _on_step_clicked(self, step: int) -> None:
        if self.opened is not None:
            self.opened.selection.select_step(step)

    def _on_selection_changed(self, what: str) -> None:
        if self.opened is None or self.model is None:
            return
        selection = self.opened.selection
        if what == "tiles":
            self.operation.cycles.set_selected(selection.tiles)
        elif what == "run":
            self.control_bar.set_runs(counted_runs(self.opened).num_runs, selection.run)
            self._rebuild()
        elif what == "operation" and selection.operation != self._current:
            if selection.operation and selection.operation_group_by == self.model.group_by:
                self._select_label(selection.operation)
            elif selection.operation:
                self._show_holding(selection.operation_steps)
            else:
                self._current = ""
                self.table.clearSelection()
                self.operation.show_none()

    def _show_holding(self, steps: object) -> None:
        """An operation picked in another grouping (a graph node): the row holding its
        steps here is selected and shown, without picking that row for the other pages."""
        assert self.model is not None
        label = self.model.label_holding(steps)
        row = self.model.shown_row_of(label) if label is not None else -1
        blocker = self.table.selectionModel()
        blocker.blockSignals(True)
        try:
            if row < 0:
                self.table.clearSelection()
            else:
                self.table.selectRow(row)
                self.table.scrollTo(self.table_model.index(row, 0))
        finally:
            blocker.blockSignals(False)
        self.table.viewport().update()
        if row < 0:
            self._current = ""
            self.operation.show_none()
            return
        self._current = operation_label(label, self.model.group_by)
        self.operation.show_operation(self.model, self.model.parts(label))

    # -- exports and help -------------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        if self.model is None:
            return None
        table = self.model.columns
        rows: list[list[object]] = [[c.header for c in table.columns]]
        rows += [[table.raw(r, c) for c in range(len(table.columns))] for r in range(len(table))]
        return rows

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nGroup by: library op (poplin::matMul ...), layer (outermost "
            "name scope), operation (the debug name of the call), full debug context, or "
            "phase (a pipeline's ramp-up, steady state and ramp-down, the feeds, the gradient "
            "all-reduce: when the operations ran). Each cycle is the operation's that ran it; "
            "the phase columns say when. Columns chooses the columns shown (the cycles of "
            "hidden ones get a column of their own); click a header to sort; Filter keeps "
            "operations whose name contains the text."
        )
