"""The Memory chart's legend: a swatch per category with its help, or the heat map's scale."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QImage, QPainter, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from popvision_py.viewmodels.colors import CATEGORY_COLORS, CATEGORY_HELP
from popvision_py.viewmodels.format import format_bytes
from popvision_py.views.plain_text import plain_tooltip
from profiler_core.model.kinds import MemoryCategory


def swatch(color: str, size: int = 12) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(color))
    return pixmap


class CategoryLegend(QWidget):
    """Category swatches, top of the stack first, as the bars read from the top."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.grid = QGridLayout()
        self.grid.setContentsMargins(4, 4, 4, 4)
        self.grid.setHorizontalSpacing(6)
        self.grid.setVerticalSpacing(2)
        self.grid.setColumnStretch(1, 1)  # labels next to their swatches, however few
        self.title = QLabel("Categories")
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.scale = QLabel()
        self.scale_text = QLabel()
        self.scale_text.setWordWrap(True)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.title)
        outer.addLayout(self.grid)
        outer.addWidget(self.scale)
        outer.addWidget(self.scale_text)
        outer.addStretch(1)
        self.labels: list[str] = []

    def show_categories(self, categories: list[MemoryCategory]) -> None:
        self.show_series([(c.label, CATEGORY_COLORS[c], CATEGORY_HELP[c]) for c in categories])

    def show_series(self, series: list[tuple[str, str, str]], title: str = "") -> None:
        """A swatch per (label, colour, help), the top of the stack first."""
        self._clear()
        self.title.setText(title or ("Regions" if len(series) == 2 else "Categories"))
        self.scale.hide()
        self.scale_text.hide()
        for row, (label, color, help_text) in enumerate(reversed(series)):
            box, text = QLabel(), QLabel(label)
            box.setPixmap(swatch(color))
            for widget in (box, text):
                widget.setToolTip(plain_tooltip(f"{label}: {help_text}"))
            self.grid.addWidget(box, row, 0)
            self.grid.addWidget(text, row, 1)
        self.labels = [label for label, _, _ in reversed(series)]

    def show_scale(
        self, lut: np.ndarray, low: float, high: float, limit: float, model: object = None
    ) -> None:
        """The heat map's colour scale from ``low`` to ``high`` bytes (the tile limit, or the
        hottest tile), with its middle marked."""
        self._clear()
        self.title.setText("Memory per tile")
        strip = np.ascontiguousarray(np.repeat(lut[None, :, :], 14, axis=0))
        image = QImage(
            strip.data, strip.shape[1], 14, strip.shape[1] * 4, QImage.Format.Format_RGBA8888
        )
        pixmap = QPixmap.fromImage(image.copy()).scaled(160, 14)
        units = getattr(model, "units", "KiB")
        scale = getattr(model, "heat_scale", None)
        top = "the hottest tile" if getattr(scale, "name", "") == "DATA_MAX" else "the tile limit"
        at = limit_mark_x(low, high, limit, pixmap.width())
        if at is not None:  # the tile limit marked on the scale
            painter = QPainter(pixmap)
            painter.fillRect(at - 1, 0, 3, pixmap.height(), QColor(LIMIT_MARK))
            painter.end()
            where = "the mark on the scale"
        else:
            where = f"above the scale: the fullest tile uses {high / max(limit, 1):.0%} of it"
        self.scale.setPixmap(pixmap)
        self.scale.setToolTip("Colour of a tile by its total memory; the tile limit marked.")
        self.scale_text.setText(
            f"{format_bytes(low, units=units)}  →  {format_bytes(high, units=units)} ({top})\n"
            f"Middle colour: {format_bytes((low + high) / 2, units=units)}\n"
            f"Tile limit: {format_bytes(limit, units=units)} ({where})"
        )
        self.scale.show()
        self.scale_text.show()
        self.labels = []

    def _clear(self) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().hide()
                item.widget().deleteLater()


LIMIT_MARK = "#ff00ff"  # the tile limit on the heat scale: viewmodels.colors.SELECTION_OUTLINE


def limit_mark_x(low: float, high: float, limit: float, width: int) -> int | None:
    """Where the tile limit falls on a ``width``-pixel scale from ``low`` to ``high``, or
    None when it is above the scale."""
    if high <= low or limit > high:
        return None
    return min(round((limit - low) / (high - low) * (width - 1)), width - 1)


def heat_lut() -> np.ndarray:
    """A dark-blue to yellow to red scale (256 x RGBA) readable on light and dark windows."""
    stops = np.array(
        [[0.0, 30, 40, 110], [0.5, 40, 170, 140], [0.8, 250, 220, 60], [1.0, 215, 25, 28]]
    )
    x = np.linspace(0, 1, 256)
    rgb = np.stack([np.interp(x, stops[:, 0], stops[:, i]) for i in (1, 2, 3)], axis=1)
    return np.hstack([rgb, np.full((256, 1), 255)]).astype(np.uint8)
