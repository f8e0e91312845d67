"""openTrace: libpva's trace reader (the "reading PVTI files" tutorial) over a Trace, made
lazily from its columns.

``trace.processes[].threads[]`` (``pid``, ``tid``); ``thread.events`` are the outermost
events, as libpva returns them, their nested events reached through ``children()``
(``thread.allEvents`` has every event in start order). An event has ``label``,
``channel``, ``timestamp`` and ``duration`` in whole microseconds (``timestamp`` since the
Unix epoch, from the trace's wall-clock origin; ``duration`` the difference of the end's
and start's whole microseconds), and ``start`` / ``end`` in fractional µs from the trace's
origin. ``trace.series`` lists the metric series. Only what a script touches becomes a
Python object.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, overload

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.pva.lazy import LazyList
from profiler_core.trace import Trace, open_trace
from profiler_core.trace.json_guard import load_json_text


class TraceEvent:
    """One event of a Trace, viewed through its index; equal when it is the same event."""

    __slots__ = ("_i", "_path", "_trace")

    def __init__(self, trace: Trace, index: int, path: Path | None = None) -> None:
        self._trace = trace
        self._i = index
        self._path = path

    @property
    def label(self) -> str:
        return self._trace.labels[int(self._trace.label[self._i])]

    @property
    def channel(self) -> str:
        return self._trace.channels[int(self._trace.channel[self._i])]

    @property
    def start(self) -> float:
        """Start in µs from the trace origin."""
        return int(self._trace.start_ns[self._i]) / 1000

    @property
    def timestamp(self) -> int:
        """Start in whole µs since the Unix epoch."""
        return (self._trace.origin_wall_ns + int(self._trace.start_ns[self._i])) // 1000

    @property
    def duration(self) -> int:
        """Whole µs from the start's timestamp to the end's (0 for an instant)."""
        origin = self._trace.origin_wall_ns
        return (origin + int(self._trace.end_ns[self._i])) // 1000 - self.timestamp

    @property
    def end(self) -> float:
        return int(self._trace.end_ns[self._i]) / 1000

    @property
    def depth(self) -> int:
        return int(self._trace.depth[self._i])

    @property
    def isInstant(self) -> bool:
        return int(self._trace.kind[self._i]) == EventKind.INSTANT

    @property
    def isOpen(self) -> bool:
        """A span that had not ended when the trace was last written (e.g. a crash)."""
        return int(self._trace.kind[self._i]) == EventKind.OPEN

    @property
    def args(self) -> Any:
        """The event's arguments, decoded when asked for; text that is not JSON, or JSON
        nested too deeply, raises ``ReportError`` naming the trace file and the event."""
        text = self._trace.args.get(self._i)
        if text is None:
            return None
        return load_json_text(text, self._path, f"event {self._i} ({self.label!r}) arguments")

    def children(self) -> list[TraceEvent]:
        """The events directly nested in this one, in start order."""
        t = self._trace
        i = self._i
        part = t.thread_slice(int(t.thread[i]))
        end = t.end_ns[i]
        hi = part.start + int(np.searchsorted(t.start_ns[part], end, side="right"))
        starts, depths = t.start_ns[i + 1 : hi], t.depth[i + 1 : hi]
        hit = (depths == t.depth[i] + 1) & (starts < end)
        return [TraceEvent(t, i + 1 + int(j), self._path) for j in np.flatnonzero(hit)]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceEvent) and (other._trace, other._i) == (self._trace, self._i)

    def __hash__(self) -> int:
        return hash((id(self._trace), self._i))

    def __repr__(self) -> str:
        return f"TraceEvent({self.label!r}, start={self.start}, duration={self.duration})"


Event = TraceEvent
"""libpva's name for an event (``pva.Event`` in type hints)."""


class EventList(Sequence[TraceEvent]):
    """The events of one thread in start order; items are made when indexed."""

    def __init__(self, trace: Trace, part: slice, path: Path | None = None) -> None:
        self._trace = trace
        self._part = part
        self._path = path

    def __len__(self) -> int:
        return self._part.stop - self._part.start

    @overload
    def __getitem__(self, index: int) -> TraceEvent: ...
    @overload
    def __getitem__(self, index: slice) -> list[TraceEvent]: ...
    def __getitem__(self, index: int | slice) -> TraceEvent | list[TraceEvent]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"event {index} of {n}")
        return TraceEvent(self._trace, self._part.start + (index % n), self._path)

    def __iter__(self) -> Iterator[TraceEvent]:
        trace, path = self._trace, self._path
        return (TraceEvent(trace, i, path) for i in range(self._part.start, self._part.stop))


