"""The Program Tree page: the program as written (Sequence, Repeat, Execute ...) with the
program steps each node lowered to, coloured by step kind, searchable, and following the
report's shared selection (steps picked elsewhere, the selected operation's steps)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from PySide6.QtCore import QEvent, QModelIndex
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeView, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.compare_tables import CompareSpec, program_tree_specs
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.program_details import line_details
from popvision_py.viewmodels.program_tree import ProgramTreeViewModel
from popvision_py.viewmodels.report_runs import counted_runs
from popvision_py.viewmodels.selection import ReportSelection
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.program_tree.controls import ProgramTreeControls
from popvision_py.views.program_tree.details import LineDetailsTabs
from popvision_py.views.program_tree.model import ProgramTreeModel
from popvision_py.views.step_legend import StepClassLegend
from profiler_core.analysis.program_tree import program_tree
from profiler_core.errors import ReportError

EXPAND_BUDGET = 5_000
"""Expand all stops once this many lines would show: Qt lays out every shown line."""
REVEAL_HIGHLIGHTS = 50
"""How many of the selected operation's steps are expanded to when it is picked."""


def expand_lines(view: QTreeView, model: ProgramTreeModel, lines: Iterable[int]) -> None:
    """Expand ``lines`` (parents first) with one layout at the end, not one per line."""
    view.setUpdatesEnabled(False)
    try:
        for line in lines:
            view.expand(model.index_of_line(line))
    finally:
        view.setUpdatesEnabled(True)


