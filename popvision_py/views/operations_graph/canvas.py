"""The Operations graph's chart: one graphics item that paints, per frame, only what is on
screen -- the bands behind, every edge as one path built once per layout, the visible
nodes as one batch of rectangles per shade, and their labels (and the edges' labels) only
when zoomed in enough to read them, in screen pixels. There is never a graphics item per
node or edge."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPen,
    QTransform,
)

from popvision_py.viewmodels.graph_colors import BANDS, NO_FIGURES, RAMP, RAMP_TEXT
from popvision_py.viewmodels.graph_picture import bands, edge_label_points
from popvision_py.viewmodels.operations_graph import OperationsGraphModel
from popvision_py.views.plot_menus import drop_context_menus
from profiler_core.analysis.graph_layout import GraphLayout

LABEL_MIN_PX = 60  # a node narrower than this on screen is drawn without its label
EDGE_LABEL_MIN_PX = 110  # edge labels need a node this wide on screen
MARGIN = 60.0


class GraphItem(pg.GraphicsObject):
    """Paints one ``OperationsGraphModel``; ``refresh`` after the model changes."""

    def __init__(self) -> None:
        super().__init__()
        self.model: OperationsGraphModel | None = None
        self._bounds = QRectF(0, 0, 1, 1)
        self._edges = QPainterPath()
        self.dark = False
        self.paint_count = 0
        self.drawn_titles: list[str] = []  # node labels the last paint drew (tests read them)
        self.drawn_edge_texts: list[str] = []

    def set_model(self, model: OperationsGraphModel | None) -> None:
        self.model = model
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the edge path and the bounds (a new layout)."""
        self.prepareGeometryChange()
        model = self.model
        if model is None:
            self._bounds, self._edges = QRectF(0, 0, 1, 1), QPainterPath()
        else:
            left, top, right, bottom = model.layout.bounds
            self._bounds = QRectF(
                left - MARGIN * 2,
                top - MARGIN,
                right - left + MARGIN * 3,
                bottom - top + MARGIN * 2,
            )
            lay = model.layout
            xs = np.column_stack([lay.seg_x0, lay.seg_x1]).reshape(-1)
            ys = np.column_stack([lay.seg_y0, lay.seg_y1]).reshape(-1)
            self._edges = pg.arrayToQPath(xs, ys, connect="pairs") if len(xs) else QPainterPath()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def _view_rect(self) -> tuple[float, float, float, float]:
        box = self.getViewBox()
        if box is None:
            b = self._bounds
            return b.left(), b.top(), b.right(), b.bottom()
        (x0, x1), (y0, y1) = box.viewRange()
        return x0, min(y0, y1), x1, max(y0, y1)

    def paint(self, painter: QPainter, *args: object) -> None:
        model = self.model
        self.paint_count += 1
        if model is None:
            return
        left, top, right, bottom = self._view_rect()
        scale = abs(painter.transform().m11())  # screen pixels per scene unit
        self._paint_bands(painter, model, left, right, top, bottom)
        edge_pen = QPen(QColor("#8a8f98" if not self.dark else "#767b84"))
        edge_pen.setCosmetic(True)
        edge_pen.setWidthF(1.0)
        painter.setPen(edge_pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._edges)
        visible = model.in_view(left, top, right, bottom)
        shade, _, _ = model.shades()
        self._paint_nodes(painter, model, visible, shade)
        self.drawn_titles, self.drawn_edge_texts = [], []
        width_px = float(model.layout.width.min()) * scale if len(model.layout.width) else 0
        if width_px >= LABEL_MIN_PX:
            self._paint_labels(painter, model, visible, shade)
        if model.edge_labels and width_px >= EDGE_LABEL_MIN_PX:
            self._paint_edge_labels(painter, model, left, top, right, bottom)

    def _paint_bands(
        self, painter: QPainter, model: OperationsGraphModel, left: float, right: float,
        top: float, bottom: float,
    ) -> None:  # fmt: skip
        b = self._bounds
        for band in bands(model):
            if band.bottom < top or band.top > bottom:
                continue
            color = QColor(BANDS[band.value % len(BANDS)])
            color.setAlpha(40 if not self.dark else 60)
            rect = QRectF(b.left(), band.top, b.width(), band.bottom - band.top)
            painter.fillRect(rect, color)
            self._screen_text(
                painter, QPointF(max(b.left(), left), band.top), band.label, 11, color
            )

    def _paint_nodes(
        self, painter: QPainter, model: OperationsGraphModel, visible: np.ndarray,
        shade: np.ndarray,
    ) -> None:  # fmt: skip
        lay = model.layout
        outline = QPen(QColor("#5a5f66"))
        outline.setCosmetic(True)
        painter.setPen(outline)
        colors = [*RAMP, NO_FIGURES]
        shades = shade[visible]
        for k, color in enumerate(colors):
            mine = visible[shades == (k if k < len(RAMP) else -1)]
            if not mine.size:
                continue
            painter.setBrush(QBrush(QColor(color)))
            painter.drawRects([self._node_rect(lay, int(i)) for i in mine])
        marked = visible[model.marked()[visible]]
        if marked.size:
            pen = QPen(QColor("#1565c0" if not self.dark else "#64b5f6"))
            pen.setCosmetic(True)
            pen.setWidthF(3.0)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRects([self._node_rect(lay, int(i)).adjusted(-3, -3, 3, 3) for i in marked])
        if model.current >= 0 and model.current < len(lay.x):
            pen = QPen(QColor("#000000" if not self.dark else "#ffffff"))
            pen.setCosmetic(True)
            pen.setWidthF(2.0)
            pen.setStyle(Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(self._node_rect(lay, model.current).adjusted(-6, -6, 6, 6))

    @staticmethod
    def _node_rect(lay: GraphLayout, i: int) -> QRectF:
        w, h = float(lay.width[i]), float(lay.height)
        return QRectF(float(lay.x[i]) - w / 2, float(lay.y[i]) - h / 2, w, h)

    def _paint_labels(
        self, painter: QPainter, model: OperationsGraphModel, visible: np.ndarray,
        shade: np.ndarray,
    ) -> None:  # fmt: skip
        with _in_pixels(painter, 12) as (transform, metrics):
            for i in visible.tolist():
                rect = transform.mapRect(self._node_rect(model.layout, i)).adjusted(4, 1, -4, -1)
                title = model.title(i)
                if metrics.horizontalAdvance(title) > rect.width():
                    title = model.title(i, short=True)
                text = metrics.elidedText(title, Qt.TextElideMode.ElideRight, int(rect.width()))
                k = int(shade[i])
                painter.setPen(QColor(RAMP_TEXT[k] if k >= 0 else "#1b1b1b"))
                painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
                self.drawn_titles.append(text)

    def _paint_edge_labels(
        self, painter: QPainter, model: OperationsGraphModel, left: float, top: float,
        right: float, bottom: float,
    ) -> None:  # fmt: skip
        x, y, edge = edge_label_points(model)
        inside = (x >= left) & (x <= right) & (y >= top) & (y <= bottom)
        with _in_pixels(painter, 10) as (transform, metrics):
            fill = QColor("#ffffff" if not self.dark else "#2b2d30")
            fill.setAlpha(220)
            ink = QColor("#3a3f47" if not self.dark else "#d0d4da")
            taken: list[QRectF] = []
            sources: set[int] = set()
            for k in np.flatnonzero(inside).tolist():
                tensor = int(model.shown.edge_tensor[int(edge[k])])
                if tensor in sources:
                    continue  # a tensor read by several ops is labelled once
                point = transform.map(QPointF(float(x[k]), float(y[k])))
                text = model.edge_text(int(edge[k]))
                box = QRectF(metrics.boundingRect(text)).adjusted(-3, -1, 3, 1)
                box.moveCenter(point)
                if any(box.intersects(other) for other in taken):
                    continue  # never one label over another
                taken.append(box)
                sources.add(tensor)
                painter.fillRect(box, fill)
                painter.setPen(ink)
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
                self.drawn_edge_texts.append(text)

    def _screen_text(
        self, painter: QPainter, at: QPointF, text: str, pixels: int, color: QColor
    ) -> None:
        with _in_pixels(painter, pixels, bold=True) as (transform, _):
            point = transform.map(at)
            ink = QColor(color)
            ink.setAlpha(255)
            painter.setPen(ink)
            painter.drawText(QPointF(point.x() + 6, point.y() + pixels + 4), text)


@contextmanager
def _in_pixels(
    painter: QPainter, pixels: int, bold: bool = False
) -> Iterator[tuple[QTransform, QFontMetrics]]:
    """Text in screen pixels over the scene: the scene's transform (to place the text), the
    painter's own reset meanwhile, and a font ``pixels`` high."""
    transform = painter.transform()
    painter.save()
    painter.resetTransform()
    font = QFont(painter.font())
    font.setPixelSize(pixels)
    font.setBold(bold)
    painter.setFont(font)
    try:
        yield transform, QFontMetrics(font)
    finally:
        painter.restore()


class GraphCanvas(pg.PlotWidget):
    """Pan with the mouse, zoom with the wheel; a click picks a node, a double-click folds
    or opens its layer. ``node_clicked(shown)`` (-1: the background),
    ``node_double_clicked(shown)``, ``hovered(shown, scene point)``."""

    node_clicked = Signal(int)
    node_double_clicked = Signal(int)
    hovered = Signal(int, QPointF)

    def __init__(self) -> None:
        super().__init__()
        self.item = GraphItem()
        self.addItem(self.item)
        plot = self.getPlotItem()
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        drop_context_menus(self)  # and pyqtgraph's menus with them (they outlived windows)
        plot.hideButtons()
        box = plot.getViewBox()
        box.invertY(True)
        box.setAspectLocked(True)
        self.scene().sigMouseClicked.connect(self._on_click)
        self.scene().sigMouseMoved.connect(self._on_move)

    def set_model(self, model: OperationsGraphModel | None) -> None:
        self.item.set_model(model)
        self.show_top()

    def set_dark(self, dark: bool, background: str) -> None:
        self.item.dark = dark
        self.setBackground(background)
        self.item.update()

    def show_top(self) -> None:
        """The top of the graph at one pixel per unit (a node 150 px wide: its label reads),
        or the whole width when it fits; Fit shows the graph whole."""
        model = self.item.model
        if model is None:
            return
        lay = model.layout
        left, top, right, _ = lay.bounds
        box = self.getPlotItem().getViewBox()
        width = float(max(self.width(), 1))
        if right - left + MARGIN * 2 <= width:
            middle = (left + right) / 2
        else:  # wider than the page: centred on the first layers' nodes
            first = lay.layer <= min(int(lay.layer.min()) + 6, int(lay.layer.max()))
            middle = float(np.median(lay.x[first]))
            middle = min(max(middle, left + width / 2 - MARGIN), right - width / 2 + MARGIN)
        height = float(max(self.height(), 1))  # one pixel per unit down too
        box.setRange(
            xRange=(middle - width / 2, middle + width / 2),
            yRange=(top - MARGIN, top - MARGIN + height),
            padding=0,
        )

    def show_all(self) -> None:
        self.getPlotItem().getViewBox().setRange(rect=self.item.boundingRect(), padding=0)

    def center_on(self, shown: int) -> None:
        model = self.item.model
        if model is None or not 0 <= shown < len(model.layout.x):
            return
        box = self.getPlotItem().getViewBox()
        (x0, x1), (y0, y1) = box.viewRange()
        x, y = float(model.layout.x[shown]), float(model.layout.y[shown])
        if not (x0 <= x <= x1 and min(y0, y1) <= y <= max(y0, y1)):
            box.translateBy(x=x - (x0 + x1) / 2, y=y - (y0 + y1) / 2)

    def _scene_to_node(self, scene_pos: QPointF) -> int:
        model = self.item.model
        if model is None:
            return -1
        point = self.getPlotItem().getViewBox().mapSceneToView(scene_pos)
        return model.node_at(point.x(), point.y())

    def _on_click(self, event: object) -> None:
        if event.double():  # type: ignore[attr-defined]
            return  # mouseDoubleClickEvent has it
        if event.button() == Qt.MouseButton.LeftButton:  # type: ignore[attr-defined]
            self.node_clicked.emit(self._scene_to_node(event.scenePos()))  # type: ignore[attr-defined]

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        super().mouseDoubleClickEvent(event)
        shown = self._scene_to_node(self.mapToScene(event.position().toPoint()))
        if shown >= 0 and event.button() == Qt.MouseButton.LeftButton:
            self.node_double_clicked.emit(shown)

    def _on_move(self, scene_pos: QPointF) -> None:
        self.hovered.emit(self._scene_to_node(scene_pos), scene_pos)
