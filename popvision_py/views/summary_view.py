"""The Summary page: program, target, framework, graph, memory, liveness, execution,
instrumentation and files as label/value blocks, and the engine options as a filterable
table; in compare mode a value column per report. Blocks fold away, and stay so (QSettings)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QGridLayout,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.compare import pair_of
from popvision_py.viewmodels.opened import OpenedReport
from popvision_py.viewmodels.summary import (
    OPTIONS_TITLE,
    SummaryRow,
    SummarySection,
    options_table,
    summary_sections,
)
from popvision_py.views.base import ReportView
from popvision_py.views.collapsible import CollapsibleBlock
from popvision_py.views.compare.summary_block import CompareBlock
from popvision_py.views.plain_text import plain_label, plain_tooltip
from popvision_py.views.table_model import (
    ColumnTableModel,
    make_table_view,
    size_columns_from_sample,
)


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
        self.blocks: dict[str, CollapsibleBlock] = {}
        self.options_model = ColumnTableModel()
        self.options_filter: QLineEdit | None = None
        self.settings: object | None = None  # AppSettings: which blocks are folded away
        self._selectable = SelectableOnHover(self)
        self.clear()

    def attach_settings(self, settings: object) -> None:
        """Remember folded blocks in ``settings`` (``closed_blocks`` / ``set_block_open``)."""
        self.settings = settings

    def show_reports(self, opened: OpenedReport, other: OpenedReport | None = None) -> None:
        super().show_reports(opened, other)
        # The loader's worker made the opened reports' sections (OpenedReport.summary).
        self.sections = [o.summary or summary_sections(o) for o in (opened, other) if o]
        names = list(pair_of(opened, other).names) if other is not None else []
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
        self.blocks = {}
        if not self.sections:
            column.addWidget(QLabel("No report is open."))
        self.compare_block = None
        if self.opened is not None and self.other is not None:
            self.compare_block = CompareBlock(self.opened, self.other)
            block = CollapsibleBlock("Comparison (B - A)", self.compare_block)
            column.addWidget(block)
        closed = self.settings.closed_blocks("summary") if self.settings else set()  # type: ignore[attr-defined]
        for index, section in enumerate(self.sections[0] if self.sections else []):
            others = [s[index] if index < len(s) else None for s in self.sections]
            if section.options is not None:
                content = self._options(others, names)
            else:
                content = self._group(section.title, others, names)
            block = CollapsibleBlock(section.title, content)
            block.set_open(section.title not in closed)
            block.toggled.connect(self._on_block_toggled)
            self.blocks[section.title] = block
            column.addWidget(block)
        column.addStretch(1)
        self.scroll.setWidget(page)

    def _on_block_toggled(self, title: str, open_: bool) -> None:
        if self.settings is not None:
            self.settings.set_block_open("summary", title, open_)  # type: ignore[attr-defined]

    def _options(self, sections: list[SummarySection | None], names: list[str]) -> QWidget:
        """The options every report was written with, filtered by a search box."""
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setContentsMargins(0, 0, 0, 0)
        self.options_filter = QLineEdit()
        self.options_filter.setPlaceholderText("Filter options, e.g. autoReport or debug")
        self.options_filter.setToolTip("Show only the options whose name or value contains this.")
        self.options_filter.setClearButtonEnabled(True)
        self.options_filter.textChanged.connect(self.options_model.search)
        self.options_model.set_table(
            options_table([s.options or {} if s else {} for s in sections], names)
        )
        table = make_table_view(self.options_model, sortable=True)
        table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # by name, as options read
        table.setMinimumHeight(220)
        layout.addWidget(self.options_filter)
        layout.addWidget(table)
        size_columns_from_sample(table, sample=200)
        return content

    def _group(
        self, title: str, sections: list[SummarySection | None], names: list[str]
    ) -> QWidget:
        box = QWidget()
        grid = QGridLayout(box)
        grid.setContentsMargins(8, 0, 8, 4)
        grid.setHorizontalSpacing(24)
        grid.setVerticalSpacing(4)
        grid.setColumnMinimumWidth(0, 190)
        for i, name in enumerate(names):
            header = plain_label(name)  # a report's name: plain text, bold by font
            font = header.font()
            font.setBold(True)
            header.setFont(font)
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
            name.setToolTip(plain_tooltip(known.help))
            grid.addWidget(name, first_row + r, 0, Qt.AlignmentFlag.AlignTop)
            shown = []
            for i, row in enumerate(rows):
                value = QLabel(row.value if row else "—")
                value.setWordWrap(True)
                value.installEventFilter(self._selectable)  # selectable once pointed at
                value.setToolTip(plain_tooltip(row.help if row else "Not in this report."))
                if row is not None and row.warning:
                    value.setStyleSheet(f"color: {chart_colors(self).limit}; font-weight: bold")
                grid.addWidget(value, first_row + r, i + 1)
                shown.append(value)
            self.value_labels[(title, label)] = shown
        for column in range(1, len(sections) + 1):  # the reports share the width evenly
            grid.setColumnStretch(column, 1)
        return box

    def csv_rows(self) -> list[list[object]] | None:
        if not self.sections:
            return None
        rows: list[list[object]] = [
            ["section", "item", *[f"report {i}" for i in range(len(self.sections))]]
        ]
        for (section, label), values in self.value_labels.items():
            rows.append([section, label, *[v.text() for v in values]])
        table = self.options_model.table
        for row in range(table.size):
            values = [table.columns[c].display(row) for c in range(1, len(table.columns))]
            rows.append([OPTIONS_TITLE, table.columns[0].display(row), *values])
        return rows


class SelectableOnHover(QObject):
    """Makes a label's text selectable when the pointer first enters it. A selectable label
    carries a text document of its own, which made building the Summary's 70 values, and
    laying them out, cost more than all the rest of opening a report."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Enter and isinstance(watched, QLabel):
            watched.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            watched.removeEventFilter(self)
        return False


def _row(section: SummarySection | None, label: str) -> SummaryRow | None:
    if section is None:
        return None
    return next((row for row in section.rows if row.label == label), None)
