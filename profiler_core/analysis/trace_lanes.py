"""The system trace's drawing question: which spans of one flame lane (a thread at a depth)
fall in ns [t0, t1) drawn ``width_px`` pixels wide, with whatever shares a pixel merged?

A ``Lane`` holds the spans of a lane sorted by start plus two helper columns (ends sorted,
and which span reaches furthest so far), so a window costs a few binary searches per pixel
column edge: the work grows with the pixels on screen, not with the events in the lane.
Where one span hands over to the next inside a pixel column, the later is drawn there;
a column holding a span shorter than itself merges into a MERGED span. Spans of one
lane may overlap (merged lanes of several threads).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from profiler_core.analysis.indexed_lane import IndexedLane, ascending, indexed_lane
from profiler_core.analysis.window_lane import WindowLane
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.model import Trace

MERGED = -1
"""``event`` of a span that stands for several events sharing pixel columns."""


@dataclass(frozen=True)
class Lane:
    """Spans of one lane sorted by start (zero-length spans last 1 ns so they can be seen).

    A thread's lane of consecutive events with sorted ends -- the usual case -- is views of
    the Trace's columns and costs no memory of its own; other lanes hold copies.
    """

    start: np.ndarray  # int64 ns
    end: np.ndarray  # int64 ns, > start
    end_sorted: np.ndarray  # int64: ``end`` sorted, to count spans ended before a time
    first: int = 0  # event index of position 0, when ``events`` is None
    events: np.ndarray | None = None  # int64 index into the Trace, unless consecutive
    reach: np.ndarray | None = None  # position of the span ending last among 0..k (None: k)

    def __len__(self) -> int:
        return len(self.start)

    @property
    def event(self) -> np.ndarray:
        """The event index of every span of the lane."""
        if self.events is None:
            return np.arange(self.first, self.first + len(self), dtype=np.int64)
        return self.events

    def event_at(self, pos: np.ndarray) -> np.ndarray:
        return self.first + pos if self.events is None else self.events[pos]

    def reach_at(self, pos: np.ndarray) -> np.ndarray:
        return pos if self.reach is None else self.reach[pos]

    def start_at(self, pos: np.ndarray) -> np.ndarray:
        return self.start[pos]

    def end_at(self, pos: np.ndarray) -> np.ndarray:
        return self.end[pos]

    def started_before(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key, how many spans start before it."""
        return np.searchsorted(self.start, keys, side="left")

    def ended_by(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key, how many spans end at or before it."""
        return np.searchsorted(self.end_sorted, keys, side="right")

    def count_in(self, t0: float, t1: float) -> int:
        """How many spans overlap [t0, t1)."""
        started = int(np.searchsorted(self.start, ceil_ns(t1), side="left"))
        ended = int(np.searchsorted(self.end_sorted, floor_ns(t0), side="right"))
        return max(started - ended, 0)

    def held_bytes(self) -> int:
        """Bytes of its own the lane holds (copies, not views of the Trace's columns)."""
        arrays = {id(a): a for a in (self.start, self.end, self.end_sorted, self.events,
                                     self.reach) if a is not None}  # fmt: skip
        return sum(a.nbytes for a in arrays.values() if a.base is None)


AnyLane = Lane | IndexedLane
"""A lane as ``lane_window`` reads it: views or copies (``Lane``), or an index into the
Trace's columns (``IndexedLane``)."""


def ceil_ns(t: float | np.ndarray) -> np.ndarray:
    """int64 keys for searching int64 ns columns: a float key would make numpy convert the
    whole column to float64 on every search (a copy of it, each paint)."""
    return np.ceil(t).astype(np.int64)


def floor_ns(t: float | np.ndarray) -> np.ndarray:
    return np.floor(t).astype(np.int64)


@dataclass(frozen=True)
class LaneSpans:
    """What to draw of one lane in a window, in time order, never overlapping."""

    start: np.ndarray  # float64 ns
    end: np.ndarray  # float64 ns
    event: np.ndarray  # int64 event index, or MERGED
    count: np.ndarray  # int64 events the span stands for

    def __len__(self) -> int:
        return len(self.start)


def make_lane(trace: Trace, events: np.ndarray) -> Lane:
    """The lane of ``events`` (indices into ``trace``, any order)."""
    events = np.asarray(events, dtype=np.int64)
    n = len(events)
    if n and int(events[-1]) - int(events[0]) == n - 1 and _ascending(events):
        lane = _slice_lane(trace, int(events[0]), int(events[0]) + n)
        if lane is not None:
            return lane
    return _copied_lane(trace, events)


def _slice_lane(trace: Trace, first: int, stop: int) -> Lane | None:
    """The lane of events first..stop-1 as views of the Trace's columns (None when their
    starts are not in order)."""
    start = trace.start_ns[first:stop]
    if not _ascending(start):
        return None
    end = trace.end_ns[first:stop]
    if len(end) and bool((end <= start).any()):
        end = np.maximum(end, start + 1)
    if _ascending(end):
        return Lane(start, end, end, first, None, None)
    return _with_reach(start, end, first, None)


def _copied_lane(trace: Trace, events: np.ndarray) -> Lane:
    start = trace.start_ns[events]
    if not _ascending(start):
        order = np.argsort(start, kind="stable")
        events, start = events[order], start[order]
    end = np.maximum(trace.end_ns[events], start + 1)
    if _ascending(end):
        return Lane(start, end, end, 0, events, None)
    return _with_reach(start, end, 0, events)


def _with_reach(start: np.ndarray, end: np.ndarray, first: int, events: np.ndarray | None) -> Lane:
    """A lane whose spans overlap: ends sorted apart, and which span reaches furthest."""
    reaching = np.maximum.accumulate(end)
    positions = np.where(end == reaching, np.arange(len(end)), 0)
    reach = np.maximum.accumulate(positions).astype(np.int64)
    return Lane(start, end, np.sort(end), first, events, reach)


def _ascending(values: np.ndarray) -> bool:
    return len(values) < 2 or bool((values[1:] >= values[:-1]).all())


MAX_THREAD_LANES = 64
"""Most lanes one thread is drawn in: nesting deeper than this (a damaged depth column can
claim 10^9 levels) is drawn in the last lane, and counted, instead of a lane per level."""


@dataclass(frozen=True)
class ThreadLanes:
    """A thread's lanes, one per depth that occurs (in order) up to ``MAX_THREAD_LANES``."""

    lanes: list[AnyLane]
    depths: np.ndarray  # int64: the depth each lane draws (the last also all deeper ones)
    clamped: int = 0  # events deeper than the last lane's depth, drawn in it

    def lane_of(self, depth: int) -> int:
        """The lane drawing a span at ``depth`` (-1 when no lane holds that depth)."""
        pos = int(np.searchsorted(self.depths, depth, side="left"))
        if pos < len(self.depths) and self.depths[pos] == depth:
            return pos
        if len(self.depths) == MAX_THREAD_LANES and depth > self.depths[-1]:
            return len(self.depths) - 1
        return -1


def thread_lanes(trace: Trace, thread: int, channels: Iterable[int] | None = None) -> list[AnyLane]:
    """One lane per depth of ``thread`` (depth 0 first) of its spans (instants left out), of
    the given channels only when ``channels`` is not None (see ``thread_depth_lanes``)."""
    return thread_depth_lanes(trace, thread, channels).lanes


def thread_depth_lanes(
    trace: Trace, thread: int, channels: Iterable[int] | None = None
) -> ThreadLanes:
    """``thread``'s spans in one lane per depth that occurs, shallowest first: the cost
    follows the depths present, not the deepest value the depth column claims; past
    ``MAX_THREAD_LANES`` levels the rest share the last lane."""
    part = trace.thread_slice(thread)
    depth = trace.depth[part]
    keep = trace.kind[part] != EventKind.INSTANT
    if channels is not None:
        keep &= np.isin(trace.channel[part], np.fromiter(channels, np.int64))
    if not keep.any():
        return ThreadLanes([], np.zeros(0, np.int64))
    kept = depth[keep]
    if keep.all() and not kept.any():  # the usual IPU track: the thread's columns as they are
        lane = _slice_lane(trace, part.start, part.stop)
        if lane is not None:
            return ThreadLanes([lane], np.zeros(1, np.int64))
    depths = np.unique(kept).astype(np.int64)
    clamped = 0
    if len(depths) > MAX_THREAD_LANES:
        depths = depths[:MAX_THREAD_LANES]
        clamped = int((kept > depths[-1]).sum())
    # The thread's events are sorted by start already (checked: a lane's index searches
    # them), so each depth's events keep that order.
    in_order = ascending(trace.start_ns[part])
    lanes = []
    for i, d in enumerate(depths.tolist()):
        here = depth >= d if i == MAX_THREAD_LANES - 1 else depth == d
        events = np.flatnonzero(keep & here)
        events += part.start
        lanes.append(_thread_lane(trace, part, events, in_order))
    return ThreadLanes(lanes, depths, clamped)


def _thread_lane(trace: Trace, part: slice, events: np.ndarray, in_order: bool) -> AnyLane:
    """The lane of some of thread ``part``'s events (ascending): views of the columns when
    they are consecutive, an index into them when their spans never overlap (a depth of a
    properly nested thread), else copies."""
    n = len(events)
    if n and int(events[-1]) - int(events[0]) == n - 1:
        return make_lane(trace, events)
    lane = indexed_lane(trace.start_ns, trace.end_ns, part, events) if in_order else None
    return make_lane(trace, events) if lane is None else lane


def lane_counts(trace: Trace, channels: Iterable[int] | None = None) -> np.ndarray:
    """How many lanes ``thread_depth_lanes`` gives each thread, for every thread at once
    (a few passes over the columns), so a layout of 100k threads needs no lane built.

    The (thread, depth) pairs that occur are marked in a table of threads x depths, a
    block of events at a time: the temporaries stay a few MB however long the trace."""
    threads = len(trace.threads)
    wanted = None if channels is None else np.fromiter(channels, np.int64)
    n = len(trace)
    if not n:
        return np.zeros(threads, np.int64)
    low, high = int(trace.depth.min()), int(trace.depth.max())
    depths = high + 1
    if low < 0 or threads * depths > max(4 * n, 1 << 20):  # a huge table: sort the pairs
        return _lane_counts_sorted(trace, wanted)
    seen = np.zeros(threads * depths, bool)
    for a in range(0, n, _COUNT_BLOCK):
        block = slice(a, a + _COUNT_BLOCK)
        keep = trace.kind[block] != EventKind.INSTANT
        if wanted is not None:
            keep &= np.isin(trace.channel[block], wanted)
        pair = trace.thread[block][keep].astype(np.int64)
        pair *= depths
        pair += trace.depth[block][keep]
        seen[pair] = True
    counts = seen.reshape(threads, depths).sum(axis=1)
    return np.minimum(counts, MAX_THREAD_LANES).astype(np.int64)


_COUNT_BLOCK = 1 << 20


def _lane_counts_sorted(trace: Trace, wanted: np.ndarray | None) -> np.ndarray:
    keep = trace.kind != EventKind.INSTANT
    if wanted is not None:
        keep &= np.isin(trace.channel, wanted)
    thread = trace.thread[keep].astype(np.int64)
    depth = trace.depth[keep]
    if not depth.any():  # the usual trace: every span at depth 0, one lane per thread
        counts = np.bincount(thread, minlength=len(trace.threads)) > 0
        return counts.astype(np.int64)
    pairs = np.unique((thread << 32) | (depth.astype(np.int64) & 0xFFFFFFFF))
    counts = np.bincount(pairs >> 32, minlength=len(trace.threads))
    return np.minimum(counts, MAX_THREAD_LANES).astype(np.int64)


def merge_lanes(trace: Trace, lanes: Iterable[AnyLane]) -> Lane:
    """One lane of the spans of several (e.g. every thread's depth-d lane)."""
    parts = [lane.event for lane in lanes]
    return make_lane(trace, np.concatenate(parts) if parts else np.zeros(0, np.int64))


def lane_window(lane: WindowLane, t0: float, t1: float, width_px: int) -> LaneSpans:
    """Spans of ``lane`` in [t0, t1) for ``width_px`` pixel columns: a span wider than its
    columns keeps its event; columns where several events meet become MERGED spans."""
    if t1 <= t0 or width_px < 1:
        raise ValueError(f"an empty window: [{t0}, {t1}) over {width_px} pixels")
    if len(lane) == 0:
        empty = np.zeros(0)
        return LaneSpans(empty, empty, np.zeros(0, np.int64), np.zeros(0, np.int64))
    edges = t0 + (t1 - t0) * np.arange(width_px + 1) / width_px
    started = lane.started_before(ceil_ns(edges))  # start < edge
    ended = lane.ended_by(floor_ns(edges))  # end <= edge
    count = started[1:] - ended[:-1]  # spans overlapping each column
    latest = np.maximum(started[1:] - 1, 0)
    # Where two spans meet in a column -- the tail of one begun before it, the head of one
    # going on past it -- the later owns it; any span wholly inside a column merges.
    before = lane.start_at(np.maximum(latest - 1, 0)) < edges[:-1]
    handover = (count == 2) & (latest >= 1) & before & (lane.end_at(latest) >= edges[1:])
    owner = np.where(count == 1, lane.reach_at(latest), MERGED)
    owner = np.where(handover, latest, owner)
    owner = np.where(count <= 0, -2, owner)  # -2: nothing drawn in the column
    change = np.flatnonzero(np.diff(owner)) + 1
    first = np.concatenate([[0], change])
    stop = np.concatenate([change, [width_px]])
    code = owner[first]
    drawn = code != -2
    first, stop, code = first[drawn], stop[drawn], code[drawn]
    single = code >= 0
    pos = np.maximum(code, 0)
    start = np.where(single, np.maximum(lane.start_at(pos), edges[first]), edges[first])
    end = np.where(single, np.minimum(lane.end_at(pos), edges[stop]), edges[stop])
    event = np.where(single, lane.event_at(pos), MERGED)
    merged_count = started[stop] - ended[first]
    return LaneSpans(
        start.astype(np.float64),
        end.astype(np.float64),
        event.astype(np.int64),
        np.where(single, 1, merged_count).astype(np.int64),
    )


def children(trace: Trace, event: int) -> np.ndarray:
    """Indices of the spans directly nested in ``event`` (its thread, one level deeper)."""
    part = trace.thread_slice(int(trace.thread[event]))
    starts = trace.start_ns[part]
    s, e = int(trace.start_ns[event]), int(trace.end_ns[event])
    lo = int(np.searchsorted(starts, s, side="left"))
    hi = int(np.searchsorted(starts, e, side="left")) if e > s else lo
    inside = part.start + lo + np.arange(hi - lo)
    deeper = trace.depth[inside] == trace.depth[event] + 1
    span = trace.kind[inside] != EventKind.INSTANT
    return inside[deeper & span]


def self_time(trace: Trace, event: int) -> int:
    """``event``'s duration less its children's, in ns."""
    kids = children(trace, event)
    inner = int((trace.end_ns[kids] - trace.start_ns[kids]).sum())
    return int(trace.end_ns[event] - trace.start_ns[event]) - inner
