"""The System Trace's timeline, Qt-free: which lanes are shown (a flame per thread, pinned
threads first, collapsed processes as one summary lane, or every thread merged), the spans
of each in a window for the shared timeline, instants per pixel, search and span details.

Times are the Trace's: int64 ns from its origin. Lanes are built once per channel filter
(``profiler_core.analysis.trace_lanes``); a window asks each visible lane for its spans
merged per pixel column, so a paint costs the pixels on screen, not the events.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from popvision_py.viewmodels.lane_names import deeper_lane_name, track_titles
from popvision_py.viewmodels.timeline import SpanBatch
from popvision_py.viewmodels.trace_colors import MERGED_COLOR, label_colors
from popvision_py.viewmodels.trace_format import format_duration, format_ns, shown_label
from profiler_core.analysis.call_tree import CallTree, call_tree, event_parents
from profiler_core.analysis.trace_lanes import (
    MAX_THREAD_LANES,
    MERGED,
    Lane,
    LaneSpans,
    ThreadLanes,
    ceil_ns,
    children,
    floor_ns,
    lane_counts,
    lane_window,
    merge_lanes,
    self_time,
    thread_depth_lanes,
)
from profiler_core.errors import ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.json_guard import load_json_text
from profiler_core.trace.model import Trace


@dataclass(frozen=True)
class LaneRow:
    """One row of the timeline: a thread at a depth, a collapsed process or a merged depth.
    Its spans (``lane``) are gathered the first time the row is drawn: a trace of 100k
    threads lays out its rows without building 100k lanes."""

    name: str  # shown on the left (a thread's deeper lanes: "↳ depth 1" ...)
    make_lane: Callable[[], Lane]
    kind: str  # "thread", "summary" (collapsed process) or "merged" (all threads)
    thread: int = -1  # the thread, for "thread" rows
    process: int = -1  # the process, for "thread" and "summary" rows
    depth: int = 0  # the lane's position among its thread's lanes

    @cached_property
    def lane(self) -> Lane:
        return self.make_lane()


def _natural(name: str) -> list[tuple[int, int | str]]:
    """A sort key putting "IPU 2" before "IPU 10" (numbers compare as numbers)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", name)]


