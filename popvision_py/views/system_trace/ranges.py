"""The System Trace's ranges: a typed range to show, and the selection range (a region on
the timeline) with its duration, its event count and the call tree summed inside it."""

from __future__ import annotations

import pyqtgraph as pg

from popvision_py.viewmodels.trace_csv import trace_event_rows
from popvision_py.viewmodels.trace_format import format_duration
from popvision_py.views.typed_entry import read_range


class RangeSelection:
    """Part of ``SystemTraceView``: what its range box, Select range and Call Tree tab do.
    It uses the view's ``model``, ``timeline``, ``control_bar``, ``details``, ``call_tree``,
    ``region`` and ``_call_tree_key``."""

    def type_range(self, text: str) -> bool:
        """Show ``text`` ("0.5-2", ms from the first event); False with a message if bad.
        An empty box shows the whole trace."""
        if not text.strip():
            self.control_bar.range_error.clear()
            if self.model is not None:
                self.timeline.show_all()
            return self.model is not None
        typed = read_range(text, self.control_bar.range_error)
        if self.model is None or typed is None:
            return False
        start, end = typed
        first = self.model.time_limits()[0]
        self.timeline.set_x_range(first + start * 1e6, first + end * 1e6)
        return True

    def set_range_selection(self, on: bool) -> None:
        if self.region is not None:
            self.timeline.removeItem(self.region)
            self.region = None
        if on and self.model is not None:
            x0, x1 = self.timeline.x_range
            width = x1 - x0
            self.region = pg.LinearRegionItem((x0 + width / 3, x0 + 2 * width / 3))
            self.region.setZValue(10)
            self.region.sigRegionChanged.connect(lambda _: self._update_range_info())
            self.region.sigRegionChangeFinished.connect(lambda _: self._update_call_tree())
            self.timeline.addItem(self.region)
        self._update_range_info()
        self._update_call_tree()

    def csv_rows(self) -> list[list[object]] | None:
        """Export CSV: the events in the selected range, or every event when none is."""
        if self.model is None:
            return None
        return trace_event_rows(self.model, *(self.selection_range() or (None, None)))

    def selection_range(self) -> tuple[float, float] | None:
        if self.region is None:
            return None
        lo, hi = self.region.getRegion()
        return float(lo), float(hi)

    def set_selection_range(self, t0: float, t1: float) -> None:
        if self.region is None:
            self.control_bar.select_range.setChecked(True)
        assert self.region is not None
        self.region.setRegion((t0, t1))
        self._update_call_tree()

    def _update_range_info(self) -> None:
        picked = self.selection_range()
        if picked is None or self.model is None:
            self.control_bar.range_info.setText("")
            return
        duration, count = self.model.range_summary(*picked)
        self.control_bar.range_info.setText(f"{format_duration(duration)}, {count:,} events")

    def refresh_call_tree(self) -> None:
        """Sum the call tree again (another trace or side is shown)."""
        self._call_tree_key = None
        self._update_call_tree()

    def _update_call_tree(self) -> None:
        if self.model is None or self.details.currentWidget() is not self.call_tree:
            return
        picked = self.selection_range()
        key = (id(self.model), picked)
        if key == self._call_tree_key:
            return
        self._call_tree_key = key
        tree = self.model.call_tree(*(picked or (None, None)))
        if picked is None:
            scope = "All of the trace (select a range to sum only what is inside it)"
        else:
            scope = f"The selected range ({format_duration(picked[1] - picked[0])})"
        self.call_tree.show_tree(tree, self.model.labels, scope)