class TraceThread:
    def __init__(self, trace: Trace, index: int, path: Path | None = None) -> None:
        self._trace = trace
        self._index = index
        self._path = path
        info = trace.threads[index]
        self.name = info.name
        self.id = info.os_tid  # None for a pseudo track such as "IPU 0"
        self.kind = info.kind

    @property
    def tid(self) -> int:
        """The OS thread id; for a pseudo track such as "IPU 0", -1 - its index."""
        return self.id if self.id is not None else -1 - self._index

    @cached_property
    def allEvents(self) -> EventList:
        """Every event of the thread, nested ones included, in start order (an addition)."""
        return EventList(self._trace, self._trace.thread_slice(self._index), self._path)

    @cached_property
    def events(self) -> LazyList[TraceEvent]:
        """The outermost events (depth 0), as libpva's ``thread.events`` (made when indexed)."""
        part = self._trace.thread_slice(self._index)
        roots = part.start + np.flatnonzero(self._trace.depth[part] == 0)
        trace, path = self._trace, self._path
        return LazyList(len(roots), lambda i: TraceEvent(trace, int(roots[i]), path))

    @property
    def rootEvents(self) -> LazyList[TraceEvent]:
        """The same as ``events``."""
        return self.events


class TraceProcess:
    def __init__(self, trace: Trace, index: int, path: Path | None = None) -> None:
        info = trace.processes[index]
        self.pid, self.name, self.hostname = info.pid, info.name, info.hostname
        self._trace = trace
        self._index = index
        self._path = path

    @cached_property
    def threads(self) -> list[TraceThread]:
        return [
            TraceThread(self._trace, i, self._path)
            for i, t in enumerate(self._trace.threads)
            if t.process == self._index
        ]


class TraceSeries:
    """One metric series: ``times`` in µs from the trace origin, ``values``."""

    def __init__(
        self, graph: str, name: str, unit: str, t_ns: np.ndarray, values: np.ndarray
    ) -> None:
        self.graph, self.name, self.unit = graph, name, unit
        self.times = t_ns / 1000
        self.values = values

    def __len__(self) -> int:
        return len(self.values)


class PvaTrace:
    """A trace opened for scripting; ``columns`` is the underlying Trace model."""

    def __init__(self, path: Path, trace: Trace) -> None:
        self.path = path
        self.columns = trace

    @property
    def warnings(self) -> list[str]:
        """What makes this trace partial ([] for a whole one), as the CLI and window say it;
        ``openTrace`` also issues each as a ``PartialTraceWarning``."""
        return self.columns.partial_warnings()

    @cached_property
    def processes(self) -> list[TraceProcess]:
        processes = range(len(self.columns.processes))
        return [TraceProcess(self.columns, i, self.path) for i in processes]

    @cached_property
    def series(self) -> list[TraceSeries]:
        units = self.columns.series_units
        return [
            TraceSeries(graph, name, units.get(graph, ""), t, v)
            for graph, by_name in self.columns.series.items()
            for name, (t, v) in by_name.items()
        ]

    @property
    def graphs(self) -> dict[str, dict[str, TraceSeries]]:
        out: dict[str, dict[str, TraceSeries]] = {}
        for s in self.series:
            out.setdefault(s.graph, {})[s.name] = s
        return out


class PartialTraceWarning(UserWarning):
    """The trace opened is partial: cut short, still open, or its writer failed or was
    killed (the same sentences ``popvision-cli trace`` prints)."""


def openTrace(path: str | Path) -> PvaTrace:
    """Open a .pvti file, a folder of them, or Chrome trace JSON (plain or gzip, told by
    content) for scripting; a partial trace is opened with a ``PartialTraceWarning`` per
    problem (``PvaTrace.warnings``)."""
    opened = PvaTrace(Path(path), open_trace(path))
    for text in opened.warnings:
        warnings.warn(text, PartialTraceWarning, stacklevel=2)
    return opened
