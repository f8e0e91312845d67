"""The tile heat-map strips under expanded IPUs, drawn as ONE QImage per paint: each strip's
device rows are its pixel rows of tiles, each column the compute step drawn there."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter, QPixmap

from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.execution_trace import TILE_LANES
from popvision_py.viewmodels.step_colors import MERGED_COLOR
from popvision_py.views.timeline.spans_item import LANE_GAP

# (ipu, x0, x1, width, rows) -> (rows, width) values in [0, 1], NaN empty, < 0 merged
HeatSource = Callable[[int, float, float, int, int], np.ndarray]


def heat_lut() -> np.ndarray:
    """(256, 4) uint8: idle tiles dark, the slowest tile of a step bright yellow."""
    return (pg.colormap.get("viridis").getLookupTable(nPts=256, alpha=True)).astype(np.uint8)


class TileHeatItem(pg.GraphicsObject):
    def __init__(self, source: HeatSource) -> None:
        super().__init__()
        self.source = source
        self.strips: list[tuple[int, int]] = []  # (IPU, first lane)
        self.x_limits = (0.0, 1.0)
        self.lut = heat_lut()
        self.merged = np.array(rgba(MERGED_COLOR, 120), np.uint8)
        self.paint_count = 0
        self.last_values: dict[int, np.ndarray] = {}  # IPU -> values of the last paint
        self._image: QImage | None = None
        self._pixels: np.ndarray | None = None

    def set_strips(self, strips: list[tuple[int, int]], x_limits: tuple[float, float]) -> None:
        self.prepareGeometryChange()
        self.strips, self.x_limits = strips, x_limits
        self.update()

    def boundingRect(self) -> QRectF:
        x0, x1 = self.x_limits
        bottom = max((lane + TILE_LANES for _, lane in self.strips), default=1)
        return QRectF(x0, 0.0, x1 - x0, float(bottom))

    def paint(self, painter: QPainter, *args: object) -> None:
        vb = self.getViewBox()
        if vb is None or not self.strips:
            return
        (vx0, vx1), (vy0, vy1) = vb.viewRange()
        x0, x1 = max(vx0, self.x_limits[0]), min(vx1, self.x_limits[1])
        y0, y1 = max(vy0, 0.0), vy1
        if x1 <= x0 or y1 <= y0:
            return
        transform = painter.transform()
        device = transform.mapRect(QRectF(x0, y0, x1 - x0, y1 - y0)).toAlignedRect()
        width, height = max(1, min(device.width(), 16384)), max(1, min(device.height(), 16384))
        y = y0 + (np.arange(height) + 0.5) * (y1 - y0) / height
        if transform.m22() < 0:
            y = y[::-1]
        pixels = np.zeros((height, width, 4), np.uint8)
        self.last_values = {}
        for ipu, lane in self.strips:
            inside = np.flatnonzero((y >= lane) & (y < lane + TILE_LANES - LANE_GAP))
            if inside.size == 0:
                continue
            values = self.source(ipu, x0, x1, width, inside.size)
            self.last_values[ipu] = values
            rgba_rows = np.zeros(values.shape + (4,), np.uint8)
            merged = values < 0
            known = np.isfinite(values) & ~merged
            rgba_rows[known] = self.lut[np.clip(values[known] * 255, 0, 255).astype(np.int64)]
            rgba_rows[merged] = self.merged
            pixels[inside] = rgba_rows
        self.paint_count += 1
        self._pixels = pixels
        self._image = QImage(pixels.data, width, height, width * 4, QImage.Format_RGBA8888)
        painter.save()
        painter.resetTransform()
        painter.drawImage(device.topLeft(), self._image)
        painter.restore()


def heat_legend_pixmap(width: int = 140, height: int = 12) -> QPixmap:
    """The strip's colour scale, idle (0%) on the left to the slowest tile (100%)."""
    lut = heat_lut()
    columns = lut[np.linspace(0, 255, width).astype(np.int64)]
    pixels = np.ascontiguousarray(np.repeat(columns[None, :, :], height, axis=0))
    image = QImage(pixels.data, width, height, width * 4, QImage.Format_RGBA8888)
    return QPixmap.fromImage(image.copy())
