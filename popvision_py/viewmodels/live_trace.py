"""The System Trace of a live recording, Qt-free: a ``SystemTraceModel`` over the sorted
pieces a ``TraceTail`` keeps (``PiecedTrace``), so showing a new snapshot costs its new
pieces, not the recording so far.

What a poll redraws -- the lanes' layout, each lane's spans in the window, the instants per
pixel, the time limits -- is asked of each piece and combined per pixel. A piece's lanes,
depths and instants are worked out once (``piece_facts``: by the thread that made the
piece, or when first drawn) and reused by every later snapshot.

Event numbers are those of the joined trace (``PiecedTrace.whole``), which is built only
when a question about single events needs it: a click, a search, the call tree or a
selected range. Lanes that are not one piece after another (merged or collapsed rows,
spans arriving out of order) are drawn from the joined trace too: right, not flat.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import cached_property

import numpy as np

from popvision_py.viewmodels.piece_facts import (
    ChannelKey,
    piece_has_instants,
    piece_instants,
    piece_lanes,
    piece_pairs,
    piece_time_range,
)
from popvision_py.viewmodels.system_trace import LaneRow, SystemTraceModel
from profiler_core.analysis.chained_lanes import ChainedLane, chain_lanes
from profiler_core.analysis.trace_lanes import (
    MAX_THREAD_LANES,
    Lane,
    LaneSpans,
    ThreadLanes,
    ceil_ns,
    lane_window,
)
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.model import Trace
from profiler_core.trace.pieces import PiecedTrace, merged_index


class LiveTraceModel(SystemTraceModel):
    """The System Trace model of one snapshot of a live recording."""

    def __init__(self, snapshot: PiecedTrace) -> None:
        self.snapshot = snapshot
        self.pieces = snapshot.pieces
        self._whole_models: dict[ChannelKey, SystemTraceModel] = {}
        self._depths: dict[int, np.ndarray] = {}
        self._setup(snapshot.tables)

    @cached_property
    def trace(self) -> Trace:  # type: ignore[override]
        """The joined trace: built the first time a question about single events needs it."""
        return self.snapshot.whole()

    @property
    def n_events(self) -> int:
        return len(self.snapshot)

    def _whole(self) -> SystemTraceModel:
        """The joined trace's model under the same channel filter (and pins)."""
        key = self._channel_key
        model = self._whole_models.get(key)
        if model is None:
            model = SystemTraceModel(self.trace)
            if key is not None:
                model.set_channels(set(key))
            self._whole_models[key] = model
        model.pinned = list(self.pinned)
        return model

    # -- layout -------------------------------------------------------------------------
    def refilter(self) -> None:
        tables = self.tables
        every = len(self.shown_channels) == len(tables.channels)
        self._channels = None if every else sorted(self.shown_channels)
        self._channel_key = None if every else tuple(self._channels or ())
        self._thread_lanes = {}
        pairs = np.unique(np.concatenate([piece_pairs(p, self._channel_key) for p in self.pieces]))
        thread = (pairs >> 32).astype(np.int64)
        counts = np.bincount(thread, minlength=len(tables.threads))
        self._lane_counts = np.minimum(counts, MAX_THREAD_LANES).astype(np.int64)
        bounds = np.searchsorted(thread, np.arange(len(tables.threads) + 1))
        depth = (pairs & 0xFFFFFFFF).astype(np.int64)
        self._depths = {
            t: depth[bounds[t] : bounds[t + 1]] for t in np.flatnonzero(counts).tolist()
        }
        self.relayout()

    def thread_lanes(self, thread: int) -> ThreadLanes:
        """``thread``'s lanes, each a chain of its pieces' lanes at that depth."""
        lanes = self._thread_lanes.get(thread)
        if lanes is None:
            lanes = self._chained_lanes(thread) or self._whole().thread_lanes(thread)
            self._thread_lanes[thread] = lanes
        return lanes

    def _chained_lanes(self, thread: int) -> ThreadLanes | None:
        depths = self._depths.get(thread, np.zeros(0, np.int64))
        if len(depths) > MAX_THREAD_LANES:
            return None  # clamped lanes: the joined trace's lanes say how
        per_piece = [piece_lanes(p, thread, self._channel_key) for p in self.pieces]
        chains: list[Lane] = []
        for d in depths.tolist():
            found = [(i, lanes.lane_of(d)) for i, lanes in enumerate(per_piece)]
            found = [(i, k) for i, k in found if k >= 0]
            chain = chain_lanes([per_piece[i].lanes[k] for i, k in found], [i for i, _ in found])
            if chain is None:
                return None
            chains.append(chain)  # type: ignore[arg-type]  # a Lane to lane_window
        return ThreadLanes(chains, depths)

    def _merged_lane(self, depth: int) -> Callable[[], Lane]:
        model = self._model  # weak: the rows must not hold the model (see _setup)
        return lambda: model._whole()._merged_lane(depth)()

    def _summary_row(self, process: int) -> LaneRow:
        row, model = super()._summary_row(process), self._model
        return dataclasses.replace(
            row, make_lane=lambda: model._whole()._summary_row(process).make_lane()
        )

    # -- drawing ------------------------------------------------------------------------
    def time_limits(self) -> tuple[float, float]:
        ranges = [piece_time_range(p) for p in self.pieces[:-1]]
        tables = self.tables
        if len(tables) or tables.series or tables.heatmaps:
            ranges.append(tables.time_range())
        ranges = [r for r in ranges if r is not None]
        if not ranges:
            return 0.0, 1.0
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        return float(lo), float(max(hi, lo + 1))

    def _row_window(
        self, row: LaneRow, x0: float, x1: float, width: int
    ) -> tuple[LaneSpans, np.ndarray]:
        lane = row.lane
        if not isinstance(lane, ChainedLane):
            return super()._row_window(row, x0, x1, width)
        part = lane_window(lane, x0, x1, width)  # type: ignore[arg-type]
        single = np.flatnonzero(part.event >= 0)
        piece, local = lane.locate(part.event[single])
        labels_id = np.zeros(len(part), np.int64)
        event = part.event.copy()
        for p in np.unique(piece).tolist():
            here = piece == p
            labels_id[single[here]] = self.pieces[p].label[local[here]]
        event[single] = merged_index(self.pieces, piece, local)
        return dataclasses.replace(part, event=event), labels_id

    def instants(self, x0: float, x1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
        """As ``SystemTraceModel.instants``: counts summed over the pieces, and per column
        the earliest of the pieces' first instants (by time, then by event number)."""
        edges = x0 + (x1 - x0) * np.arange(width + 1) / max(width, 1)
        keys = ceil_ns(edges)
        counts = np.zeros(width, np.int64)
        column, piece, local, times = [], [], [], []
        for p, part in enumerate(self.pieces):
            t, events = piece_instants(part, self._channel_key)
            at = np.searchsorted(t, keys, side="left")
            here = np.diff(at)
            counts += here
            hit = np.flatnonzero(here > 0)
            column.append(hit)
            piece.append(np.full(len(hit), p, np.int64))
            local.append(events[at[hit]])
            times.append(t[at[hit]])
        first = np.full(width, -1, np.int64)
        column_a = np.concatenate(column)
        if len(column_a):
            event = merged_index(self.pieces, np.concatenate(piece), np.concatenate(local))
            order = np.lexsort((event, np.concatenate(times), column_a))
            column_a, event = column_a[order], event[order]
            lead = np.concatenate([[True], column_a[1:] != column_a[:-1]])
            first[column_a[lead]] = event[lead]
        return counts, first

    @property
    def instant_events(self) -> np.ndarray:
        return self._whole().instant_events

    def has_instants(self) -> bool:
        return any(piece_has_instants(piece) for piece in self.pieces)

    def open_spans(self) -> int:
        return int((self.tables.kind == EventKind.OPEN).sum())
