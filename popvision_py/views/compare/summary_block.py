"""The Summary's comparison block: the A/B legend and banner over tabs of memory by category
and cycles by step kind (A, B, Δ, %), built by the same ``CompareTabs`` as every view."""

from __future__ import annotations

from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

from popvision_py.viewmodels.compare import pair_of
from popvision_py.viewmodels.compare_tables import summary_specs
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.views.compare.legend import CompareLegend
from popvision_py.views.compare.tabs import CompareTabs
from profiler_core.errors import ReportError

SECTIONS = ("target", "memory", "programs", "execution", "graph")


class CompareBlock(QWidget):
    """Legend, banner and the comparison tables of two reports."""

    def __init__(self, a: OpenedReport, b: OpenedReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pair = pair_of(a, b)
        self.legend = CompareLegend()
        self.legend.show_pair(self.pair)
        self.tabs_widget = QTabWidget()
        self.tabs_widget.setDocumentMode(True)
        self.tabs_widget.setMinimumHeight(300)
        self.tabs = CompareTabs(self.tabs_widget)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.legend)
        layout.addWidget(self.tabs_widget)
        missing = self.pair.missing_text(*SECTIONS)
        if missing:
            self.tabs.show_error(missing)
            return
        try:
            self.tabs.show(self.pair, summary_specs(self.pair))
        except (ReportError, KeyError, ValueError, IndexError) as error:
            self.tabs.show_error(f"A and B cannot be compared: {error}")
