"""Flow arrows of the System Trace, Qt-free: which arrows a window shows (from the end of
the source span to the start of the target span, on the rows that draw them), merged per
pixel when there are many, and the flows into and out of one span for its details.

``Trace.flows`` holds (from event, to event) rows, as Chrome's flow events bind spans.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.trace_format import format_ns
from profiler_core.trace.model import Trace

MAX_ARROWS = 4000  # a paint draws at most this many (merged) arrows


@dataclass(frozen=True)
class FlowArrows:
    """Arrows to draw: from (x0, row0) to (x1, row1), times in trace ns, rows as lanes.
    ``count`` flows share each arrow (merged to the same pixels); ``flow`` is one of them."""

    x0: np.ndarray
    row0: np.ndarray
    x1: np.ndarray
    row1: np.ndarray
    count: np.ndarray
    flow: np.ndarray

    def __len__(self) -> int:
        return len(self.flow)

    @staticmethod
    def empty() -> FlowArrows:
        f, i = np.zeros(0), np.zeros(0, np.int64)
        return FlowArrows(f, i, f, i, i, i)


def flow_ends(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Each flow's (tail time, head time): the source span's end, the target span's start."""
    if not len(trace.flows):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return trace.end_ns[trace.flows[:, 0]], trace.start_ns[trace.flows[:, 1]]


def flow_arrows(
    trace: Trace,
    rows_of: callable,
    x0: float,
    x1: float,
    width: int,
    rows: range,
) -> FlowArrows:
    """The arrows of [x0, x1) at ``width`` pixels whose both ends are on ``rows`` (the rows
    on screen; ``rows_of(events)`` gives each event's row, -1 if none draws it). Arrows
    whose ends fall in the same pixels and rows are merged into one (with its count)."""
    if not len(trace.flows) or x1 <= x0 or width < 1:
        return FlowArrows.empty()
    tail, head = flow_ends(trace)
    shown = np.flatnonzero((np.maximum(tail, head) >= x0) & (np.minimum(tail, head) <= x1))
    if not len(shown):
        return FlowArrows.empty()
    scale = width / (x1 - x0)
    px0 = np.floor((tail[shown] - x0) * scale).astype(np.int64)
    px1 = np.floor((head[shown] - x0) * scale).astype(np.int64)
    src, dst = trace.flows[shown, 0], trace.flows[shown, 1]
    # One arrow per (pixel, thread, depth) of both ends, before asking which row draws them.
    keys = np.column_stack([px0, trace.thread[src], trace.depth[src],
                            px1, trace.thread[dst], trace.depth[dst]])  # fmt: skip
    _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    if len(first) > MAX_ARROWS * 4:  # too many to place: the most travelled ones
        keep = np.argsort(-counts, kind="stable")[: MAX_ARROWS * 4]
        first, counts = first[keep], counts[keep]
    r0, r1 = rows_of(src[first]), rows_of(dst[first])
    on = (r0 >= rows.start) & (r0 < rows.stop) & (r1 >= rows.start) & (r1 < rows.stop)
    first, counts, r0, r1 = first[on][:MAX_ARROWS], counts[on][:MAX_ARROWS], r0[on], r1[on]
    r0, r1 = r0[:MAX_ARROWS], r1[:MAX_ARROWS]
    return FlowArrows(
        x0=tail[shown][first].astype(np.float64),
        row0=r0,
        x1=head[shown][first].astype(np.float64),
        row1=r1,
        count=counts.astype(np.int64),
        flow=shown[first],
    )


def flows_of(trace: Trace, event: int) -> list[tuple[str, int]]:
    """("out" | "in", the other end's event) of every flow leaving or entering ``event``."""
    if not len(trace.flows):
        return []
    out = [("out", int(e)) for e in trace.flows[trace.flows[:, 0] == event, 1]]
    into = [("in", int(e)) for e in trace.flows[trace.flows[:, 1] == event, 0]]
    return out + into


def flow_rows(trace: Trace, event: int, title: callable) -> list[tuple[str, str, int]]:
    """Details rows of ``event``'s flows: (field, value, the other end's event)."""
    rows = []
    for direction, other in flows_of(trace, event):
        field = "Flow out →" if direction == "out" else "Flow in ←"
        where = title(int(trace.thread[other]))
        value = f"{trace.label_of(other)} on {where} at {format_ns(int(trace.start_ns[other]))}"
        rows.append((field, value, other))
    return rows
