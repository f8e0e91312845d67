"""The Summary page: program, target, memory, liveness, execution and files, as label/value
groups; in compare mode a value column per report."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QLabel,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.summary import SummaryRow, SummarySection, summary_sections
from popvision_py.views.base import ReportView


class SummaryView(ReportView):
    title = "Summary"
    rail_help = (
        "The program and its target, memory totals against capacity, tiles over the "
        "limit, peak liveness, cycles and time of each run, and the report's files."
    )

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll)
        self.sections: list[list[SummarySection]] = []
        self.value_labels: dict[tuple[str, str], list[QLabel]] = {}
        self.clear()

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        super().show_reports(opened, other)
        self.sections = [summary_sections(o) for o in (opened, other) if o is not None]
        names = [o.name for o in (opened, other) if o is not None] if other else []
        self._fill(names)

    def clear(self) -> None:
        super().clear()
        self.sections = []
        self._fill([])

    def value(self, section: str, label: str, report: int = 0) -> str:
        """The text shown for ``label`` in ``section`` (for tests and the CSV export)."""
        return self.value_labels[(section, label)][report].text()

    def _fill(self, names: list[str]) -> None:
        page = QWidget()
        column = QVBoxLayout(page)
        column.setContentsMargins(16, 12, 16, 12)
        column.setSpacing(10)
        self.value_labels = {}
        if not self.sections:
            column.addWidget(QLabel("No report is open."))
        for index, section in enumerate(self.sections[0] if self.sections else []):
            others = [s[index] if index < len(s) else None for s in self.sections]
            column.addWidget(self._group(section.title, others, names))
        column.addStretch(1)
        self.scroll.setWidget(page)

    def _group(
        self, title: str, sections: list[SummarySection | None], names: list[str]
    ) -> QGroupBox:
        box = QGroupBox(title)
        grid = QGridLayout(box)
        grid.setHorizontalSpacing(24)
        grid.setVerticalSpacing(4)
        grid.setColumnMinimumWidth(0, 190)
        for i, name in enumerate(names):
            header = QLabel(f"<b>{name}</b>")
            grid.addWidget(header, 0, i + 1)
        first_row = 1 if names else 0
        labels: list[str] = []
        for section in sections:
            for row in section.rows if section else []:
                if row.label not in labels:
                    labels.append(row.label)
        for r, label in enumerate(labels):
            rows = [_row(s, label) for s in sections]
            known = next(row for row in rows if row is not None)
            name = QLabel(label)
            name.setToolTip(known.help)
            grid.addWidget(name, first_row + r, 0, Qt.AlignmentFlag.AlignTop)
            shown = []
            for i, row in enumerate(rows):
                value = QLabel(row.value if row else "—")
                value.setWordWrap(True)
                value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                value.setToolTip(row.help if row else "Not in this report.")
                if row is not None and row.warning:
                    value.setStyleSheet(f"color: {chart_colors(self).limit}; font-weight: bold")
                grid.addWidget(value, first_row + r, i + 1)
                shown.append(value)
            self.value_labels[(title, label)] = shown
        grid.setColumnStretch(len(sections), 1)
        return box

    def csv_rows(self) -> list[list[object]] | None:
        if not self.sections:
            return None
        rows: list[list[object]] = [
            ["section", "item", *[f"report {i}" for i in range(len(self.sections))]]
        ]
        for (section, label), values in self.value_labels.items():
            rows.append([section, label, *[v.text() for v in values]])
        return rows


def _row(section: SummarySection | None, label: str) -> SummaryRow | None:
    if section is None:
        return None
    return next((row for row in section.rows if row.label == label), None)
