"""A chart item that draws a whole array as one image, aggregated to the pixels on screen.

Each paint works out the visible range and the pixels it covers and asks the subclass's
``render`` for that many RGBA pixels: the cost follows the widget's size, not the number of
tiles or program steps, and there is never a graphics item per tile or step. Memory's bars
and heat map and the liveness curve are such items.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect, QRectF
from PySide6.QtGui import QImage, QPainter

MAX_IMAGE_SIDE = 16384


def device_pixels(
    painter: QPainter, x0: float, x1: float, y0: float, y1: float
) -> tuple[QRect, int, int, float]:
    """Where data rect [x0, x1) x [y0, y1) lands on the painter's device: the aligned device
    rect, its width and height in device pixels (capped), and the device pixel ratio. Images
    are made at that size and drawn unscaled: scaling an image in the raster engine drops or
    doubles columns and can leave seams."""
    ratio = painter.device().devicePixelRatioF() if painter.device() else 1.0
    device = painter.transform().mapRect(QRectF(x0, y0, x1 - x0, y1 - y0)).toAlignedRect()
    width = max(1, min(MAX_IMAGE_SIDE, round(device.width() * ratio)))
    height = max(1, min(MAX_IMAGE_SIDE, round(device.height() * ratio)))
    return device, width, height, ratio


class PixelImageItem(pg.GraphicsObject):
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
        _device, width, height, ratio = device_pixels(painter, x0, x1, y0, y1)
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
