"""A flame lane that is an index into the Trace's columns, not a copy of them.

A thread's spans at one depth are not consecutive events (their parents and children lie
between them), but they come in the thread's start order and, nesting properly, never
overlap. Such a lane keeps only which events it draws (4 bytes a span), not copies of
their starts and ends (24 bytes a span with the index: ~200 MB at first paint of a
10M-event trace), and answers ``lane_window``'s questions with binary searches of the
thread's own sorted starts: two ``searchsorted`` calls per question, as a copied lane.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

#: events checked at once when a lane is made: the check's temporaries stay a few MB
_CHECK_BLOCK = 1 << 18


@dataclass(frozen=True, eq=False)
class IndexedLane:
    """Spans ``events`` of one thread (ascending event indices, so in start order) whose
    ends, made at least 1 ns past their starts as every lane draws them, never pass the
    next span's start. ``starts`` and ``ends`` are the Trace's whole columns."""

    starts: np.ndarray  # int64: the Trace's start_ns itself
    ends: np.ndarray  # int64: the Trace's end_ns itself
    thread_first: int  # the thread's events are thread_first..thread_stop-1
    thread_stop: int
    events: np.ndarray  # int32 (int64 past 2**31 events) event indices, ascending
    stretched: bool = True  # whether some span ends at its start (and is drawn 1 ns long)

    reach: ClassVar[None] = None  # never overlapping: each span reaches furthest so far

    def __len__(self) -> int:
        return len(self.events)

    @property
    def event(self) -> np.ndarray:
        """The event index of every span of the lane."""
        return self.events.astype(np.int64)

    def event_at(self, pos: np.ndarray) -> np.ndarray:
        return self.events[pos].astype(np.int64)

    def reach_at(self, pos: np.ndarray) -> np.ndarray:
        return pos

    def start_at(self, pos: np.ndarray) -> np.ndarray:
        return self.starts[self.events[pos]]

    def end_at(self, pos: np.ndarray) -> np.ndarray:
        event = self.events[pos]
        if not self.stretched:
            return self.ends[event]
        return np.maximum(self.ends[event], self.starts[event] + 1)

    def started_before(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key, how many spans start before it."""
        return self._starting(keys, "left")

    def ended_by(self, keys: np.ndarray) -> np.ndarray:
        """Per int64 key, how many spans end at or before it: every span starting at or
        before it has, but perhaps the last of them (the spans never overlap)."""
        keys = np.asarray(keys, np.int64)
        began = self._starting(keys, "right")
        if not len(self):
            return began
        last = np.maximum(began - 1, 0)
        return np.where(began > 0, last + (self.end_at(last) <= keys), 0)

    def count_in(self, t0: float, t1: float) -> int:
        """How many spans overlap [t0, t1)."""
        started = int(self.started_before(np.ceil([t1]).astype(np.int64))[0])
        ended = int(self.ended_by(np.floor([t0]).astype(np.int64))[0])
        return max(started - ended, 0)

    def held_bytes(self) -> int:
        """Bytes of its own the lane holds: its index (the columns are the Trace's)."""
        return self.events.nbytes if self.events.base is None else 0

    def _starting(self, keys: np.ndarray, side: str) -> np.ndarray:
        """Spans whose start is before (``left``) or at or before (``right``) each key: the
        thread's events so placed, found in its sorted starts, then in ``events``. Both
        searches look only between where the smallest and the largest key fall (a zoomed
        window's few spans, not the whole thread)."""
        keys = np.asarray(keys, np.int64)
        if not len(keys):
            return np.zeros(0, np.int64)
        starts = self.starts[self.thread_first : self.thread_stop]
        lo, hi = _bounds(starts, keys.min(), keys.max(), side)
        found = np.searchsorted(starts[lo:hi], keys, side=side)  # type: ignore[call-overload]
        found += self.thread_first + lo
        # keys of the index's own dtype: numpy would convert the whole index otherwise
        found = found.astype(self.events.dtype)
        a, b = _bounds(self.events, found.min(), found.max(), "left")
        return a + np.searchsorted(self.events[a:b], found, side="left")


def _bounds(values: np.ndarray, low: int, high: int, side: str) -> tuple[int, int]:
    """Where the searches of any key in [low, high] land in sorted ``values``."""
    return (
        int(np.searchsorted(values, low, side=side)),  # type: ignore[call-overload]
        int(np.searchsorted(values, high, side=side)),  # type: ignore[call-overload]
    )


def indexed_lane(
    starts: np.ndarray, ends: np.ndarray, thread: slice, events: np.ndarray
) -> IndexedLane | None:
    """The lane of ``events`` (ascending indices within ``thread``'s slice, whose starts
    ascend) as an index, or None when two of its spans overlap (crossing spans): such a
    lane needs its ends sorted apart, as ``trace_lanes`` copies them."""
    dtype = np.int32 if len(starts) < 2**31 else np.int64
    events = np.asarray(events).astype(dtype, copy=False)
    stretched = False
    for a in range(0, len(events), _CHECK_BLOCK):
        part = events[a : a + _CHECK_BLOCK + 1]
        s, e = starts[part], ends[part]
        stretched = stretched or bool((e <= s).any())
        if (np.maximum(e[:-1], s[:-1] + 1) > s[1:]).any():
            return None
    return IndexedLane(starts, ends, thread.start, thread.stop, events, stretched)


def ascending(values: np.ndarray) -> bool:
    """Whether ``values`` never decrease, checked a block at a time (no column-sized mask)."""
    n = len(values)
    for a in range(0, max(n - 1, 0), _CHECK_BLOCK):
        part = values[a : a + _CHECK_BLOCK + 1]
        if (part[1:] < part[:-1]).any():
            return False
    return True
