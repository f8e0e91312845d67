"""One graphics item that draws every lane of a timeline as one image per paint.

Each paint asks the source for the spans in the visible range at the pixel width on screen
(the source merges what is below a pixel), turns them into one colour per pixel column of
each lane (``viewmodels.timeline.lane_pixels``) and draws one QImage, then the labels of the
spans wide enough to read. There is never a graphics item per span.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter, QPen

from popvision_py.viewmodels.colors import SELECTION_OUTLINE
from popvision_py.viewmodels.timeline import SpanBatch, lane_pixels, pixel_columns, span_at
from popvision_py.views.pixel_image import device_pixels
from profiler_core.model.unique import sorted_unique

SpanSource = Callable[[float, float, int], SpanBatch]
"""``source(x0, x1, width_px)``: the spans of every lane in [x0, x1) for that many pixels."""

LANE_GAP = 0.12  # the part of each lane left empty below its spans, so lanes read apart
MIN_LABEL_PX = 36  # spans narrower than this are not labelled
MAX_LABELS = 600  # a paint never draws more labels than this


class SpanLanesItem(pg.GraphicsObject):
    """Lanes 0..n-1 at y in [lane, lane + 1) (lane 0 at the top: the view box inverts y)."""

    def __init__(self, source: SpanSource, lanes: int = 0) -> None:
        super().__init__()
        self.source = source
        self.lanes = lanes
        self.x_limits = (0.0, 1.0)
        self.highlight_keys = np.zeros(0, dtype=np.int64)
        self.highlight_color = QColor("#ffd400")
        # the selected spans among the outlined ones: drawn apart from the rest of their
        # operation, in the selection colour every view uses (the Tile Map's picked tiles)
        self.selected_keys = np.zeros(0, dtype=np.int64)
        self.selected_color = QColor(*SELECTION_OUTLINE)
        self.batch = SpanBatch.empty()  # what the last paint drew
        self.batch_x = (0.0, 1.0)
        self.batch_width = 1
        self.paint_count = 0
        self.version = 0
        self._key: tuple | None = None
        self._image: QImage | None = None
        self._pixels: np.ndarray | None = None  # keeps the QImage's buffer alive

    # -- what to draw ---------------------------------------------------------------------
    def set_data(self, source: SpanSource, lanes: int, x_limits: tuple[float, float]) -> None:
        self.prepareGeometryChange()
        self.source, self.lanes = source, lanes
        self.x_limits = (float(x_limits[0]), float(max(x_limits[1], x_limits[0] + 1e-9)))
        self.invalidate()

    def set_highlight(self, keys: np.ndarray, selected: np.ndarray | None = None) -> None:
        """Outline the spans whose key is in ``keys`` (an operation's steps); those in
        ``selected`` (the selected steps, outlined too) get the selection's outline."""
        chosen = np.zeros(0, dtype=np.int64) if selected is None else selected
        chosen = sorted_unique(np.asarray(chosen, dtype=np.int64))
        keys = np.union1d(sorted_unique(np.asarray(keys, dtype=np.int64)), chosen)
        if not (
            np.array_equal(keys, self.highlight_keys) and np.array_equal(chosen, self.selected_keys)
        ):
            self.highlight_keys, self.selected_keys = keys, chosen
            self.update()

    def invalidate(self) -> None:
        self.version += 1
        self._key = None
        self.update()

    def boundingRect(self) -> QRectF:
        x0, x1 = self.x_limits
        return QRectF(x0, 0.0, x1 - x0, float(max(self.lanes, 1)))

    # -- picking --------------------------------------------------------------------------
    def span_at(self, x: float, y: float) -> int:
        """Index into ``self.batch`` of the span drawn at data (x, y), -1 for none."""
        lane = int(np.floor(y))
        if not 0 <= lane < self.lanes or y - lane > 1 - LANE_GAP:
            return -1
        x0, x1 = self.batch_x
        one_pixel = (x1 - x0) / max(self.batch_width, 1)
        return span_at(self.batch, lane, x, tolerance=one_pixel)

    # -- painting -------------------------------------------------------------------------
    def paint(self, painter: QPainter, *args: object) -> None:
        view = self._visible()
        if view is None:
            return
        x0, x1, y0, y1 = view
        transform = painter.transform()
        device, width, height, ratio = device_pixels(painter, x0, x1, y0, y1)
        key = (x0, x1, y0, y1, width, height, self.version)
        if key != self._key:
            self._key = key
            self._render(x0, x1, y0, y1, width, height, ratio, transform.m22() < 0)
        self.paint_count += 1
        painter.save()
        painter.resetTransform()
        if self._image is not None:
            painter.drawImage(device.topLeft(), self._image)
        painter.restore()
        self._paint_highlight(painter)
        self._paint_labels(painter, x0, x1, y0, y1)

    def _visible(self) -> tuple[float, float, float, float] | None:
        vb = self.getViewBox()
        if vb is None or self.lanes <= 0:
            return None
        (vx0, vx1), (vy0, vy1) = vb.viewRange()
        lx0, lx1 = self.x_limits
        x0, x1 = max(vx0, lx0), min(vx1, lx1)
        y0, y1 = max(vy0, 0.0), min(vy1, float(self.lanes))
        if x1 <= x0 or y1 <= y0:
            return None
        return x0, x1, y0, y1

    def _render(
        self,
        x0: float,
        x1: float,
        y0: float,
        y1: float,
        width: int,
        height: int,
        ratio: float,
        y_up: bool,
    ) -> None:
        self.batch = self.source(x0, x1, width)
        self.batch_x, self.batch_width = (x0, x1), width
        # Only the lanes on screen get pixel columns: a paint costs what is shown.
        low, high = max(int(np.floor(y0)), 0), min(int(np.ceil(y1)), self.lanes)
        on_screen = replace(self.batch, lane=self.batch.lane - low, labels=[])
        shown = lane_pixels(on_screen, max(high - low, 0), x0, x1, width)
        # Which lane each device row shows (-1 in the gap under a lane's spans).
        y = y0 + (np.arange(height) + 0.5) * (y1 - y0) / height
        if y_up:
            y = y[::-1]
        lane = np.floor(y).astype(np.int64)
        in_gap = (y - lane) > 1 - LANE_GAP
        lane = np.where(in_gap | (lane < low) | (lane >= high), -1, lane - low)
        colors = np.vstack([self.batch.color.reshape(-1, 4), np.zeros((1, 4), np.uint8)])
        table = np.ascontiguousarray(colors).view(np.uint32).ravel()
        # Colour each lane's pixel columns once, then repeat them down its device rows: the
        # only (height, width) array is the image itself.
        lane_colors = np.vstack([table[shown], np.zeros((1, width), np.uint32)])
        rows = lane_colors[np.where(lane >= 0, lane, len(shown))]
        self._pixels = np.ascontiguousarray(rows).view(np.uint8).reshape(height, width, 4)
        self._image = QImage(self._pixels.data, width, height, width * 4, QImage.Format_RGBA8888)
        self._image.setDevicePixelRatio(ratio)

    def _device_rects(self, index: np.ndarray) -> list[QRectF]:
        """Rectangles of spans ``index`` of the last batch, in the item's coordinates."""
        x0, x1 = self.batch_x
        px = pixel_columns(self.batch, x0, x1, self.batch_width)
        scale = (x1 - x0) / self.batch_width
        return [
            QRectF(
                x0 + px.first[i] * scale,
                float(self.batch.lane[i]),
                (px.stop[i] - px.first[i]) * scale,
                1 - LANE_GAP,
            )
            for i in index.tolist()
        ]

    def _paint_highlight(self, painter: QPainter) -> None:
        if self.highlight_keys.size == 0 or len(self.batch) == 0:
            return
        others = np.setdiff1d(self.highlight_keys, self.selected_keys)
        # the operation's other steps first, the selected ones over them
        for keys, color, width in (
            (others, self.highlight_color, 2),
            (self.selected_keys, self.selected_color, 3),
        ):
            index = np.flatnonzero(np.isin(self.batch.key, keys))[:2000]
            if index.size == 0:
                continue
            pen = QPen(color, width)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for rect in self._device_rects(index):
                painter.drawRect(rect)

    def _paint_labels(self, painter: QPainter, x0: float, x1: float, y0: float, y1: float) -> None:
        batch = self.batch
        if len(batch.labels) != len(batch) or len(batch) == 0:
            return
        px = pixel_columns(batch, x0, x1, self.batch_width)
        visible_lane = (batch.lane >= np.floor(y0)) & (batch.lane < y1)
        wide = np.flatnonzero((px.stop - px.first >= MIN_LABEL_PX) & visible_lane)[:MAX_LABELS]
        if wide.size == 0:
            return
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        metrics = QFontMetrics(painter.font())
        for i, rect in zip(wide.tolist(), self._device_rects(wide), strict=True):
            box = transform.mapRect(rect).adjusted(3, 0, -3, 0)
            text = metrics.elidedText(
                batch.labels[i], Qt.TextElideMode.ElideRight, int(box.width())
            )
            if not text:
                continue
            r, g, b, _ = (int(v) for v in batch.color[i])
            light = 0.299 * r + 0.587 * g + 0.114 * b > 150
            painter.setPen(QColor("#101010" if light else "#ffffff"))
            painter.drawText(
                box, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text
            )
        painter.restore()

    def scene_to_data(self, scene_pos: QPointF) -> QPointF | None:
        vb = self.getViewBox()
        return None if vb is None else vb.mapSceneToView(scene_pos)
