"""IPU boundaries on the by-tile chart: a line between IPUs and each IPU's name at the top,
drawn in one paint over what is in view (16 IPUs are 15 lines, never one item per tile)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPen


class IpuBoundariesItem(pg.GraphicsObject):
    """Vertical lines at ``lines`` (data x) and ``labels`` centred on ``centres``; a label
    is drawn only when its IPU is wide enough on screen to hold it."""

    def __init__(self) -> None:
        super().__init__()
        self.lines = np.zeros(0)
        self.labels: list[str] = []
        self.centres = np.zeros(0)
        self.color = QColor("#808080")
        self.text_color = QColor("#404040")
        self._bounds = QRectF(0, 0, 1, 1)
        self.drawn_labels: list[str] = []  # what the last paint wrote (for tests)

    def set_data(
        self, lines: np.ndarray, labels: list[str], centres: np.ndarray, y_top: float
    ) -> None:
        self.prepareGeometryChange()
        self.lines, self.labels, self.centres = lines, labels, centres
        left = float(centres[0]) if centres.size else 0.0
        right = float(centres[-1]) if centres.size else 1.0
        self._bounds = QRectF(left - 1e9, 0.0, (right - left) + 2e9, max(y_top, 1.0))
        self.update()

    def set_colors(self, line: str, text: str) -> None:
        self.color, self.text_color = QColor(line), QColor(text)
        self.color.setAlpha(150)  # a boundary, quieter than the bars and the limit
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def paint(self, painter: QPainter, *args: object) -> None:
        vb = self.getViewBox()
        self.drawn_labels = []
        if vb is None or not self.labels:
            return
        (x0, x1), (y0, y1) = vb.viewRange()
        transform = painter.transform()
        painter.save()
        painter.resetTransform()  # lines and text in device pixels: crisp at any zoom
        pen = QPen(self.color)
        pen.setStyle(Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        painter.setPen(pen)
        for x in self.lines[(self.lines >= x0) & (self.lines <= x1)].tolist():
            top, bottom = transform.map(QPointF(x, y1)), transform.map(QPointF(x, y0))
            painter.drawLine(top, bottom)
        metrics = QFontMetrics(painter.font())
        width_of_ipu = abs(transform.map(QPointF(self._ipu_width(), 0)).x() - transform.dx())
        painter.setPen(self.text_color)
        for label, centre in zip(self.labels, self.centres.tolist(), strict=True):
            if not x0 <= centre <= x1 or metrics.horizontalAdvance(label) + 8 > width_of_ipu:
                continue
            point = transform.map(QPointF(centre, y1))
            # the second text line from the top: the first is the tile limit's label
            top = point.y() + 2 + metrics.height()
            rect = QRectF(point.x() - width_of_ipu / 2, top, width_of_ipu, metrics.height())
            painter.drawText(rect, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, label)
            self.drawn_labels.append(label)
        painter.restore()

    def _ipu_width(self) -> float:
        if self.centres.size > 1:
            return float(self.centres[1] - self.centres[0])
        return 1.0
