"""The findings list: each finding with its severity, the operation and file:line, the
evidence and the suggestion; a click selects the tiles it is about. A finding whose
suggestion can be re-planned has a "Try it" button (``whatif.py`` runs it)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QHeaderView,
    QLabel,
    QPushButton,
    QScrollArea,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from popvision_py.viewmodels.insights import InsightsViewModel
from popvision_py.views.insights.whatif import TRY_TIP, WhatIfBar
from popvision_py.views.plain_text import plain_tooltip
from profiler_core.insights import Finding, Severity
from profiler_core.insights.whatif import TRYABLE_RULES

SEVERITY_COLORS = {Severity.ERROR: "#d03030", Severity.WARNING: "#d08a00", Severity.INFO: "#3a7bd5"}
TILES_ROLE = Qt.ItemDataRole.UserRole
SUGGESTION_LINES = 4  # lines of the suggestion shown before it scrolls


class FindingsList(QWidget):
    tiles_clicked = Signal(object)  # a tuple of tiles
    try_clicked = Signal(object, object)  # the finding's tree item, the Finding

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel()
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Finding", "Operation", "What-if"])
        self.buttons: dict[str, QPushButton] = {}  # finding title -> its Try it button
        self.tree.setWordWrap(True)
        self.tree.itemClicked.connect(self._clicked)
        self.tree.currentItemChanged.connect(lambda item, _: self._show_suggestion(item))
        self.suggestion = QLabel()
        self.suggestion.setWordWrap(True)
        self.suggestion.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.suggestion.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        # a long suggestion scrolls in a few lines' room: it neither squeezes the findings
        # out of sight nor runs off the bottom of a short window
        self.suggestion_area = QScrollArea()
        self.suggestion_area.setWidget(self.suggestion)
        self.suggestion_area.setWidgetResizable(True)
        self.suggestion_area.setFrameShape(QFrame.Shape.NoFrame)
        self.suggestion_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        lines = self.suggestion.fontMetrics().lineSpacing()
        self.suggestion_area.setMaximumHeight(SUGGESTION_LINES * lines + 6)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        self.whatif_bar = WhatIfBar()
        layout.addWidget(self.whatif_bar)
        layout.addWidget(self.suggestion_area)

    def show_model(self, model: InsightsViewModel) -> None:
        self.summary.setText(model.findings_summary())
        self.tree.clear()
        self.buttons = {}
        for finding in model.findings():
            item = QTreeWidgetItem(
                [f"{finding.severity.label.upper()}  {finding.title}", finding.source.label]
            )
            item.setForeground(0, QColor(SEVERITY_COLORS[finding.severity]))
            item.setData(0, TILES_ROLE, finding.tiles)
            item.setData(1, TILES_ROLE, finding.suggestion)
            item.setToolTip(0, plain_tooltip(finding.suggestion))
            if finding.source.file:
                item.setToolTip(1, plain_tooltip(f"{finding.source.file}:{finding.source.line}"))
            for evidence in finding.evidence:
                item.addChild(QTreeWidgetItem([evidence.text(), ""]))
            tip = QTreeWidgetItem([f"Try: {finding.suggestion}", ""])
            tip.setToolTip(0, plain_tooltip(finding.suggestion))
            tip.setData(1, TILES_ROLE, finding.suggestion)
            item.addChild(tip)
            self.tree.addTopLevelItem(item)
            item.setExpanded(self.tree.topLevelItemCount() == 1)
            if finding.rule in TRYABLE_RULES:
                self._add_try(item, finding)
        # the finding takes what the operation leaves: no column runs past the view
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.setColumnWidth(1, max(self.tree.sizeHintForColumn(1), 120))
        self._show_suggestion(self.tree.topLevelItem(0))

    def _add_try(self, item: QTreeWidgetItem, finding: Finding) -> None:
        button = QPushButton("Try it")
        button.setToolTip(plain_tooltip(TRY_TIP))
        button.clicked.connect(lambda: self.try_clicked.emit(item, finding))
        self.tree.setItemWidget(item, 2, button)
        self.buttons[finding.title] = button

    def show_headline(self, text: str) -> None:
        """The what-if's headline in the suggestion's room, under the suggestion."""
        self.suggestion.setText(f"{self.suggestion.text()}\n\n{text}".strip())

    def _show_suggestion(self, item: QTreeWidgetItem | None) -> None:
        """The whole suggestion of the finding in view (the tree's line is cut short)."""
        while item is not None and item.parent() is not None:
            item = item.parent()
        text = item.data(1, TILES_ROLE) if item is not None else ""
        self.suggestion.setText(f"Try: {text}" if text else "")

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        tiles = item.data(0, TILES_ROLE)
        if tiles:
            self.tiles_clicked.emit(tuple(tiles))