class SystemTraceModel:
    """What the System Trace timeline shows of one Trace, and the choices that shape it.

    ``tables`` is the Trace that names threads, labels and channels and holds the series,
    heatmaps, flows and warnings: the trace itself here; a live recording's model
    (``live_trace.LiveTraceModel``) keeps its events in pieces and joins them only when
    asked a question about single events."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._setup(trace)

    def _setup(self, tables: Trace) -> None:
        """The choices and layout of a trace named by ``tables`` (``trace`` itself here)."""
        trace = self.tables = tables
        # rows make their lanes through a weak reference: a replaced model (a live recording
        # makes one a poll) and its pieces go at once, not at Python's next cyclic collection
        self._model = weakref.proxy(self)
        self.shown_channels: set[int] = set(range(len(trace.channels)))
        self.pinned: list[int] = []  # threads drawn above all others, in pin order
        self.collapsed: set[int] = set()  # processes drawn as one summary lane
        self.merge_all = False
        self.colors = label_colors(len(trace.labels))
        #: The trace's labels as drawn: cut before any text layout sees them.
        self.labels = tuple(shown_label(label) for label in trace.labels)
        self._thread_lanes: dict[int, ThreadLanes] = {}  # built when first drawn
        self._channels: list[int] | None = None
        self._lane_counts = np.zeros(len(trace.threads), np.int64)
        # A Chrome trace's tracks come in the order its sort indexes ask for (the global
        # instants' row first); a .pvti's: each process's threads, then its tracks by name
        # (IPU 2 before IPU 10), as its writer gives no order of its own.
        self._order = (
            list(range(len(trace.threads)))
            if trace.tracks_in_order
            else sorted(
                range(len(trace.threads)),
                key=lambda t: (
                    trace.threads[t].process,
                    trace.threads[t].kind != "thread",
                    _natural(trace.threads[t].name),
                    t,
                ),
            )
        )
        self._titles = track_titles(trace)
        self.rows: list[LaneRow] = []
        self._row_index: dict[tuple, int] | None = None  # row_of's lookup, per layout
        self._instants = np.zeros(0, np.int64)
        self._parents: np.ndarray | None = None
        self.refilter()

    # -- layout -------------------------------------------------------------------------
    def refilter(self) -> None:
        """Rebuild every lane after the channel filter changed."""
        trace = self.trace
        every = len(self.shown_channels) == len(trace.channels)
        channels = None if every else sorted(self.shown_channels)
        self._channels = channels
        self._thread_lanes = {}
        self._lane_counts = lane_counts(trace, channels)
        instants = np.flatnonzero(trace.kind == EventKind.INSTANT)
        if channels is not None:
            instants = instants[np.isin(trace.channel[instants], channels)]
        self._instants = instants[np.argsort(trace.start_ns[instants], kind="stable")]
        self.relayout()

    def thread_order(self) -> list[int]:
        """Pinned threads, then each process's threads, then its tracks (IPU 0, IPU 1 ...)."""
        pinned = set(self.pinned)
        return [*self.pinned, *(t for t in self._order if t not in pinned)]

    def thread_lanes(self, thread: int) -> ThreadLanes:
        """``thread``'s lanes under the channel filter, built the first time they are asked."""
        lanes = self._thread_lanes.get(thread)
        if lanes is None:
            lanes = thread_depth_lanes(self.trace, thread, self._channels)
            self._thread_lanes[thread] = lanes
        return lanes

    def _lane(self, thread: int, depth: int) -> Callable[[], Lane]:
        model = self._model
        return lambda: model.thread_lanes(thread).lanes[depth]

    def thread_title(self, thread: int) -> str:
        """A track's lane name (``lane_names.track_titles``)."""
        return self._titles[thread]

    def relayout(self) -> None:
        trace = self.tables
        rows: list[LaneRow] = []
        if self.merge_all:
            deepest = int(self._lane_counts.max()) if len(self._lane_counts) else 0
            for d in range(deepest):
                name = "All threads" if d == 0 else deeper_lane_name(d)
                rows.append(LaneRow(name, self._merged_lane(d), "merged", depth=d))
            self.rows = rows
            self._row_index = None
            return
        summarised: set[int] = set()
        for t in self.thread_order():
            process = trace.threads[t].process
            if process in self.collapsed and t not in self.pinned:
                if process not in summarised:
                    summarised.add(process)
                    rows.append(self._summary_row(process))
                continue
            for d in range(int(self._lane_counts[t])):
                name = self.thread_title(t) if d == 0 else deeper_lane_name(d)
                rows.append(LaneRow(name, self._lane(t, d), "thread", t, process, d))
        self.rows = rows
        self._row_index = None

    def _merged_lane(self, depth: int) -> Callable[[], Lane]:
        def make(model: SystemTraceModel = self._model) -> Lane:
            threads = np.flatnonzero(model._lane_counts > depth).tolist()
            return merge_lanes(model.trace, [model.thread_lanes(t).lanes[depth] for t in threads])

        return make

    def _summary_row(self, process: int) -> LaneRow:
        threads = [
            t
            for t, th in enumerate(self.tables.threads)
            if th.process == process and t not in self.pinned
        ]
        shown = [t for t in threads if self._lane_counts[t]]
        name = f"▸ {self.tables.processes[process].name} ({len(threads)} threads)"
        model = self._model
        lane = lambda: merge_lanes(model.trace, [model.thread_lanes(t).lanes[0] for t in shown])  # noqa: E731
        return LaneRow(name, lane, "summary", process=process)

    def lane_names(self) -> list[str]:
        return [row.name for row in self.rows]

    def set_pinned(self, thread: int, pinned: bool) -> None:
        if pinned and thread not in self.pinned:
            self.pinned.append(thread)
        elif not pinned and thread in self.pinned:
            self.pinned.remove(thread)
        self.relayout()

    def set_collapsed(self, process: int, collapsed: bool) -> None:
        (self.collapsed.add if collapsed else self.collapsed.discard)(process)
        self.relayout()

    def set_merge_all(self, merge: bool) -> None:
        self.merge_all = merge
        self.relayout()

    def set_channels(self, shown: set[int]) -> None:
        self.shown_channels = set(shown)
        self.refilter()

    def row_of(self, event: int) -> int:
        """The row that draws ``event`` (-1 when none does, e.g. its channel is hidden)."""
        thread = int(self.trace.thread[event])
        lane = self.thread_lanes(thread).lane_of(int(self.trace.depth[event]))
        if lane < 0:
            return -1
        index = self._row_index
        if index is None:
            index = self._row_index = {
                (row.kind, row.thread, row.process, row.depth): i
                for i, row in reversed(list(enumerate(self.rows)))  # the first row wins
            }
        process = self.trace.threads[thread].process
        for key in (("thread", thread, process, lane), ("merged", -1, -1, lane)):
            if key in index:
                return index[key]
        return index.get(("summary", -1, process, 0), -1) if lane == 0 else -1

    def rows_of(self, events: np.ndarray) -> np.ndarray:
        """``row_of`` each of ``events`` (an array)."""
        return np.array([self.row_of(e) for e in np.asarray(events).tolist()], np.int64)

    def clamped_text(self) -> str:
        """ "" unless some thread nests deeper than it is drawn: how many spans share the
        last lane (a damaged depth column can claim 10^9 levels)."""
        deep = np.flatnonzero(self._lane_counts == MAX_THREAD_LANES).tolist()
        clamped = {t: self.thread_lanes(t).clamped for t in deep}
        clamped = {t: n for t, n in clamped.items() if n}
        if not clamped:
            return ""
        names = ", ".join(self.thread_title(t) for t in list(clamped)[:3])
        more = f" and {len(clamped) - 3} more" if len(clamped) > 3 else ""
        return (
            f"{sum(clamped.values()):,} span(s) on {names}{more} nest deeper than "
            f"{MAX_THREAD_LANES} levels; they are drawn in the thread's last lane."
        )

    # -- drawing ------------------------------------------------------------------------
    def time_limits(self) -> tuple[float, float]:
        lo, hi = self.trace.time_range()
        return float(lo), float(max(hi, lo + 1))

    def spans(self, x0: float, x1: float, width: int, rows: range | None = None) -> SpanBatch:
        """The spans in [x0, x1) at ``width`` pixels of ``rows`` (the rows on screen; all
        by default): the timeline's source."""
        if x1 <= x0 or width < 1:
            return SpanBatch.empty()
        batches = []
        for i in rows if rows is not None else range(len(self.rows)):
            if not 0 <= i < len(self.rows):
                continue
            part, labels_id = self._row_window(self.rows[i], x0, x1, width)
            if not len(part):
                continue
            single = part.event >= 0
            color = np.where(single[:, None], self.colors[labels_id], MERGED_COLOR)
            label_text = [
                self.labels[int(lab)] if ok else f"{int(c):,} events"
                for ok, lab, c in zip(
                    single.tolist(), labels_id.tolist(), part.count.tolist(), strict=True
                )
            ]
            batches.append(
                SpanBatch(
                    lane=np.full(len(part), i, np.int32),
                    start=part.start,
                    end=part.end,
                    color=color.astype(np.uint8),
                    key=np.where(single, part.event, MERGED),
                    labels=label_text,
                )
            )
        return SpanBatch.concat(batches)

    def _row_window(
        self, row: LaneRow, x0: float, x1: float, width: int
    ) -> tuple[LaneSpans, np.ndarray]:
        """``row``'s spans in the window and each one's label id."""
        part = lane_window(row.lane, x0, x1, width)
        return part, self.trace.label[np.maximum(part.event, 0)]

    def instants(self, x0: float, x1: float, width: int) -> tuple[np.ndarray, np.ndarray]:
        """Per pixel column of [x0, x1): instants in it (counts) and the first one (-1)."""
        t = self.trace.start_ns[self._instants]
        edges = x0 + (x1 - x0) * np.arange(width + 1) / max(width, 1)
        at = np.searchsorted(t, ceil_ns(edges), side="left")
        counts = np.diff(at)
        if len(t) == 0:
            return counts, np.full(width, -1, np.int64)
        first = np.where(counts > 0, self._instants[np.minimum(at[:-1], len(t) - 1)], -1)
        return counts, first

    @property
    def instant_events(self) -> np.ndarray:
        """Shown instants (their channel is on), in time order."""
        return self._instants

    # -- questions ----------------------------------------------------------------------
    def range_summary(self, t0: float, t1: float) -> tuple[float, int]:
        """Duration of [t0, t1) and the shown events (spans and instants) overlapping it."""
        spans = self._spans_in(t0, t1)
        t = self.trace.start_ns[self._instants]
        instants = int(
            np.searchsorted(t, ceil_ns(t1), "left") - np.searchsorted(t, ceil_ns(t0), "left")
        )
        return t1 - t0, spans + instants

    def _spans_in(self, t0: float, t1: float) -> int:
        """Shown spans overlapping [t0, t1), counted as each lane counts them
        (``Lane.count_in``: zero-length spans last 1 ns) over the whole columns at once."""
        trace = self.trace
        keep = trace.kind != EventKind.INSTANT
        if self._channels is not None:
            keep &= np.isin(trace.channel, self._channels)
        end = np.maximum(trace.end_ns, trace.start_ns + 1)
        hit = (trace.start_ns < ceil_ns(t1)) & (end > floor_ns(t0)) & keep
        return int(hit.sum())

    def search(self, text: str) -> np.ndarray:
        """Events whose label contains ``text`` (any case), in time order."""
        text = text.strip().lower()
        if not text:
            return np.zeros(0, np.int64)
        hits = [i for i, label in enumerate(self.trace.labels) if text in label.lower()]
        events = np.flatnonzero(np.isin(self.trace.label, hits))
        return events[np.argsort(self.trace.start_ns[events], kind="stable")]

    def details(self, event: int) -> list[tuple[str, str]]:
        """(field, value) rows describing ``event``."""
        trace = self.trace
        start, end = int(trace.start_ns[event]), int(trace.end_ns[event])
        kind = int(trace.kind[event])
        thread = int(trace.thread[event])
        rows = [
            ("Label", self.labels[int(trace.label[event])]),
            ("Kind", {EventKind.INSTANT: "instant", EventKind.OPEN: "open span (not ended)"}.get(
                kind, "span")),
            ("Channel", trace.channels[int(trace.channel[event])]),
            ("Thread", self.thread_title(thread)),
            ("Start", format_ns(start)),
        ]  # fmt: skip
        if kind != EventKind.INSTANT:
            rows += [
                ("Duration", format_duration(end - start)),
                ("Self time", format_duration(self_time(trace, event))),
                ("Children", f"{len(children(trace, event)):,}"),
                ("Depth", str(int(trace.depth[event]))),
            ]
        text = trace.args.get(event)
        if text is not None:
            try:
                value = load_json_text(text, None, "arguments")
                items = value.items() if isinstance(value, dict) else [("value", value)]
                rows += [(f"Argument {k}", json.dumps(v)) for k, v in items]
            except ReportError:  # not JSON, or nested too deeply: shown as the text it is
                rows.append(("Arguments", text[:2000]))
        return rows

    def call_tree(self, t0: float | None = None, t1: float | None = None) -> CallTree:
        """Time by label path of every span (all channels), in [t0, t1) when given."""
        if self._parents is None:
            self._parents = event_parents(self.trace)
        return call_tree(self.trace, t0, t1, parents=self._parents)

    @property
    def n_events(self) -> int:
        return len(self.trace)

    def has_instants(self) -> bool:
        """Whether the trace has instants (shown or hidden by the channel filter)."""
        return len(self._instants) > 0 or bool(self.trace.is_instant().any())

    def open_spans(self) -> int:
        """Spans still open when the file was last written (the trace is incomplete)."""
        return int((self.trace.kind == EventKind.OPEN).sum())
