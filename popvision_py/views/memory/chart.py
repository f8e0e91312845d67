"""The Memory report's chart: a ``MemoryViewModel`` drawn as stacked bars or a heat map.

The widget only adapts: it reads arrays from the view model, draws them with the items of
``items.py``, turns hovers into tooltips and clicks (shift-click adds) into selections.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpacerItem, QVBoxLayout, QWidget

from popvision_py.theme import chart_colors
from popvision_py.viewmodels.colors import SELECTION_OUTLINE, rgba
from popvision_py.viewmodels.format import format_bytes, format_count
from popvision_py.viewmodels.memory import Layout, MemoryViewModel
from popvision_py.views.axes import BytesAxis, IndexAxis
from popvision_py.views.memory.boundaries import IpuBoundariesItem
from popvision_py.views.memory.items import HeatMapItem, StackedColumnsItem
from popvision_py.views.memory.legend import CategoryLegend, heat_lut
from popvision_py.views.plain_text import escape, plain_label, plain_tooltip, show_hover_text
from popvision_py.views.plot_menus import drop_context_menus

CHART_HELP = (
    "Memory per tile, stacked by category. Wheel: zoom the tile range; drag: pan; "
    "click: select a tile; shift-click: add a tile to compare; double-click: show all."
)


class MemoryChart(QWidget):
    """Chart, title line and legend for one report's memory."""

    def __init__(self, model: MemoryViewModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.left_axis = BytesAxis("Memory")
        self.bottom_axis = IndexAxis("bottom")
        self.plot = pg.PlotWidget(axisItems={"left": self.left_axis, "bottom": self.bottom_axis})
        self.plot.setToolTip(plain_tooltip(CHART_HELP))
        self.plot.setMinimumHeight(220)
        self.plot.hideButtons()
        drop_context_menus(self.plot)
        self.view_box = self.plot.getPlotItem().getViewBox()
        self.view_box.setMouseEnabled(x=True, y=False)
        self.bars = StackedColumnsItem()
        self.heat = HeatMapItem()
        self.limit_line = pg.InfiniteLine(angle=0, movable=False)
        self.limit_label = pg.TextItem(anchor=(1, 1))
        self.boundaries = IpuBoundariesItem()
        self.heat_marks = pg.PlotDataItem(connect="pairs")  # selected tiles on the heat map
        items = (self.bars, self.heat, self.boundaries, self.limit_line, self.limit_label)
        for item in (*items, self.heat_marks):
            self.plot.addItem(item)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)  # two lines in a narrow window, never a wider window
        # The limit when it is above the y axis: named in the title row, right-aligned, so
        # it never covers the bars however short the chart (compare mode's second chart).
        self.limit_above = plain_label()
        self.legend = CategoryLegend()
        self.legend.setFixedWidth(250)
        self.hover_text = ""
        self._layout_drawn: Layout | None = None
        self._row = QHBoxLayout()
        self._row.setContentsMargins(0, 0, 0, 0)
        self._row.addWidget(self.plot, 1)
        self._row.addWidget(self.legend)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(2)
        title_row = QHBoxLayout()
        title_row.setContentsMargins(0, 0, 0, 0)
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.limit_above)
        self._legend_gap = QSpacerItem(self.legend.width(), 0)  # the limit ends over the plot
        title_row.addSpacerItem(self._legend_gap)
        row = self._row
        layout.addLayout(title_row)
        layout.addLayout(row, 1)
        scene = self.plot.scene()
        scene.sigMouseMoved.connect(self._on_mouse_moved)
        scene.sigMouseClicked.connect(self._on_mouse_clicked)
        self.view_box.sigXRangeChanged.connect(self._on_x_range)
        model.changed.connect(self._on_model_changed)
        self.apply_colors()
        self.refresh()

    def take_legend(self) -> CategoryLegend:
        """Take the legend out of the chart's row (compare mode shows one legend beside both
        charts, so they get one width and one height); the chart keeps filling it."""
        self._row.removeWidget(self.legend)
        self._legend_gap.changeSize(0, 0)
        self.layout().invalidate()
        return self.legend

    # -- drawing --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Redraw everything from the view model (layout, options or data changed)."""
        m = self.model
        layout_changed = self._layout_drawn is not m.layout
        self._layout_drawn = m.layout
        heat = m.layout is Layout.HEAT_MAP
        self.bars.setVisible(not heat)
        self.heat.setVisible(heat)
        self.heat_marks.setVisible(heat)
        self.view_box.invertY(heat)
        n = m.num_positions
        if heat:
            self._draw_heat_map()
        else:
            self._draw_bars()
        self.bottom_axis.setLabel(m.x_label())
        self.bottom_axis.names = (
            [f"IPU {i}" for i in range(n)] if m.layout is Layout.BY_IPU else None
        )
        self.view_box.setLimits(xMin=-0.5, xMax=n - 0.5, minXRange=min(n, 4))
        if layout_changed or not heat:
            self.view_box.setXRange(-0.5, n - 0.5, padding=0)
        self._update_title()

    def _draw_bars(self) -> None:
        m = self.model
        y_max = m.y_max()
        series = m.series()
        colors = np.array([rgba(color) for _, color, _ in series], dtype=np.uint8)
        self.bars.set_data(m.values(), m.totals(), colors, m.selected_positions(), y_max)
        self.left_axis.title = "Memory per IPU" if m.layout is Layout.BY_IPU else "Memory"
        self.left_axis.show_ipu_rows(False)
        self.left_axis.set_largest(y_max, m.units)
        self.view_box.setLimits(yMin=0, yMax=y_max, minYRange=y_max)
        self.view_box.setYRange(0, y_max, padding=0)
        self.boundaries.setVisible(True)
        self.boundaries.set_data(*m.ipu_boundaries(), y_max)
        self._place_limit()
        self.legend.show_series(series)

    def _place_limit(self) -> None:
        """The limit as a dashed line with its label when it is on the y axis, else
        ``▲ ... above`` over the chart's top right (Graph Analyser's arrow)."""
        m = self.model
        limit = m.limit()
        in_view = limit is not None and m.limit_in_view()
        self.limit_label.setVisible(in_view)
        self.limit_line.setVisible(in_view)
        self.limit_above.setVisible(limit is not None and not in_view)
        if limit is None:
            return
        if in_view:
            self.limit_label.setText(m.limit_text())
            self.limit_line.setValue(limit)
            self.limit_label.setPos(m.num_positions - 0.5, limit)
        else:
            self.limit_above.setText(m.limit_text())

    def _draw_heat_map(self) -> None:
        m = self.model
        lut = heat_lut()
        heat = m.heat_map()
        low, high = m.heat_levels()  # 0 to the tile limit (or the hottest tile), shared
        self.heat.set_data(heat, (low, high), lut)
        ipus = m.table.num_ipus
        self.left_axis.show_ipu_rows(True)
        self.view_box.setLimits(yMin=-0.5, yMax=ipus - 0.5, minYRange=ipus)
        self.view_box.setYRange(-0.5, ipus - 0.5, padding=0)
        self.limit_line.setVisible(False)
        self.limit_label.setVisible(False)
        self.limit_above.setVisible(False)
        self.boundaries.setVisible(False)
        self.legend.show_scale(lut, low, high, float(m.table.bytes_per_tile), m)
        self._mark_heat_selection()

    def _mark_heat_selection(self) -> None:
        """A line through each selected tile's cell, the height of its IPU's row."""
        x, ipu = self.model.heat_selection()
        xs = np.repeat(x.astype(np.float64), 2)
        ys = np.repeat(ipu.astype(np.float64), 2) + np.tile([-0.5, 0.5], len(x))
        self.heat_marks.setData(xs, ys)

    def _update_title(self) -> None:
        m = self.model
        over = m.over_limit_count()
        over_text = (
            f"<span style='color:{chart_colors(self).limit}'><b>{format_count(over)} tiles "
            "over the limit</b></span>"
            if over
            else "no tile over the limit"
        )
        name = f"<b>{escape(m.name)}</b> — " if m.name else ""
        self.title.setText(
            f"{name}{format_count(m.table.num_tiles)} tiles on {m.table.num_ipus} IPU(s), "
            f"{format_bytes(m.table.bytes_per_tile, units=m.units)} per tile; {over_text}"
        )

    def _on_model_changed(self, what: str) -> None:
        if what == "selection":
            if self.model.layout is not Layout.HEAT_MAP:
                self.bars.set_selection(self.model.selected_positions())
            else:
                self._mark_heat_selection()
        else:
            self.refresh()

    def _on_x_range(self, *args: object) -> None:
        self.bars.update()
        self.heat.update()

    def apply_colors(self) -> None:
        colors = chart_colors(self)
        self.plot.setBackground(colors.background)
        for axis in (self.left_axis, self.bottom_axis):
            axis.setPen(colors.foreground)
            axis.setTextPen(colors.foreground)
        pen = QPen(pg.mkColor(colors.limit))
        pen.setWidthF(1.5)
        pen.setStyle(Qt.PenStyle.DashLine)
        pen.setCosmetic(True)
        self.limit_line.setPen(pen)
        self.limit_label.setColor(colors.limit)
        self.limit_above.setStyleSheet(f"color: {colors.limit};")
        self.boundaries.set_colors(colors.foreground, colors.foreground)
        self.bars.selection_color = rgba(colors.selection)
        self.heat_marks.setPen(pg.mkPen(SELECTION_OUTLINE[:3], width=2, cosmetic=True))
        self.bars.invalidate()
        if self._layout_drawn is not None:
            self._update_title()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.apply_colors()
        super().changeEvent(event)

    # -- gestures -------------------------------------------------------------------------
    def position_under(self, scene_pos: QPointF) -> tuple[int, int]:
        """(position, IPU row) under a scene point; position -1 when off the data."""
        if not self.view_box.sceneBoundingRect().contains(scene_pos):
            return -1, -1
        point = self.view_box.mapSceneToView(scene_pos)
        if self.model.layout is Layout.HEAT_MAP:
            return self.heat.position_at(point.x()), self.heat.row_at(point.y())
        if not 0 <= point.y() <= self.model.y_max():
            return -1, -1
        return self.bars.position_at(point.x()), -1

    def text_under(self, scene_pos: QPointF) -> str:
        position, row = self.position_under(scene_pos)
        if position < 0:
            return ""
        if self.model.layout is Layout.HEAT_MAP:
            return self.model.heat_map_hover_text(row, position) if row >= 0 else ""
        return self.model.hover_text(position)

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        self.hover_text = self.text_under(scene_pos)
        show_hover_text(self.plot, scene_pos, self.hover_text)

    def _on_mouse_clicked(self, event: object) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        if event.double():
            self.refresh()
            return
        position, row = self.position_under(event.scenePos())
        if position < 0:
            return
        m = self.model
        if m.layout is Layout.HEAT_MAP:
            if row < 0:
                return
            tiles = [row * m.table.tiles_per_ipu + position]
        else:
            tiles = m.tiles_at(position)
        if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            m.add_tiles(tiles)
        else:
            m.select_tiles(tiles)
