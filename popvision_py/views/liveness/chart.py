"""The Liveness report's chart: live bytes per program step as one image per paint.

The widget only adapts a ``LivenessViewModel``: it draws the curve (the largest step of each
pixel column), shades the selected operation's steps, marks the selected steps and the peak,
turns hovers into callouts and clicks (shift-click adds) into the report's step selection.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.curve_pixels import area_image, centre_columns, columns_of
from popvision_py.viewmodels.liveness import LivenessViewModel
from popvision_py.viewmodels.step_colors import STEP_CLASS_COLORS, StepClass
from popvision_py.views.axes import BytesAxis, IndexAxis
from popvision_py.views.pixel_image import PixelImageItem
from popvision_py.views.plain_text import plain_tooltip, show_hover_text
from popvision_py.views.plot_menus import drop_context_menus

CHART_HELP = (
    "Memory live at each program step. Wheel: zoom the steps; drag: pan; click: select a "
    "step; shift-click: add a step to compare; double-click: show all steps."
)


class LivenessCurveItem(PixelImageItem):
    """``curve[step]`` as a filled area, the largest step of each pixel column, with shaded
    (operation) and marked (selected) steps."""

    def __init__(self) -> None:
        super().__init__()
        self.curve = np.zeros(0, dtype=np.int64)
        self.band = np.zeros(0, dtype=bool)
        self.marks = np.zeros(0, dtype=bool)
        self.colors = np.zeros((6, 4), dtype=np.uint8)

    def set_data(self, curve: np.ndarray, y_max: float) -> None:
        self.curve = curve
        if self.band.shape != curve.shape:
            self.band = np.zeros(curve.shape, dtype=bool)
            self.marks = np.zeros(curve.shape, dtype=bool)
        self._set_bounds(QRectF(-0.5, 0.0, max(curve.shape[0], 1), y_max))

    def set_band(self, band: np.ndarray) -> None:
        self.band = band
        self.invalidate()

    def set_marks(self, marks: np.ndarray) -> None:
        self.marks = marks
        self.invalidate()

    def render(
        self, x0: float, x1: float, y0: float, y1: float, width: int, height: int
    ) -> np.ndarray:
        self.shown, (band, selected) = columns_of(self.curve, x0, x1, width, self.band, self.marks)
        self.shown_x = (x0, x1)
        valid = self.shown >= 0
        heights = np.full(self.shown.shape, np.nan)
        heights[valid] = self.curve[self.shown[valid]]
        lines = centre_columns(np.flatnonzero(self.marks), x0, x1, width)
        return area_image(
            heights, y0, y1, height, self.colors, band, selected, lines, self.top_down
        )


class LivenessChart(QWidget):
    """Title, peak line and the plot of one report's liveness."""

    def __init__(self, model: LivenessViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.left_axis = BytesAxis("Live memory")
        self.left_axis.setWidth(72)  # room for "1,000" beside the unit label at any scope
        self.bottom_axis = IndexAxis("bottom")
        self.bottom_axis.setLabel("Program step")
        self.plot = pg.PlotWidget(axisItems={"left": self.left_axis, "bottom": self.bottom_axis})
        self.plot.setToolTip(plain_tooltip(CHART_HELP))
        self.plot.setMinimumHeight(220)
        self.plot.hideButtons()
        drop_context_menus(self.plot)
        self.view_box = self.plot.getPlotItem().getViewBox()
        self.view_box.setMouseEnabled(x=True, y=False)
        self.area = LivenessCurveItem()
        self.peak_marker = pg.ScatterPlotItem(size=13, symbol="t")
        self.peak_marker.setToolTip("The peak: the first step with the most live memory.")
        for item in (self.area, self.peak_marker):
            self.plot.addItem(item)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.peak_label = QLabel()
        self.peak_label.setObjectName("peak")
        self.peak_label.setStyleSheet("font-weight: bold")
        self.peak_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.peak_label.setToolTip(
            "The first program step with the most live memory in this scope; click it on the "
            "chart to list its variables."
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.peak_label)
        layout.addWidget(self.plot, 1)
        self.hover_text = ""
        scene = self.plot.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)
        self.view_box.sigXRangeChanged.connect(lambda *_: self.area.update())
        model.changed.connect(self._on_model_changed)
        self.apply_colors()
        self.refresh()
        self.reset_zoom()
        self.show_selected_steps()
        self.show_operation()

    # -- drawing --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw the curve (scope, tiles or always-live changed) and keep the zoom."""
        m = self.model
        n = m.num_steps
        y_max = m.y_max()
        self.area.set_data(m.curve(), y_max)
        self.left_axis.set_largest(y_max)
        self.view_box.setLimits(
            xMin=-0.5, xMax=n - 0.5, minXRange=min(max(n, 1), 4), yMin=0, yMax=y_max
        )
        self.view_box.setYRange(0, y_max, padding=0)
        x0, x1 = self.view_box.viewRange()[0]
        if x0 < -0.5 or x1 > n - 0.5:  # a report with fewer steps: show them all
            self.reset_zoom()
        step, size = m.peak()
        self.peak_marker.setData([step], [size] if step >= 0 else [])
        if step < 0:
            self.peak_marker.setData([], [])
        self.peak_label.setText(m.peak_text())
        self.title.setText(m.title_text())

    def reset_zoom(self) -> None:
        self.view_box.setXRange(-0.5, self.model.num_steps - 0.5, padding=0)

    def show_selected_steps(self) -> None:
        self.area.set_marks(self.model.step_mask(self.model.selection.steps))

    def show_operation(self) -> None:
        self.area.set_band(self.model.step_mask(self.model.selection.operation_steps))

    def _on_model_changed(self, what: str) -> None:
        if what == "curve":
            self.refresh()
        elif what == "steps":
            self.show_selected_steps()
        elif what == "operation":
            self.show_operation()

    def apply_colors(self) -> None:
        colors = chart_colors(self)
        dark = colors.background != "#ffffff"
        self.plot.setBackground(colors.background)
        for axis in (self.left_axis, self.bottom_axis):
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        compute = STEP_CLASS_COLORS[StepClass.COMPUTE]
        fill = list(rgba(compute))
        fill[3] = 150 if dark else 110
        band = list(rgba(STEP_CLASS_COLORS[StepClass.GLOBAL_EXCHANGE]))
        band[3] = 70
        self.area.colors = np.array(
            [(0, 0, 0, 0), band, rgba(colors.selection), fill, rgba(compute), rgba(colors.limit)],
            dtype=np.uint8,
        )
        self.area.invalidate()
        self.peak_marker.setBrush(pg.mkBrush(colors.limit))
        self.peak_marker.setPen(pg.mkPen(colors.foreground))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_colors()
        super().changeEvent(event)

    # -- gestures -------------------------------------------------------------------------
    def step_under(self, scene_pos: QPointF) -> int:
        """The program step drawn under a scene point (-1 off the data)."""
        if not self.view_box.sceneBoundingRect().contains(scene_pos):
            return -1
        return self.area.position_at(self.view_box.mapSceneToView(scene_pos).x())

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        self.hover_text = self.model.hover_text(self.step_under(scene_pos))
        show_hover_text(self.plot, scene_pos, self.hover_text)

    def _on_mouse_clicked(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.double():
            self.reset_zoom()
            return
        step = self.step_under(event.scenePos())
        if step >= 0:
            add = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            self.model.click_step(step, add=add)
