"""The Execution Trace's picks: a run chosen, a step or operation clicked, a lane's name
clicked (its IPU's tile strip), hover text, and following the report's shared selection
(steps picked elsewhere outlined, the trace zoomed to the current one if hidden)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QToolTip

from popvision_py.viewmodels.execution_trace import TILE_LANES
from popvision_py.viewmodels.operations import NONE_LABEL
from popvision_py.viewmodels.step_details import step_details
from popvision_py.viewmodels.timeline import NO_KEY
from popvision_py.views.plain_text import plain_tooltip
from popvision_py.views.timeline.spans_item import LANE_GAP


class TracePicking:
    """Part of ``ExecutionTraceView``: it uses the view's ``model``, ``opened``, ``plot``,
    ``control_bar``, ``details`` and ``step_panel``."""

    def _on_run_picked(self, run: int) -> None:
        if self.model is None or run < 0:
            return
        self.model.set_run(run)
        if self.opened is not None:
            self.opened.selection.select_run(run)

    def _on_span_clicked(self, index: int, shift: bool) -> None:
        if self.model is None or self.opened is None or index < 0:
            return
        step = self.model.span_step(index)
        if step >= 0:
            self.opened.selection.select_step(step, add=shift)
            self.details.setCurrentWidget(self.step_panel)
            return
        label = self.model.span_operation(index)
        if label is not None:
            steps = self.model.operation_steps(label)
            self.opened.selection.select_operation(label, steps, self.model.group_by)

    def _on_lane_name_clicked(self, event: object) -> None:
        """A click on a lane's name toggles the tile strip of its IPU."""
        if self.model is None or event.button() != Qt.MouseButton.LeftButton:
            return
        if not self.plot.lane_axis.sceneBoundingRect().contains(event.scenePos()):
            return
        lane = int(np.floor(self.plot.view_box.mapSceneToView(event.scenePos()).y()))
        if 0 <= lane < len(self.model.lanes):
            ipu = self.model.lanes[lane].ipu
            action = self.control_bar.tile_actions[ipu]
            action.setChecked(not action.isChecked())

    def _on_span_hovered(self, index: int, scene_pos: QPointF) -> None:
        if self.model is None:
            return
        text = self.model.tooltip(index) if index >= 0 else self._strip_tooltip(scene_pos)
        if not text:
            QToolTip.hideText()
            return
        view_pos = self.plot.mapFromScene(scene_pos)
        QToolTip.showText(self.plot.mapToGlobal(view_pos), plain_tooltip(text), self.plot)

    def _strip_tooltip(self, scene_pos: QPointF) -> str:
        """Hover text of a tile heat-map strip: the tile under the pointer in its step."""
        point = self.plot.view_box.mapSceneToView(scene_pos)
        for ipu, lane in self.model.tile_strips():
            fraction = (point.y() - lane) / (TILE_LANES - LANE_GAP)
            if 0 <= fraction < 1:
                return self.model.tile_tooltip(ipu, point.x(), fraction)
        return ""

    def _on_selection_changed(self, what: str) -> None:
        if self.model is None or self.opened is None:
            return
        if what == "run" and self.opened.selection.run != self.model.run:
            if 0 <= self.opened.selection.run < len(self.model.runs):
                self.control_bar.run_box.setCurrentIndex(self.opened.selection.run)
        elif what in ("steps", "operation"):
            self._follow_steps()

    def _follow_steps(self) -> None:
        selection = self.opened.selection
        keys = [np.zeros(0, np.int64)]
        # "(none)" is every step without a context: outlined, it would flood the flame
        if selection.operation and selection.operation != NONE_LABEL:
            keys.append(selection.operation_steps)
            if selection.operation_group_by == self.model.group_by:
                key = self.model.operation_key(selection.operation)
                keys.append(np.array([key] if key != NO_KEY else [], np.int64))
        # the selected steps stand apart from the rest of their operation
        self.plot.spans.set_highlight(np.concatenate(keys), selected=selection.steps)
        step = selection.step
        if step < 0:
            self.step_panel.show_nothing()
            return
        self.step_panel.show_step(step_details(self.model.report, step, self.model.debug))
        self._zoom_to_step_if_hidden(step, selection.steps)

    def _zoom_to_step_if_hidden(self, step: int, steps: np.ndarray) -> None:
        """Zoom to the first instance of ``step`` when no instance of ``steps`` is in view."""
        x0, x1 = self.plot.x_range
        if self.model.instance_in(steps, x0, x1):
            return
        first = self.model.first_instance(step)
        if first is None:
            return
        start, end = first
        pad = max((end - start) * 4, 20)
        self.plot.set_x_range(start - pad, end + pad)
