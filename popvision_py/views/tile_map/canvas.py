"""The Tile Map's drawing surface: the whole plan as ONE QImage per paint (built by the
view model from per-tile colours), IPU names on their blocks, hover text, and click / drag
to select tiles (shift adds)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, Qt, Signal
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.colors import SELECTION_OUTLINE, rgba
from popvision_py.viewmodels.tile_map import TileMapModel
from popvision_py.views.plain_text import plain_tooltip


class TileMapCanvas(QWidget):
    """Draws a ``TileMapModel``; emits ``tiles_picked(tiles, add)`` on click or drag."""

    tiles_picked = Signal(object, bool)

    def __init__(self, model: TileMapModel, lut: np.ndarray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.lut = lut
        self.setMouseTracking(True)
        self.setMinimumSize(200, 120)
        self._press: QPoint | None = None
        self._drag: QRect | None = None
        self.image: QImage | None = None  # the last image drawn (tests read its pixels)
        self._pixels: np.ndarray | None = None  # keeps the QImage's buffer alive
        self.hover_text = ""
        model.changed.connect(lambda _what: self.update())

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.update()  # colours are read from the palette when painting
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        colors = chart_colors(self)
        width, height = max(self.width(), 1), max(self.height(), 1)
        background = rgba(colors.background)
        outline = SELECTION_OUTLINE
        self._pixels = self.model.rgba(width, height, self.lut, background, outline)
        self.image = QImage(
            self._pixels.data, width, height, width * 4, QImage.Format.Format_RGBA8888
        )
        painter = QPainter(self)
        painter.drawImage(0, 0, self.image)
        self._draw_ipu_names(painter, colors.foreground, colors.background)
        if self._drag is not None:
            painter.setPen(QPen(QColor(colors.foreground), 1, Qt.PenStyle.DashLine))
            painter.drawRect(self._drag)
        painter.end()

    def _draw_ipu_names(self, painter: QPainter, foreground: str, background: str) -> None:
        if self.model.num_ipus < 2:
            return
        g = self.model.geometry(self.width(), self.height())
        metrics = painter.fontMetrics()
        for ipu in range(self.model.num_ipus):
            x, y = self.model.geometry(self.width(), self.height()).ipu_origin(
                ipu, self.model.layout
            )
            text = f"IPU {ipu}"
            box = metrics.boundingRect(text).adjusted(-2, 0, 2, 0)
            box.moveTopLeft(QPoint(int(x) + 2, int(y) + 2))
            if box.width() > self.model.layout.columns * g.scale:
                continue  # a block too small to name
            back = QColor(background)
            back.setAlpha(190)
            painter.fillRect(box, back)
            painter.setPen(QColor(foreground))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    def event(self, event: QEvent) -> bool:
        """At rest over a tile, Qt asks for a tooltip: the tile's numbers, not the map's
        help, which the parent widget carries and shows only off the tiles."""
        if event.type() == QEvent.Type.ToolTip:
            point = event.pos()
            tile = self.model.tile_at(point.x(), point.y(), self.width(), self.height())
            text = self.model.hover_text(tile)
            if text:
                self.hover_text = text
                QToolTip.showText(event.globalPos(), plain_tooltip(text), self)
                return True
        return super().event(event)  # off the tiles: ignored, so the parent's help shows

    # -- gestures ------------------------------------------------------------------------
    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._press = event.position().toPoint()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        point = event.position().toPoint()
        if self._press is not None and (point - self._press).manhattanLength() > 3:
            self._drag = QRect(self._press, point).normalized()
            self.update()
            return
        tile = self.model.tile_at(point.x(), point.y(), self.width(), self.height())
        self.hover_text = self.model.hover_text(tile)
        if self.hover_text:
            QToolTip.showText(
                event.globalPosition().toPoint(), plain_tooltip(self.hover_text), self
            )
        else:
            QToolTip.hideText()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            return
        add = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        point = event.position().toPoint()
        if self._drag is not None:
            r = self._drag
            tiles = self.model.tiles_in_rect(
                r.left(), r.top(), r.right(), r.bottom(), self.width(), self.height()
            )
        else:
            tile = self.model.tile_at(point.x(), point.y(), self.width(), self.height())
            tiles = np.array([tile] if tile >= 0 else [], dtype=np.int64)
        self._press, self._drag = None, None
        self.update()
        self.tiles_picked.emit(tiles, add)