class ProgramTreeView(ChartDetailsView):
    title = "Program Tree"
    rail_help = (
        "The program as written (Sequence, Repeat, Execute, Copy ...) with the program steps "
        "each node lowered to, coloured by step kind, with executions and cycles. Select a "
        "line to see its compute set, vertices, exchange and debug context."
    )
    needs = ("graph", "programs")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: ProgramTreeViewModel | None = None
        self.tree_model: ProgramTreeModel | None = None
        self.control_bar = ProgramTreeControls()
        self.controls_layout.addWidget(self.control_bar)
        self.tree = QTreeView()
        self.tree.setUniformRowHeights(True)  # rows are never measured one by one
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.header().setStretchLastSection(False)
        self.chart_layout.addWidget(self.tree, 1)
        self.legend = StepClassLegend("(a node: the kind its own steps spend most cycles on)")
        self.chart_layout.addWidget(self.legend)
        self.line_details = LineDetailsTabs(self.details)
        c = self.control_bar
        c.sections.currentChanged.connect(self._on_section)
        c.search.textChanged.connect(self._on_search_text)
        c.search.step.connect(self.go_to_match)
        c.next.clicked.connect(lambda: self.go_to_match(False))
        c.previous.clicked.connect(lambda: self.go_to_match(True))
        c.expand.clicked.connect(self.expand_all)
        c.collapse.clicked.connect(self.tree.collapseAll)
        self._written_steps: np.ndarray | None = None
        self._following = False
        self._execution_note = ""
        self._listening: ReportSelection | None = None
        self.clear()

    # -- building ---------------------------------------------------------------------------
    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return program_tree_specs(pair)

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self._disconnect()
        counted = counted_runs(opened)
        try:
            tree = program_tree(counted.report, counted.run)
            programs = opened.report.programs
            strings = opened.report.graph.strings
        except ReportError as error:
            return f"The program tree of this report cannot be shown.\n\n{error}"
        self.model = ProgramTreeViewModel(
            tree, programs.step_kind, programs.step_name, strings, counted.executed
        )
        self.tree_model = ProgramTreeModel(self.model, self._dark())
        self.tree.setModel(self.tree_model)
        self.tree.selectionModel().currentChanged.connect(self._on_current)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, 120)
        self._execution_note = counted.note.split("\n\n")[0]
        if other is not None:
            self._execution_note = (
                f"{self._execution_note} Comparing: this is {opened.name}.".strip()
            )
        self.control_bar.note.setText(self._execution_note)
        self.control_bar.sections.setCurrentIndex(0)
        self.control_bar.sections.setTabEnabled(1, self.model.lines.sections[1].size > 0)
        self.line_details.show_none()
        self._written_steps = None
        opened.selection.changed.connect(self._on_selection_changed)
        self._listening = opened.selection
        self._on_search_text(self.control_bar.search.text())
        self._follow_operation()
        self._follow_steps()
        self.tree.expandToDepth(0)
        return ""

    def clear(self) -> None:
        self._disconnect()
        self.model = self.tree_model = None
        self.tree.setModel(None)
        super().clear()

    def _disconnect(self) -> None:
        if self._listening is not None:
            self._listening.changed.disconnect(self._on_selection_changed)
            self._listening = None

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        self._disconnect()
        super().show_reports(opened, other)

    def _dark(self) -> bool:
        return chart_colors(self).background != "#ffffff"

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if self.tree_model is not None:
            self.tree_model.set_dark(self._dark())
            self.tree.viewport().update()

    # -- sections, expansion ----------------------------------------------------------------
    def _on_section(self, section: int) -> None:
        if self.tree_model is None or section < 0:
            return
        self.tree_model.set_section(section)
        self.tree.expandToDepth(0)
        self._on_search_text(self.control_bar.search.text())

    def expand_all(self) -> int:
        """Expand every node, or the first ones when that would show over EXPAND_BUDGET
        lines; the number of lines then shown."""
        if self.model is None or self.tree_model is None:
            return 0
        plan, shown, complete = self.model.lines.expand_plan(self.model.section, EXPAND_BUDGET)
        expand_lines(self.tree, self.tree_model, plan)
        note = (
            ""
            if complete
            else (f"Expanded the first {shown:,} lines; expand further nodes by hand.")
        )
        self.control_bar.note.setText(note or self._execution_note)
        return shown

    def reveal(self, line: int) -> None:
        """Expand to ``line``, make it current and scroll to it (switching section)."""
        if self.model is None or self.tree_model is None or line < 0:
            return
        section = int(self.model.lines.section_of[line])
        if section < 0:
            return
        if section != self.model.section:
            self.control_bar.sections.setCurrentIndex(section)
        expand_lines(self.tree, self.tree_model, self.model.lines.ancestors(line))
        index = self.tree_model.index_of_line(line)
        self._following = True
        try:
            self.tree.setCurrentIndex(index)
        finally:
            self._following = False
        self.tree.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self._show_details(line)

    def current_line(self) -> int:
        index = self.tree.currentIndex()
        return int(index.internalId()) if index.isValid() else -1

    # -- search -----------------------------------------------------------------------------
    def _on_search_text(self, text: str) -> None:
        if self.model is None:
            return
        self.model.search(text)
        self.control_bar.matches.setText(self.model.match_text())

    def go_to_match(self, backwards: bool = False) -> int:
        """Reveal the next (previous) match and select it; its line, -1 for none."""
        if self.model is None:
            return -1
        line = self.model.next_match(backwards)
        self.control_bar.matches.setText(self.model.match_text())
        if line >= 0:
            self.reveal(line)
            self._write_selection(line)
        return line

    # -- the shared selection -----------------------------------------------------------------
    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if self._following or not current.isValid():
            return
        line = int(current.internalId())
        self._show_details(line)
        self._write_selection(line)

    def _write_selection(self, line: int) -> None:
        """A step line selects that step; a node line selects every step of its subtree, so
        Liveness and the Execution Trace show the node's whole span."""
        if self.model is None or self.opened is None:
            return
        steps = self.model.lines.subtree_steps(line)
        self._written_steps = steps
        self.opened.selection.select_steps(steps)

    def _on_selection_changed(self, what: str) -> None:
        try:
            if what == "steps":
                self._follow_steps()
            elif what == "operation":
                self._follow_operation()
            elif what == "run" and self.opened is not None:
                self.show_reports(self.opened, self.other)
        except ReportError as error:
            self.show_message(f"The program tree cannot be updated.\n\n{error}")

    def _follow_steps(self) -> None:
        if self.model is None or self.opened is None:
            return
        steps = self.opened.selection.steps
        if self._written_steps is not None and np.array_equal(steps, self._written_steps):
            return  # our own pick coming back
        self._written_steps = None
        if steps.size:
            self.reveal(self.model.lines.line_of_step(int(steps[0])))

    def _follow_operation(self) -> None:
        if self.model is None or self.opened is None or self.tree_model is None:
            return
        self.model.set_highlighted_steps(self.opened.selection.operation_steps)
        for line in self.model.highlighted_lines(REVEAL_HIGHLIGHTS):
            expand_lines(self.tree, self.tree_model, self.model.lines.ancestors(line))
        self.tree.viewport().update()

    # -- details ------------------------------------------------------------------------------
    def _show_details(self, line: int) -> None:
        if self.model is None or self.opened is None:
            return
        report = self.opened.report
        try:
            details = line_details(self.model, line, report.graph, report.programs,
                                   report.debug_or_none())  # fmt: skip
        except ReportError as error:
            self.line_details.properties.show_message(str(error))
            return
        self.line_details.show(details, report.debug_or_none())

    def csv_rows(self) -> list[list[object]] | None:
        return self.model.csv_rows() if self.model is not None else None

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nControl Programs are the engine programs; Functions are "
            "bodies run by Call. A node line selects all steps of its subtree in the shared "
            "selection; a step line selects that step. Lines of the operation selected in "
            "Operations are highlighted. Search: Enter / Shift+Enter for next / previous."
        )
