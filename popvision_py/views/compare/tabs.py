"""Comparison tabs in a view's details: one ``TablePanel`` per ``CompareSpec`` showing A, B,
Δ (B - A) and %, largest change first, changed rows tinted. Every view uses this one helper."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QSplitter, QTabWidget, QWidget

from popvision_py.viewmodels.compare import ComparePair, delta_table
from popvision_py.viewmodels.compare_tables import CompareSpec
from popvision_py.views.compare.curves import CompareCurves
from popvision_py.views.table_panel import TablePanel


class CompareTabs:
    """The comparison tabs of one details ``QTabWidget``, put first and removed on clear."""

    def __init__(self, details: QTabWidget) -> None:
        self.details = details
        self.panels: dict[str, TablePanel] = {}
        self.curves: dict[str, CompareCurves] = {}
        self.pages: dict[str, QWidget] = {}  # the tab of each title (a panel, or a splitter)
        # Tables whose rows are costly (400,000 variables matched by name) are made when
        # their tab is first opened, so the view's first paint does not wait for them.
        self.pending: dict[str, CompareSpec] = {}
        self.pair: ComparePair | None = None
        details.currentChanged.connect(lambda _: self._fill_pending())

    def show(self, pair: ComparePair, specs: list[CompareSpec]) -> None:
        """Show ``specs``; the tab the user was on stays current when it is shown again."""
        current = next((t for t, p in self.pages.items() if p is self.details.currentWidget()),
                       None)  # fmt: skip
        self.clear()
        self.pair = pair
        for index, spec in enumerate(specs):
            panel = TablePanel(spec.noun, f"Filter {spec.noun} by name")
            self.panels[spec.title] = panel
            if callable(spec.sides):
                panel.show_message(f"{spec.heading}: made when this tab is opened.")
                self.pending[spec.title] = spec
                self.pages[spec.title] = panel
                self.details.insertTab(index, panel, spec.title)
                continue
            table = delta_table(spec.sides, spec.key_header, pair.names, spec.kind)
            panel.show_table(table, spec.heading)
            _fit_key_column(panel, spec.sides.keys)
            page: QWidget = panel
            if spec.chart is not None:
                curves = CompareCurves(*spec.chart, spec.kind)
                curves.show_sides(spec.sides, pair.names)
                self.curves[spec.title] = curves
                # Side by side: the details are short and wide, so curves over the table
                # left each a strip too thin to read.
                page = QSplitter(Qt.Orientation.Horizontal)
                page.addWidget(curves)
                page.addWidget(panel)
                page.setStretchFactor(0, 1)
                page.setStretchFactor(1, 1)
                page.setChildrenCollapsible(False)
                page.setMinimumHeight(120)  # the details share the page: never grow the window
            self.pages[spec.title] = page
            self.details.insertTab(index, page, spec.title)
            self.details.setTabToolTip(index, f"{spec.heading}: A, B and B - A")
        if current in self.pages:
            self.details.setCurrentWidget(self.pages[current])
        elif specs:
            self.details.setCurrentIndex(0)

    def _fill_pending(self) -> None:
        current = self.details.currentWidget()
        title = next((t for t in self.pending if self.pages.get(t) is current), None)
        if title is None or self.pair is None:
            return
        spec = self.pending.pop(title)
        sides = spec.sides()  # type: ignore[operator]
        panel = self.panels[title]
        panel.show_table(delta_table(sides, spec.key_header, self.pair.names, spec.kind),
                         spec.heading)  # fmt: skip
        _fit_key_column(panel, sides.keys)

    def add_page(self, title: str, page: QWidget, index: int = 0) -> None:
        """A comparison tab that is not a table (Execution Trace's stacked runs)."""
        self.pages[title] = page
        self.details.insertTab(index, page, title)
        self.details.setCurrentIndex(index)

    def show_error(self, text: str) -> None:
        """The comparison could not be made (a damaged side): say so in one tab."""
        self.clear()
        panel = TablePanel("rows", "")
        panel.show_message(text)
        self.panels["Compare"] = self.pages["Compare"] = panel
        self.details.insertTab(0, panel, "Compare")
        self.details.setCurrentIndex(0)

    def clear(self) -> None:
        for page in self.pages.values():
            index = self.details.indexOf(page)
            if index >= 0:
                self.details.removeTab(index)
            page.deleteLater()
        self.panels, self.curves, self.pages, self.pending = {}, {}, {}, {}


def _fit_key_column(panel: TablePanel, keys: Sequence[str]) -> None:
    """The names are what the user reads first: wide enough for the longest of a sample
    (never every row), at most 420 px, before the table is shown."""
    sample = sorted(keys[:500], key=len)[-1:] if keys else [""]
    width = panel.table.fontMetrics().horizontalAdvance(sample[0]) + 48  # swatch and margin
    panel.table.setColumnWidth(0, min(max(width, 120), 420))
