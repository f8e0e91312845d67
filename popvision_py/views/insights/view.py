"""The Insights page: the fit panel and the fullest tiles beside a histogram of tile memory
on top; findings, the variables at the liveness peak and Model / IPU / Tile facts below.

A report without liveness or an execution profile still shows what can be computed and
says which sections are missing and why. In compare mode the first report is shown.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import ComparePair
from popvision_py.viewmodels.compare_tables import CompareSpec, insights_specs
from popvision_py.viewmodels.insights import MORE_TILES, InsightsViewModel
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.base import ChartDetailsView
from popvision_py.views.insights.findings import FindingsList
from popvision_py.views.insights.histogram import MemoryHistogram
from popvision_py.views.insights.panels import FitPanel, TopTiles
from popvision_py.views.insights.whatif import WhatIfRunner, show_predictions
from popvision_py.views.table_page import TablePage
from profiler_core.errors import ReportError
from profiler_core.insights import insights


class PeakPanel(QWidget):
    """The largest always-live and not-always-live variables at the liveness peak."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.not_always_live = TablePage(sortable=True)
        self.always_live = TablePage(sortable=True)
        tables = QSplitter(Qt.Orientation.Horizontal)
        for title, page in (
            ("Not-always-live at the peak", self.not_always_live),
            ("Always-live", self.always_live),
        ):
            box = QWidget()
            column = QVBoxLayout(box)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(QLabel(title))
            column.addWidget(page, 1)
            tables.addWidget(box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.heading)
        layout.addWidget(tables, 1)

    def show_model(self, model: InsightsViewModel) -> None:
        not_always, always = model.peak_table(False), model.peak_table(True)
        if not_always is None or always is None:
            why = model.found.missing.get("liveness") or model.found.missing.get("graph", "")
            self.heading.setText(f"The liveness peak cannot be shown: {why}.")
            self.not_always_live.show_message("No liveness section.")
            self.always_live.show_message("No liveness section.")
            return
        self.heading.setText(model.peak_title())
        self.not_always_live.show_table(not_always, "No variables are live at the peak.")
        self.always_live.show_table(always, "No always-live variables.")


class InsightsView(ChartDetailsView):
    title = "Insights"
    rail_help = (
        "Does the program fit, and if not, why: the fullest tiles, a histogram of tile "
        "memory, the largest variables at the liveness peak, and findings that name the "
        "operation and the line of your program, with what to try."
    )
    needs = ("target", "memory")

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: InsightsViewModel | None = None
        self.fit = FitPanel()
        self.top_tiles = TopTiles()
        self.histogram = MemoryHistogram()
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.fit)
        column.addWidget(self.top_tiles, 1)
        row = QHBoxLayout()
        row.setContentsMargins(0, 6, 10, 6)  # the histogram's axes end inside the window
        row.addWidget(left, 2)
        row.addWidget(self.histogram, 3)
        self.chart_layout.addLayout(row, 1)
        self.findings = FindingsList()
        self.peak = PeakPanel()
        self.model_facts = TablePage()
        self.ipu_facts = TablePage(sortable=True)
        self.tile_facts = TablePage(sortable=True)
        for page, name, tip in (
            (
                self.findings,
                "Findings",
                "What stands out, worst first, with evidence and what to try.",
            ),
            (self.peak, "Liveness peak", "The largest variables live at the liveness peak."),
            (self.model_facts, "Model", "Facts about the whole program."),
            (self.ipu_facts, "IPU", "The same facts per IPU."),
            (self.tile_facts, "Tile", "The same facts per tile, fullest first."),
        ):
            self.details.addTab(page, name)
            self.details.setTabToolTip(self.details.count() - 1, tip)
        self.top_tiles.tile_clicked.connect(lambda tile: self._select_tiles((tile,)))
        self.findings.tiles_clicked.connect(self._select_tiles)
        self.whatif = WhatIfRunner(self.findings.whatif_bar, self)
        self.findings.try_clicked.connect(self._try)
        self.whatif.finished.connect(self._tried)
        self.whatif.failed.connect(self._not_tried)
        self.clear()

    def compare_specs(self, pair: ComparePair) -> list[CompareSpec]:
        return insights_specs(pair)

    def compute(self, opened: OpenedReport, other: OpenedReport | None) -> InsightsViewModel | str:
        """The view model, or why the report has none (every rule runs here, in the worker)."""
        try:
            found = insights(opened.report, top=MORE_TILES)
        except ReportError as error:
            return f"Insights need the target and memory sections.\n\n{error}"
        return InsightsViewModel(found, opened.name if other is not None else "")

    def build(self, opened: OpenedReport, other: OpenedReport | None) -> str:
        model = self.computed(opened, other)
        if isinstance(model, str):
            return model
        self.model = model
        self.fit.show_model(self.model)
        self.top_tiles.show_model(self.model)
        self.histogram.show_bars(*self.model.histogram_bars(), self.model.limit_kib)
        self.findings.show_model(self.model)
        self.peak.show_model(self.model)
        self.model_facts.show_table(self.model.model_table())
        self.ipu_facts.show_table(self.model.ipu_table())
        self.tile_facts.show_table(self.model.tile_table())
        return ""

    def clear(self) -> None:
        self.model = None
        super().clear()

    def _try(self, item: object, finding: object) -> None:
        """Re-plan one finding's suggestion in a worker (one at a time)."""
        if self.whatif.busy or self.model is None or self.opened is None:
            return
        button = self.findings.buttons.get(finding.title)
        if button is not None:
            button.setEnabled(False)
            button.setText("Trying…")
        self.whatif.start(item, self.opened.report, self.model.found, finding)

    def _tried(self, item: object, model: object) -> None:
        if item is None:
            return
        show_predictions(item, model)
        self.findings.tree.setCurrentItem(item)
        self.findings.show_headline(f"What-if: {model.headline()}")
        self._button_for(item, "Tried", enabled=False)

    def _not_tried(self, item: object, message: str) -> None:
        if item is not None:
            item.insertChild(0, type(item)([f"What-if: {message}", ""]))
            self._button_for(item, "Try it", enabled=True)

    def _button_for(self, item: object, text: str, enabled: bool) -> None:
        button = self.findings.tree.itemWidget(item, 2)
        if button is not None:
            button.setText(text)
            button.setEnabled(enabled)

    def _select_tiles(self, tiles: tuple) -> None:
        if self.opened is not None:
            self.opened.selection.select_tiles(list(tiles))

    def csv_rows(self) -> list[list[object]] | None:
        if self.model is None:
            return None
        rows: list[list[object]] = [["severity", "rule", "finding", "operation", "suggestion"]]
        for f in self.model.findings():
            rows.append([f.severity.label, f.rule, f.title, f.source.label, f.suggestion])
        return rows
