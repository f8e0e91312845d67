"""The Tile Map's colour scale: the gradient from 0 to the largest tile, labelled in units."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QRect, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.tile_map import TileMapModel


class ColorBar(QWidget):
    def __init__(self, model: TileMapModel, lut: np.ndarray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.lut = np.ascontiguousarray(lut[None, :, :], dtype=np.uint8)
        self.setFixedHeight(40)
        model.changed.connect(lambda _what: self.update())

    def labels(self) -> tuple[str, str, str]:
        """(low, high, title) as drawn: ``22.4 KiB``, ``36.0 KiB``, ``Total memory``; with
        every tile equal, no ends and a title that says so: ``Cycles of step 4 (...): 1,697
        cycles on every tile``."""
        divisor, unit = self.model.display_unit()

        def text(value: float) -> str:
            value /= divisor
            return f"{value:,.1f} {unit}" if divisor > 1 else f"{value:,.0f} {unit}"

        if self.model.one_value:
            return "", "", f"{self.model.label}: {text(self.model.scale_max)} on every tile"
        return text(self.model.scale_min), text(self.model.scale_max), self.model.label

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.update()  # colours are read from the palette when painting
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        colors = chart_colors(self)
        painter = QPainter(self)
        image = QImage(self.lut.data, 256, 1, 256 * 4, QImage.Format.Format_RGBA8888)
        if self.model.one_value:  # one colour, the one every tile is painted in
            index = int(self.model.lut_index()[0])
            image = image.copy(index, 0, 1, 1)
        low, high, title = self.labels()
        metrics = painter.fontMetrics()
        left = metrics.horizontalAdvance(low) + 12
        right = metrics.horizontalAdvance(high) + 12
        bar = QRect(left, 4, max(self.width() - left - right, 10), 14)
        painter.drawImage(bar, image)
        painter.setPen(QColor(colors.foreground))
        painter.drawText(QRect(0, 2, left - 4, 18), Qt.AlignmentFlag.AlignRight, low)
        painter.drawText(QRect(bar.right() + 6, 2, right, 18), Qt.AlignmentFlag.AlignLeft, high)
        painter.drawText(
            QRect(bar.left(), 20, bar.width(), 18), Qt.AlignmentFlag.AlignHCenter, title
        )
        painter.end()
