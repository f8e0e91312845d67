"""The System Trace's CSV export, Qt-free: one row per event on a shown channel (spans and
instants) overlapping the selected range, or all of them, in time order, in ns from the
trace's origin as the timeline counts them."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.system_trace import SystemTraceModel
from profiler_core.formats.pvti import EventKind

HEADER = ["Process", "Thread", "Channel", "Label", "Kind", "Depth", "Start (ns)", "End (ns)",
          "Duration (ns)"]  # fmt: skip
KIND_NAMES = {int(EventKind.INSTANT): "instant", int(EventKind.OPEN): "open span"}


def trace_event_rows(
    model: SystemTraceModel, t0: float | None = None, t1: float | None = None
) -> list[list[object]]:
    """The header, then the events of ``model``'s shown channels overlapping [t0, t1)."""
    trace = model.trace
    events = np.flatnonzero(np.isin(trace.channel, sorted(model.shown_channels)))
    if t0 is not None and t1 is not None:
        start, end = trace.start_ns[events], trace.end_ns[events]
        instant = trace.kind[events] == EventKind.INSTANT
        inside = (start < t1) & np.where(instant, start >= t0, end > t0)
        events = events[inside]
    events = events[np.lexsort((trace.depth[events], trace.start_ns[events]))]
    rows: list[list[object]] = [list(HEADER)]
    for event in events.tolist():
        thread = trace.threads[int(trace.thread[event])]
        start, end = int(trace.start_ns[event]), int(trace.end_ns[event])
        rows.append([
            trace.processes[thread.process].name, thread.name,
            trace.channels[int(trace.channel[event])], trace.label_of(event),
            KIND_NAMES.get(int(trace.kind[event]), "span"), int(trace.depth[event]),
            start, end, end - start,
        ])  # fmt: skip
    return rows
