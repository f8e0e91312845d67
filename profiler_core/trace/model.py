"""The Trace model: a host (and IPU-track) timeline as numpy event columns plus small tables.

Events are sorted by (thread, start, depth), so each thread's events are one contiguous
slice with sorted starts and a view asks "what is in [t0, t1) on this thread" with two
``searchsorted`` calls. Times are int64 ns relative to ``origin_wall_ns`` (epoch ns).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from profiler_core.formats.pvti import EventKind

#: {graph name: {series name: (t_ns, values)}}
SeriesMap = dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]


_BLOCK = 1 << 20  # events whose durations are taken at once


@dataclass(frozen=True)
class Process:
    pid: int | str  # a Chrome trace may name its processes by strings
    hostname: str
    name: str
    origin_wall_ns: int  # epoch ns at which this process's trace clock started


@dataclass(frozen=True)
class Thread:
    name: str
    process: int  # index into Trace.processes
    os_tid: int | None  # None for a pseudo track such as "IPU 0"
    #: "thread"; "track" (an IPU); "async" (a Chrome trace's async spans of one id);
    #: "process" / "global" (instants scoped to a process / the whole trace)
    kind: str


@dataclass(frozen=True, eq=False)
class Heatmap:
    """Counts of values per bucket over time: bucket b holds edges[b-1] <= v < edges[b]."""

    name: str
    unit: str
    edges: np.ndarray  # float64, n edges -> n + 1 buckets (below first, ..., above last)
    t_ns: np.ndarray  # int64 per sample
    counts: np.ndarray  # int64, shape (samples, len(edges) + 1)


@dataclass(frozen=True, eq=False)
class Trace:
    """One or several processes' events, series and heatmaps on one time axis."""

    origin_wall_ns: int
    start_ns: np.ndarray  # int64
    end_ns: np.ndarray  # int64; == start_ns for instants; last commit time for OPEN spans
    depth: np.ndarray  # int32, 0 = outermost on its thread
    thread: np.ndarray  # int32 index into threads
    channel: np.ndarray  # int32 index into channels
    label: np.ndarray  # int32 index into labels
    kind: np.ndarray  # uint8 EventKind
    labels: tuple[str, ...]
    channels: tuple[str, ...]
    threads: tuple[Thread, ...]
    processes: tuple[Process, ...]
    thread_offsets: np.ndarray  # thread t's events are [offsets[t], offsets[t + 1])
    series: SeriesMap = field(default_factory=dict)
    series_units: dict[str, str] = field(default_factory=dict)  # graph -> unit
    heatmaps: dict[str, Heatmap] = field(default_factory=dict)
    #: event index -> JSON text (a dict, or an imported trace's compact EventArgs)
    args: Mapping[int, str] = field(default_factory=dict)
    #: flow arrows: (F, 2) int64 rows of (from event, to event), as Chrome's flow events bind
    flows: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.int64))
    #: What makes this trace incomplete beyond open spans ("x.pvti: incomplete: ..."),
    #: e.g. a truncated file of which only the committed rows still present were read.
    warnings: tuple[str, ...] = ()
    #: True when ``threads`` are already in the order to show them (a Chrome trace's
    #: sort indexes); False lets a view order them by name (a .pvti's IPU 0, IPU 1 ...)
    tracks_in_order: bool = False
    _longest: np.ndarray = field(default=None, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self._longest is None:
            object.__setattr__(self, "_longest", self._longest_per_thread())

    def _longest_per_thread(self) -> np.ndarray:
        """The longest duration per thread (0 without events), a block of events at a time:
        no column-sized array of durations beside the columns."""
        return self._per_thread_max(lambda b: self.end_ns[b] - self.start_ns[b], 0)

    def _per_thread_max(self, values: Callable[[slice], np.ndarray], empty: int) -> np.ndarray:
        """The largest of ``values(block)`` per thread (``empty`` for a thread without
        events; values are never below it), over blocks of events (no column-sized temporary)
        and every thread a block touches at once (a trace may have 100k threads)."""
        out = np.full(len(self.threads), empty, np.int64)
        offsets = np.asarray(self.thread_offsets, dtype=np.int64)
        n = min(len(self), int(offsets[-1])) if len(offsets) else 0
        for a in range(0, n, _BLOCK):
            b = min(a + _BLOCK, n)
            first = int(np.searchsorted(offsets, a, side="right")) - 1
            last = int(np.searchsorted(offsets, b, side="left"))
            threads = np.arange(first, last)
            lo = np.maximum(offsets[threads], a) - a
            hi = np.minimum(offsets[threads + 1], b) - a
            some = hi > lo
            threads, lo = threads[some], lo[some]
            if len(threads):
                highs = np.maximum.reduceat(values(slice(a, b)), lo)
                out[threads] = np.maximum(out[threads], highs)
        return out

    def __len__(self) -> int:
        return len(self.start_ns)

    @property
    def duration_ns(self) -> np.ndarray:
        return self.end_ns - self.start_ns

    def time_range(self) -> tuple[int, int]:
        """(first start, last end) over events and series samples; (0, 0) when empty."""
        lows = [self.start_ns.min()] if len(self) else []
        highs = [self.end_ns.max()] if len(self) else []
        for t, _ in (s for graph in self.series.values() for s in graph.values()):
            if len(t):
                lows.append(t.min())
                highs.append(t.max())
        for heatmap in self.heatmaps.values():
            if len(heatmap.t_ns):
                lows.append(heatmap.t_ns.min())
                highs.append(heatmap.t_ns.max())
        return (int(min(lows)), int(max(highs))) if lows else (0, 0)

    def thread_slice(self, thread: int) -> slice:
        """The contiguous index range of ``thread``'s events (sorted by start)."""
        return slice(int(self.thread_offsets[thread]), int(self.thread_offsets[thread + 1]))

    def events_in_range(self, thread: int, t0: int, t1: int) -> np.ndarray:
        """Indices of ``thread``'s events that overlap [t0, t1), in start order.

        A span overlaps when it starts before t1 and ends after t0; an instant when it
        lies in [t0, t1).
        """
        part = self.thread_slice(thread)
        starts = self.start_ns[part]
        # No event of this thread lasts longer than _longest, so earlier starts can't reach t0.
        lo = int(np.searchsorted(starts, t0 - self._longest[thread], side="left"))
        hi = int(np.searchsorted(starts, t1, side="left"))
        s = starts[lo:hi]
        e = self.end_ns[part][lo:hi]
        hit = (e > t0) | (s >= t0)
        return part.start + lo + np.flatnonzero(hit)

    def max_depth(self) -> np.ndarray:
        """Deepest nesting level per thread (-1 for a thread without events)."""
        return self._per_thread_max(lambda b: self.depth[b], -1)

    def partial_warnings(self) -> list[str]:
        """What makes this trace partial, in words ([] for a whole one): ``warnings`` (a
        file cut short, a writer that failed or never closed it) and spans still open at
        the last commit. The CLI, pva and the window all say these same sentences."""
        found = list(self.warnings)
        still_open = int((self.kind == EventKind.OPEN).sum())
        if still_open:
            found.append(
                f"incomplete: {still_open:,} span(s) were still open at the last commit (the "
                "program was running or stopped without closing them); they end there"
            )
        return found

    def label_of(self, event: int) -> str:
        return self.labels[int(self.label[event])]

    def is_instant(self) -> np.ndarray:
        return self.kind == EventKind.INSTANT
