"""Chart items that draw whole arrays as one image, aggregated to the pixels on screen.

Each paint works out the visible range and the pixels it covers, asks ``viewmodels.pixels``
which position each pixel column shows, and draws one QImage: the cost follows the widget's
width, not the number of tiles, and there is never a graphics item per tile.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import QRectF

from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.pixels import (
    column_ranges,
    column_tiles,
    max_columns,
    stacked_column_image,
)
from popvision_py.views.pixel_image import PixelImageItem as _ImageItem


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
