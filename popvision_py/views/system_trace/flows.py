"""Flow arrows over the System Trace timeline: one item that asks, at each paint, for the
arrows of the range and rows on screen (``viewmodels.trace_flows``, merged per pixel) and
draws each from the end of its source span to the start of its target span. The arrows of
the selected span are drawn in the selection colour."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF
from PySide6.QtGui import QBrush, QColor, QPainter, QPen, QPolygonF

from popvision_py.viewmodels.trace_flows import FlowArrows, flow_arrows, flow_rows
from popvision_py.views.timeline.spans_item import LANE_GAP

FlowSource = Callable[[float, float, int], FlowArrows]
HEAD_PX = 7.0  # arrowhead length


class FlowArrowsItem(pg.GraphicsObject):
    """Arrows between spans; ``arrows`` is what the last paint drew (for tests and picking)."""

    def __init__(self, source: FlowSource) -> None:
        super().__init__()
        self.source = source
        self.arrows = FlowArrows.empty()
        self.selected_flows = np.zeros(0, np.int64)  # flows of the selected span
        self.color = QColor(70, 70, 70, 200)
        self.highlight_color = QColor("#ffd400")
        self.bounds = QRectF(0.0, 0.0, 1.0, 1.0)
        self.setZValue(20)  # over the spans

    def set_bounds(self, x0: float, x1: float, lanes: int) -> None:
        self.prepareGeometryChange()
        self.bounds = QRectF(x0, 0.0, max(x1 - x0, 1e-9), float(max(lanes, 1)))
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self.bounds)

    def paint(self, painter: QPainter, *args: object) -> None:
        vb = self.getViewBox()
        if vb is None:
            return
        (x0, x1), _ = vb.viewRange()
        width = max(int(vb.width()), 1)
        self.arrows = arrows = self.source(x0, x1, width)
        if not len(arrows):
            return
        t = painter.transform()
        middle = (1 - LANE_GAP) / 2
        ax = (arrows.x0 * t.m11() + t.dx()).tolist()
        bx = (arrows.x1 * t.m11() + t.dx()).tolist()
        ay = ((arrows.row0 + middle) * t.m22() + t.dy()).tolist()
        by = ((arrows.row1 + middle) * t.m22() + t.dy()).tolist()
        chosen = np.isin(arrows.flow, self.selected_flows).tolist()
        widths = (1.0 + np.minimum(np.log2(arrows.count), 3)).tolist()
        painter.save()
        painter.resetTransform()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        for i in range(len(arrows)):
            color = self.highlight_color if chosen[i] else self.color
            pen = QPen(QBrush(color), widths[i] + (1.5 if chosen[i] else 0.0))
            painter.setPen(pen)
            painter.setBrush(QBrush(color))
            a, b = QPointF(ax[i], ay[i]), QPointF(bx[i], by[i])
            painter.drawLine(QLineF(a, b))
            painter.drawPolygon(_head(a, b))
        painter.restore()


def _head(a: QPointF, b: QPointF) -> QPolygonF:
    """An arrowhead at ``b`` pointing away from ``a``."""
    angle = math.atan2(b.y() - a.y(), b.x() - a.x())
    spread = 0.45
    left = QPointF(b.x() - HEAD_PX * math.cos(angle - spread),
                   b.y() - HEAD_PX * math.sin(angle - spread))  # fmt: skip
    right = QPointF(b.x() - HEAD_PX * math.cos(angle + spread),
                    b.y() - HEAD_PX * math.sin(angle + spread))  # fmt: skip
    return QPolygonF([b, left, right])


class FlowSelection:
    """Part of ``SystemTraceView``: its flow arrows, and following a flow from the details
    of a selected span to the other end. It uses the view's ``model``, ``timeline``,
    ``lane_scroll``, ``event_details`` and ``flow_item``."""

    def _flow_arrows(self, x0: float, x1: float, width: int) -> FlowArrows:
        model = self.model
        if model is None or self.compare is not None:
            return FlowArrows.empty()
        first = self.lane_scroll.value()  # only the lanes on screen
        rows = range(first, first + self.lanes_shown)
        return flow_arrows(model.tables, model.rows_of, x0, x1, width, rows)

    def _show_event_rows(self, event: int) -> None:
        """``event``'s details, then its flows as rows that select the other end."""
        model = self.model
        rows = model.details(event)
        flows = flow_rows(model.trace, event, model.thread_title)
        links = {len(rows) + i: other for i, (_, _, other) in enumerate(flows)}
        self.event_details.show_rows(rows + [(f, v) for f, v, _ in flows], links)
        touching = (model.trace.flows[:, 0] == event) | (model.trace.flows[:, 1] == event)
        self.flow_item.selected_flows = np.flatnonzero(touching)
        self.flow_item.update()

    def go_to_event(self, event: int) -> None:
        """Select ``event`` and bring it on screen: its lane scrolled into view, its time
        shown with some context (a flow's other end, clicked in the details)."""
        if self.model is None or event < 0:
            return
        row = self.model.row_of(event)
        first = self.lane_scroll.value()
        if row >= 0 and not first <= row < first + self.lanes_shown:
            self.lane_scroll.setValue(max(row - self.lanes_shown // 2, 0))
        self.zoom_to(event)
        self.select_event(event)
