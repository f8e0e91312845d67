"""The System Trace of a live recording, Qt-free: a ``SystemTraceModel`` over the sorted
pieces a ``TraceTail`` keeps (``PiecedTrace``), so showing a new snapshot costs its new
pieces, not the recording so far.

What a poll redraws -- the lanes' layout, each lane's spans in the window, the instants per
pixel, the time limits -- is asked of each piece (a piece's lanes, depths and instants are
worked out once, the first time it is drawn, and reused by every later snapshot) and
combined per pixel. Event numbers are those of the joined trace (``PiecedTrace.whole``),
which is built only when a question about single events needs it: a click, a search, the
call tree or a selected range. Lanes that are not one piece after another (merged or
collapsed rows, spans crossing) are drawn from the joined trace too: right, not flat.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from weakref import WeakKeyDictionary

import numpy as np

from popvision_py.viewmodels.system_trace import LaneRow, SystemTraceModel
from profiler_core.analysis.chained_lanes import ChainedLane, chain_lanes
from profiler_core.analysis.trace_lanes import (
    MAX_THREAD_LANES,
    Lane,
    LaneSpans,
    ThreadLanes,
    ceil_ns,
    lane_window,
    thread_depth_lanes,
)
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.model import Trace
from profiler_core.trace.pieces import PiecedTrace, merged_index

ChannelKey = tuple[int, ...] | None  # the shown channels (None: all)


@dataclass
class _PieceFacts:
    """What the live view has worked out about one piece; a piece lives on through many
    snapshots, so each fact is worked out once."""

    lanes: dict[tuple[int, ChannelKey], ThreadLanes] = field(default_factory=dict)
    pairs: dict[ChannelKey, np.ndarray] = field(default_factory=dict)  # (thread << 32) | depth
    instants: dict[ChannelKey, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    time_range: tuple[int, int] | None = None
    has_instants: bool | None = None


_FACTS: WeakKeyDictionary[Trace, _PieceFacts] = WeakKeyDictionary()


def _facts(piece: Trace) -> _PieceFacts:
    facts = _FACTS.get(piece)
    if facts is None:
        facts = _FACTS[piece] = _PieceFacts()
    return facts


def _kept(piece: Trace, channels: ChannelKey) -> np.ndarray:
    """Which of ``piece``'s events the channel filter shows."""
    if channels is None:
        return np.ones(len(piece), bool)
    return np.isin(piece.channel, np.array(channels, np.int64))


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
        pairs = np.unique(np.concatenate([self._pairs(p) for p in self.pieces]))
        thread = (pairs >> 32).astype(np.int64)
        counts = np.bincount(thread, minlength=len(tables.threads))
        self._lane_counts = np.minimum(counts, MAX_THREAD_LANES).astype(np.int64)
        bounds = np.searchsorted(thread, np.arange(len(tables.threads) + 1))
        depth = (pairs & 0xFFFFFFFF).astype(np.int64)
        self._depths = {
            t: depth[bounds[t] : bounds[t + 1]] for t in np.flatnonzero(counts).tolist()
        }
        self.relayout()

    def _pairs(self, piece: Trace) -> np.ndarray:
        """The (thread, depth) pairs of ``piece``'s shown spans, as thread << 32 | depth."""
        facts = _facts(piece)
        key = self._channel_key
        pairs = facts.pairs.get(key)
        if pairs is None:
            keep = (piece.kind != EventKind.INSTANT) & _kept(piece, key)
            thread = piece.thread[keep].astype(np.int64)
            depth = piece.depth[keep].astype(np.int64) & 0xFFFFFFFF
            deepest = int(depth.max()) + 1 if len(depth) else 1
            threads = len(piece.threads)
            if threads * deepest <= 1 << 22:  # counting beats sorting a big merged piece
                seen = np.flatnonzero(np.bincount(thread * deepest + depth))
                pairs = ((seen // deepest) << 32) | (seen % deepest)
            else:
                pairs = np.unique((thread << 32) | depth)
            facts.pairs[key] = pairs
        return pairs

    def _piece_lanes(self, piece: Trace, thread: int) -> ThreadLanes:
        facts = _facts(piece)
        key = (thread, self._channel_key)
        lanes = facts.lanes.get(key)
        if lanes is None:
            if thread < len(piece.threads):
                lanes = thread_depth_lanes(piece, thread, self._channels)
            else:  # a thread that began after this piece was read
                lanes = ThreadLanes([], np.zeros(0, np.int64))
            facts.lanes[key] = lanes
        return lanes

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
        per_piece = [self._piece_lanes(p, thread) for p in self.pieces]
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
        return lambda: self._whole()._merged_lane(depth)()

    def _summary_row(self, process: int) -> LaneRow:
        row = super()._summary_row(process)
        return dataclasses.replace(
            row, make_lane=lambda: self._whole()._summary_row(process).make_lane()
        )

    # -- drawing ------------------------------------------------------------------------
    def time_limits(self) -> tuple[float, float]:
        ranges = [self._time_range(p) for p in self.pieces[:-1]]
        tables = self.tables
        if len(tables) or tables.series or tables.heatmaps:
            ranges.append(tables.time_range())
        ranges = [r for r in ranges if r is not None]
        if not ranges:
            return 0.0, 1.0
        lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
        return float(lo), float(max(hi, lo + 1))

    @staticmethod
    def _time_range(piece: Trace) -> tuple[int, int] | None:
        if not len(piece):
            return None
        facts = _facts(piece)
        if facts.time_range is None:
            facts.time_range = piece.time_range()
        return facts.time_range

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

    def _piece_instants(self, piece: Trace) -> tuple[np.ndarray, np.ndarray]:
        """``piece``'s shown instants in time order: (times, event index in the piece)."""
        facts = _facts(piece)
        key = self._channel_key
        found = facts.instants.get(key)
        if found is None:
            events = np.flatnonzero((piece.kind == EventKind.INSTANT) & _kept(piece, key))
            events = events[np.argsort(piece.start_ns[events], kind="stable")]
            found = facts.instants[key] = (piece.start_ns[events], events)
        return found

    def instants(self, x0: float, x1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
        """As ``SystemTraceModel.instants``: counts summed over the pieces, and per column
        the earliest of the pieces' first instants (by time, then by event number)."""
        edges = x0 + (x1 - x0) * np.arange(width + 1) / max(width, 1)
        keys = ceil_ns(edges)
        counts = np.zeros(width, np.int64)
        column, piece, local, times = [], [], [], []
        for p, part in enumerate(self.pieces):
            t, events = self._piece_instants(part)
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
        for piece in self.pieces:
            facts = _facts(piece)
            if facts.has_instants is None:
                facts.has_instants = bool((piece.kind == EventKind.INSTANT).any())
            if facts.has_instants:
                return True
        return False

    def open_spans(self) -> int:
        return int((self.tables.kind == EventKind.OPEN).sum())
