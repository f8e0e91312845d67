"""The Liveness report page: controls, the live-memory chart, and details tabs that follow the
report's selected program steps.

The page writes the user's picks (steps clicked, tiles typed) to ``opened.selection`` and
follows its changes, so steps picked in the Program Tree, tiles picked in Memory and the
operation picked in Operations show here without the views knowing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from PySide6.QtWidgets import QWidget

from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.compare_tables import CompareSpec, liveness_specs
from popvision_py.viewmodels.format import format_count
from popvision_py.viewmodels.liveness import SELECTED_TILES, LivenessViewModel
from popvision_py.viewmodels.liveness_details import (
    DIFFERENCE_HELP,
    always_live_table,
    cycles_table,
    not_always_live_table,
    vertices_table,
)
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.table import ColumnTable, stack_tables
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.liveness.chart import LivenessChart
from popvision_py.views.liveness.controls import LivenessControls
from popvision_py.views.table_panel import TablePanel
from profiler_core.analysis.liveness import LivenessTable, liveness_table
from profiler_core.analysis.tiles import format_tile_selection
from profiler_core.errors import ReportError

PRODUCED_BY = (
    "Liveness and the program steps are written to profile.pop when Poplar's "
    "autoReport.outputGraphProfile option is on (autoReport.all turns it on): run the program "
    'again with POPLAR_ENGINE_OPTIONS=\'{"autoReport.outputGraphProfile":"true"}\'.'
)
MAX_STEP_COLUMNS = 12
NO_STEP = (
    "Click a program step on the chart to see {what} (shift-click adds steps to compare; "
    "steps selected in the Program Tree show here too)."
)


class LivenessView(ChartDetailsView):
    title = "Liveness"
    rail_help = (
        "Memory live at each program step, for all IPUs, one IPU or the selected tiles: where "
        "the peak is, and which variables, vertices and cycles make up a step."
    )
    needs = ("target", "graph", "liveness", "programs")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.models: list[LivenessViewModel] = []  # one per report; two when comparing
        self.charts: list[LivenessChart] = []
        self.control_bar = LivenessControls()
        self.controls_layout.addWidget(self.control_bar)
        self.always_live = TablePanel("variables", "Search variables and debug contexts")
        self.not_always_live = TablePanel("variables", "Search variables and debug contexts")
        self.vertices = TablePanel("vertex types", "Search vertex types")
        self.cycles = TablePanel("rows", "Search steps and kinds")
        tabs = (
            (self.always_live, "Always Live Variables", "Variables live for the whole program."),
            (
                self.not_always_live,
                "Not Always Live Variables",
                "Variables live at the selected steps, largest first.",
            ),
            (self.vertices, "Vertices", "Vertices per codelet of the selected compute steps."),
            (self.cycles, "Cycle Estimates", "Modelled cycles of the selected steps."),
        )
        for index, (panel, name, help_text) in enumerate(tabs):
            self.details.addTab(panel, name)
            self.details.setTabToolTip(index, help_text)
        self.details.currentChanged.connect(lambda _: self._update_details())
        c = self.control_bar
        c.scope_box.currentTextChanged.connect(self._on_scope)
        c.include_always_live.toggled.connect(self._on_include_always_live)
        c.selection_typed.connect(self.select_text)
        c.reset_zoom.clicked.connect(lambda: [chart.reset_zoom() for chart in self.charts])
        self._shown_key: tuple | None = None
        self._always_live: tuple[object, ColumnTable | None] = (None, None)  # computed
        self.clear()

    @property
    def model(self) -> LivenessViewModel | None:
        """The first report's view model (the one the details tabs show)."""
        return self.models[0] if self.models else None

    @property
    def chart(self) -> LivenessChart | None:
        return self.charts[0] if self.charts else None

    # -- building -------------------------------------------------------------------------
    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        super().show_reports(opened, other)
        if self.showing_message() and any(
            o is not None and o.missing(*self.needs) for o in (opened, other)
        ):
            self.message.setText(f"{self.message.text()}\n\n{PRODUCED_BY}")

    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return liveness_specs(pair)

    def compute(self, opened: OpenedReport, other: OpenedReport | None) -> LivenessReady | str:
        """Each report's live bytes per step and the first tab's always-live variables (the
        worker's part of the first show), or why the liveness cannot be shown."""
        wholes = []
        for o in (opened, other):
            if o is None:
                continue
            try:
                wholes.append(liveness_table(o.report))
            except ReportError as error:
                return f"The liveness of {o.name} cannot be shown.\n\n{error}\n\n{PRODUCED_BY}"
        try:
            always = always_live_table(opened.report)
        except ReportError:
            always = None  # the tab says why when it is shown
        return LivenessReady(wholes, always)

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        self._drop_chart()
        ready = self.computed(opened, other)
        if isinstance(ready, str):
            return ready
        self._always_live = (opened.report, ready.always_live)
        reports = [o for o in (opened, other) if o is not None]
        titles = self.side_titles(opened, other)
        for o, whole, title in zip(reports, ready.wholes, titles, strict=True):
            try:
                model = LivenessViewModel(o.report, o.selection, title, whole)
            except ReportError as error:
                self._drop_chart()
                return f"The liveness of {o.name} cannot be shown.\n\n{error}\n\n{PRODUCED_BY}"
            model.include_always_live = self.control_bar.include_always_live.isChecked()
            self.models.append(model)
            self.charts.append(LivenessChart(model))
            self.chart_layout.addWidget(self.charts[-1], 1)
        if len(self.models) > 1:
            self.models[0].share_y_axis(self.models)
            for side in self.models:  # a side's new curve can move the shared y axis
                side.changed.connect(self._on_side_curve)
            self._on_side_curve("curve")
            for here, there in ((0, 1), (1, 0)):  # a step picked on one is shaded on both
                self.models[here].changed.connect(
                    lambda what, h=here, t=there: (
                        self._mirror_steps(h, t) if what == "steps" else None
                    )
                )
            self._mirror_steps(0, 1)
        model = self.models[0]
        self.control_bar.set_scopes(model.scopes, model.scope)
        self.control_bar.select_error.clear()
        self.control_bar.select_box.setText(format_tile_selection(opened.selection.tiles))
        model.changed.connect(self._on_model_changed)
        self._shown_key = None
        self._update_details()
        return ""

    def clear(self) -> None:
        self._drop_chart()
        self._always_live = (None, None)
        super().clear()

    def _drop_chart(self) -> None:
        for model in self.models:
            model.close()
        for chart in self.charts:
            chart.setParent(None)
            chart.deleteLater()
        self.models, self.charts = [], []

    # -- controls -------------------------------------------------------------------------
    def _on_scope(self, scope: str) -> None:
        for model in self.models:
            if scope in model.scopes:  # a compared report may have fewer IPUs
                model.set_scope(scope)

    def _on_include_always_live(self, on: bool) -> None:
        for model in self.models:
            model.set_include_always_live(on)

    def select_text(self, text: str) -> bool:
        """What typing in Select tile and pressing Enter does: the report's selected tiles."""
        if self.model is None:
            return False
        # each report's selection gets the tiles (a compared report with fewer tiles says so)
        ok = all([model.select_text(text) for model in self.models])
        errors = [m.selection_error for m in self.models if m.selection_error]
        self.control_bar.select_error.setText(errors[0] if errors else "")
        if ok and self.model.selection.tiles.size:  # typed tiles are what the user wants drawn
            self.control_bar.scope_box.setCurrentText(SELECTED_TILES)
        return ok

    def _beside_b(
        self, table: ColumnTable, of_b: Callable[[OpenedReport], ColumnTable]
    ) -> ColumnTable:
        """Compare: A's rows then B's (``of_b``), a Report column naming each row's report."""
        if self.other is None or len(self.models) < 2:
            return table
        names = [f"A: {self.opened.name}", f"B: {self.other.name}"]
        return stack_tables([table, of_b(self.other)], names)

    def _mirror_steps(self, here: int, there: int) -> None:
        """Compare: the steps selected on one side are selected on the other (steps are
        compared by number), so both charts shade them."""
        source, target = self.models[here], self.models[there]
        steps = source.selection.steps
        target.selection.select_steps(steps[steps < target.num_steps])

    def _on_side_curve(self, what: str) -> None:
        if what == "curve":
            for chart in self.charts:
                chart.refresh()

    def _on_model_changed(self, what: str) -> None:
        if self.model is None:
            return
        if what == "error":
            errors = [m.selection_error for m in self.models if m.selection_error]
            self.control_bar.select_error.setText(errors[0] if errors else "")
        elif what == "curve":
            self.control_bar.set_scopes(self.model.scopes, self.model.scope)  # tiles picked
            if not self.control_bar.select_box.hasFocus():
                tiles = format_tile_selection(self.model.selection.tiles)
                self.control_bar.select_box.setText(tiles)
        elif what == "steps":
            self._update_details()

    # -- details --------------------------------------------------------------------------
    def _update_details(self) -> None:
        """Fill the shown tab for the selected steps (other tabs are filled when shown)."""
        if self.model is None or self.opened is None or self.showing_compare_tab():
            return
        panel = self.details.currentWidget()
        steps = self.model.selection.steps[:MAX_STEP_COLUMNS]
        steps = steps[(steps >= 0) & (steps < self.model.num_steps)]
        key = (id(self.opened), panel, steps.tobytes())
        if key == self._shown_key:
            return
        self._shown_key = key
        report = self.opened.report
        try:
            if panel is self.always_live:
                table = self._always_live[1] if self._always_live[0] is report else None
                table = table if table is not None else always_live_table(report)
                table = self._beside_b(table, lambda b: always_live_table(b.report))
                self.always_live.show_table(
                    table, f"{format_count(len(table))} always-live variables, largest first"
                )
            elif steps.size == 0:
                what = {
                    self.not_always_live: "the variables live at it",
                    self.vertices: "the vertices it runs",
                    self.cycles: "its cycles",
                }[panel]
                panel.show_message(NO_STEP.format(what=what))
            elif panel is self.not_always_live:
                table = not_always_live_table(report, steps)
                in_b = steps[steps < self.models[-1].num_steps]
                table = self._beside_b(table, lambda b: not_always_live_table(b.report, in_b))
                self.not_always_live.show_table(table, _steps_heading(steps, "live at"))
            elif panel is self.vertices:
                found = vertices_table(report, steps)
                if isinstance(found, str):
                    self.vertices.show_message(found)
                else:
                    self.vertices.show_table(found, _steps_heading(steps, "vertices of"))
            elif panel is self.cycles:
                self.cycles.show_table(cycles_table(report, steps), _steps_heading(steps, "at"))
        except ReportError as error:
            panel.show_message(f"This cannot be shown.\n\n{error}")

    # -- exports and help -----------------------------------------------------------------
    def csv_rows(self) -> list[list[object]] | None:
        panel = self.details.currentWidget()
        if self.model is None or panel.showing_message():
            return None
        table: ColumnTable = panel.model.table
        rows: list[list[object]] = [[c.header for c in table.columns]]
        rows += [
            [table.display(r, c) for c in range(len(table.columns))] for r in range(len(table))
        ]
        return rows

    def help_text(self) -> str:
        return (
            f"{self.rail_help}\n\nOn the chart: wheel zooms the program steps, drag pans, click "
            "selects a step, shift-click adds one to compare, double-click shows all steps. "
            "The shaded steps belong to the operation selected in Operations.\n\nScope: All "
            "IPUs, one IPU, or Selected tiles (type tiles such as 0,5,100-120 in Select tile, "
            "or select them in Memory). With several steps selected, the tables show a column "
            f"per step and a Difference column: {DIFFERENCE_HELP.lower()}"
        )


@dataclass(frozen=True)
class LivenessReady:
    """What the worker computes for the first show (``LivenessView.compute``)."""

    wholes: list[LivenessTable]  # per report: live bytes of all IPUs per step
    always_live: ColumnTable | None  # the first report's always-live variables


def _steps_heading(steps: np.ndarray, what: str) -> str:
    shown = ", ".join(f"{s:,}" for s in steps.tolist())
    return f"{what.capitalize()} step{'s' if steps.size > 1 else ''} {shown}"
