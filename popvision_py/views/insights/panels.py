"""The Insights page's top panels: the fit panel (fits or not, by how much) and the fullest
tiles, expandable, each with its split by memory category."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QFrame,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.insights import MORE_TILES, TOP_TILES, InsightsViewModel
from popvision_py.views.plain_text import plain_tooltip

TILE_ROLE = Qt.ItemDataRole.UserRole


class FitPanel(QFrame):
    """Fits / Does not fit in large type, then the numbers and what is missing."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.model: InsightsViewModel | None = None
        self.title = QLabel()
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.missing = QLabel()
        self.missing.setWordWrap(True)
        self.missing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.text)
        layout.addWidget(self.missing)
        layout.addStretch(1)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "model", None):
            self.show_model(self.model)
        super().changeEvent(event)

    def show_model(self, model: InsightsViewModel) -> None:
        self.model = model
        colors = chart_colors(self)
        self.title.setText(model.fit_title())
        self.title.setStyleSheet(f"color: {'#2e9d4a' if model.fits else colors.limit}")
        self.text.setText(model.fit_text())
        missing = model.missing_text()
        self.missing.setText(missing)
        self.missing.setVisible(bool(missing))


class TopTiles(QWidget):
    """The fullest tiles; a click selects the tile in the report's shared selection."""

    tile_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model: InsightsViewModel | None = None
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Fullest tiles", "Bytes"])
        self.tree.setRootIsDecorated(True)
        # the bytes sized to their numbers, the names to what is left: both in view
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemClicked.connect(self._clicked)
        self.more = QPushButton(f"Show {MORE_TILES}")
        self.more.setCheckable(True)
        self.more.setToolTip(
            plain_tooltip(f"Show the {MORE_TILES} fullest tiles instead of {TOP_TILES}.")
        )
        self.more.toggled.connect(self._toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.more, 0, Qt.AlignmentFlag.AlignRight)

    def show_model(self, model: InsightsViewModel) -> None:
        self.model = model
        model.set_expanded(self.more.isChecked())
        self.tree.clear()
        limit = chart_colors(self).limit
        for row in model.tile_rows():
            item = QTreeWidgetItem([row.text, f"{sum(v for _, v, _ in row.split):,}"])
            item.setData(0, TILE_ROLE, row.tile)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            if row.over:
                item.setForeground(0, QColor(limit))
            for label, value, color in row.split:
                child = QTreeWidgetItem([label, f"{value:,}"])
                child.setData(0, Qt.ItemDataRole.DecorationRole, QColor(color))
                child.setData(0, TILE_ROLE, row.tile)
                child.setToolTip(0, plain_tooltip(f"{label}: {format_bytes(value, exact=True)}"))
                child.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
                item.addChild(child)
            self.tree.addTopLevelItem(item)
        if self.tree.topLevelItemCount():
            self.tree.topLevelItem(0).setExpanded(True)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange and getattr(self, "model", None):
            self.show_model(self.model)  # over-limit tiles in the theme's limit colour
        super().changeEvent(event)

    def _toggle(self, on: bool) -> None:
        self.more.setText(f"Show {TOP_TILES}" if on else f"Show {MORE_TILES}")
        if self.model is not None:
            self.show_model(self.model)

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        tile = item.data(0, TILE_ROLE)
        if tile is not None:
            self.tile_clicked.emit(int(tile))
