"""Chart items that draw whole arrays as one image, aggregated to the pixels on screen.

Each paint works out the visible range and the pixels it covers, asks ``viewmodels.pixels``
which position each pixel column shows, and draws one QImage: the cost follows the widget's
width, not the number of tiles, and there is never a graphics item per tile.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.pixels import (
    column_ranges,
    column_tiles,
    max_columns,
    stacked_column_image,
)


class _ImageItem(pg.GraphicsObject):
    """Shared plumbing: a bounding rect over the data, the visible pixels, a cached image."""

    def __init__(self) -> None:
        super().__init__()
        self._bounds = QRectF(0, 0, 1, 1)
        self._key: tuple | None = None
        self._image: QImage | None = None
        self._pixels: np.ndarray | None = None  # keeps the QImage's buffer alive
        self.shown = np.zeros(0, dtype=np.int64)  # position under each pixel column
        self.shown_x = (0.0, 1.0)  # data x range the columns span
        self.version = 0
        self.paint_count = 0
        self.top_down = False

    def boundingRect(self) -> QRectF:
        return self._bounds

    def _set_bounds(self, rect: QRectF) -> None:
        self.prepareGeometryChange()
        self._bounds = rect
        self.invalidate()

    def invalidate(self) -> None:
        self.version += 1
        self.update()

    def visible(self) -> tuple[float, float, float, float] | None:
        """The visible data rect clipped to the bounds (x0, x1, y0, y1), or None."""
        vb = self.getViewBox()
        if vb is None:
            return None
        (vx0, vx1), (vy0, vy1) = vb.viewRange()
        b = self._bounds
        x0, x1 = max(vx0, b.left()), min(vx1, b.right())
        y0, y1 = max(vy0, b.top()), min(vy1, b.bottom())
        if x1 <= x0 or y1 <= y0:
            return None
        return x0, x1, y0, y1

    def paint(self, painter: QPainter, *args: object) -> None:
        view = self.visible()
        if view is None:
            return
        x0, x1, y0, y1 = view
        transform = painter.transform()
        ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
        # The image is made at the device pixels it covers and drawn unscaled: scaling an
        # image in the raster engine drops or doubles columns and can leave seams.
        device = transform.mapRect(QRectF(x0, y0, x1 - x0, y1 - y0)).toAlignedRect()
        width = max(1, min(16384, round(device.width() * ratio)))
        height = max(1, min(16384, round(device.height() * ratio)))
        flipped = transform.m22() < 0  # y up, as in a plot: image row 0 goes at the bottom
        key = (*view, width, height, self.version, flipped)
        if key != self._key:
            self._key = key
            self.top_down = flipped
            self._pixels = np.ascontiguousarray(self.render(x0, x1, y0, y1, width, height))
            rows, columns = self._pixels.shape[:2]
            self._image = QImage(
                self._pixels.data, columns, rows, columns * 4, QImage.Format.Format_RGBA8888
            )
            self._image.setDevicePixelRatio(ratio)
        self.paint_count += 1
        if self._image is None:
            return
        target = transform.mapRect(self.target_rect(x0, x1, y0, y1)).toAlignedRect()
        painter.save()
        painter.resetTransform()
        if (self._pixels.shape[1], self._pixels.shape[0]) == (width, height):
            painter.drawImage(target.topLeft(), self._image)
        else:  # the heat map stretches each IPU's row of pixels
            painter.drawImage(target, self._image)
        painter.restore()

    def render(
        self, x0: float, x1: float, y0: float, y1: float, width: int, height: int
    ) -> np.ndarray:
        """RGBA pixels (height, width, 4) of the visible rect: row 0 at ``y0``, or at ``y1``
        when ``self.top_down`` (a plot's y axis points up, an image's down)."""
        raise NotImplementedError

    def target_rect(self, x0: float, x1: float, y0: float, y1: float) -> QRectF:
        """Where the rendered image goes, in data coordinates."""
        return QRectF(x0, y0, x1 - x0, y1 - y0)

    def position_at(self, x: float) -> int:
        """The position drawn in the pixel column at data ``x`` (-1 outside the data)."""
        x0, x1 = self.shown_x
        if self.shown.size == 0 or not x0 <= x < x1:
            return -1
        column = int((x - x0) / (x1 - x0) * self.shown.size)
        return int(self.shown[min(column, self.shown.size - 1)])


class StackedColumnsItem(_ImageItem):
    """Stacked bars of ``values[c, position]``, the tallest position of each pixel column."""

    def __init__(self) -> None:
        super().__init__()
        self.values = np.zeros((0, 0))
        self.totals = np.zeros(0)
        self.selected = np.zeros(0, dtype=bool)
        self.colors = np.zeros((0, 4), np.uint8)
        self.selection_color = rgba("#ffe28a")

    def set_data(
        self,
        values: np.ndarray,
        totals: np.ndarray,
        colors: np.ndarray,
        selected: np.ndarray,
        y_max: float,
    ) -> None:
        self.values, self.totals, self.colors, self.selected = values, totals, colors, selected
        self._set_bounds(QRectF(-0.5, 0.0, max(values.shape[1], 1), y_max))

    def set_selection(self, selected: np.ndarray) -> None:
        self.selected = selected
        self.invalidate()

    def render(
        self, x0: float, x1: float, y0: float, y1: float, width: int, height: int
    ) -> np.ndarray:
        n = self.totals.shape[0]
        self.shown = column_tiles(self.totals, x0, x1, width)
        self.shown_x = (x0, x1)
        highlight = None
        if self.selected.any():
            lo, hi = column_ranges(n, x0, x1, width)
            highlight = max_columns(self.selected[None, :].astype(np.uint8), lo, hi)[0] > 0
        values = self.values
        if y0 > 0:  # the image spans [y0, y1]: cut the feet of the bars below y0
            values = np.diff(np.clip(np.cumsum(values, axis=0) - y0, 0, None), axis=0, prepend=0)
        return stacked_column_image(
            values,
            self.shown,
            y1 - y0,
            height,
            self.colors,
            highlight,
            self.selection_color,
            self.top_down,
        )


class HeatMapItem(_ImageItem):
    """``image[ipu, tile]`` as coloured pixels, the hottest tile of each pixel column."""

    def __init__(self) -> None:
        super().__init__()
        self.image = np.zeros((0, 0))
        self.levels = (0.0, 1.0)
        self.lut = np.zeros((256, 4), np.uint8)
        self._rows = (0, 0)

    def set_data(self, image: np.ndarray, levels: tuple[float, float], lut: np.ndarray) -> None:
        self.image, self.levels, self.lut = image, levels, lut
        rows, cols = image.shape
        self._set_bounds(QRectF(-0.5, -0.5, max(cols, 1), max(rows, 1)))

    def render(
        self, x0: float, x1: float, y0: float, y1: float, width: int, height: int
    ) -> np.ndarray:
        rows, cols = self.image.shape
        lo, hi = column_ranges(cols, x0, x1, width)
        self.shown_x = (x0, x1)
        self.shown = np.where(hi > lo, lo, -1)
        row0, row1 = max(0, math.floor(y0 + 0.5)), min(rows, math.ceil(y1 + 0.5))
        hottest = max_columns(self.image[row0:row1], lo, hi).astype(np.float64)
        low, high = self.levels
        index = np.clip((hottest - low) / max(high - low, 1e-9) * 255, 0, 255).astype(np.int64)
        pixels = self.lut[index]
        pixels[:, hi <= lo] = 0
        self._rows = (row0, row1)  # one image row per IPU row in view
        return np.ascontiguousarray(pixels[::-1] if self.top_down else pixels)

    def target_rect(self, x0: float, x1: float, y0: float, y1: float) -> QRectF:
        row0, row1 = self._rows
        return QRectF(x0, row0 - 0.5, x1 - x0, row1 - row0)

    def row_at(self, y: float) -> int:
        row = math.floor(y + 0.5)
        return row if 0 <= row < self.image.shape[0] else -1
