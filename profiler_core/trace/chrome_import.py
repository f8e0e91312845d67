"""Parse Chrome Trace Event JSON (X, B/E, i/I, C and M events) into a Trace.

Accepts the ``{"traceEvents": [...]}`` object form and the bare array form (as written
by the PyTorch profiler, Perfetto, chrome://tracing). Every malformed event is a
ReportError naming the file, the event's index and what is wrong.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.build import build_trace
from profiler_core.trace.json_guard import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, load_json_file
from profiler_core.trace.model import Process, Thread, Trace

#: Keys this project adds so that its own exports come back unchanged.
OPEN_ARG = "pvti_open"
KIND_ARG = "pvti_kind"
ORIGIN_KEY = "pvti_origin_wall_ns"
UNITS_KEY = "pvti_series_units"


class _Builder:
    """Collects events one at a time, checking each, then builds the Trace."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: list[tuple[int, int, int, int, int, int, str | None]] = []
        self.threads: dict[tuple[Any, Any], int] = {}
        self.thread_names: dict[int, str] = {}
        self.thread_kinds: dict[int, str] = {}
        self.processes: dict[Any, int] = {}
        self.process_names: dict[int, str] = {}
        self.labels: dict[str, int] = {}
        self.channels: dict[str, int] = {}
        self.open_b: dict[int, list[tuple[int, str, str, dict | None]]] = {}
        self.series: dict[str, dict[str, list[tuple[int, float]]]] = {}

    def fail(self, index: int, problem: str) -> ReportError:
        return ReportError(self.path, f"trace event {index}: {problem}")

    # -- field checks ------------------------------------------------------------------

    def number(self, ev: dict, key: str, index: int) -> float:
        value = ev.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            what = "missing" if key not in ev else f"{type(value).__name__}, not a number"
            raise self.fail(index, f"'{key}' is {what}")
        # abs() first: math.isfinite of an int past float's range raises OverflowError.
        if abs(value) > 1e15 or not math.isfinite(value):
            shown = f"{value:.3g}" if abs(value) < 1e300 else "a number past float's range"
            raise self.fail(index, f"'{key}' = {shown} is out of range")
        return float(value)

    def text(self, ev: dict, key: str, index: int, default: str | None = None) -> str:
        value = ev.get(key, default)
        if not isinstance(value, str):
            what = "missing" if key not in ev else f"{type(value).__name__}, not a string"
            raise self.fail(index, f"'{key}' is {what}")
        return value

    def ident(self, ev: dict, key: str, index: int) -> int | str:
        value = ev.get(key)
        if isinstance(value, bool) or not isinstance(value, int | str):
            what = "missing" if key not in ev else f"{type(value).__name__}, not an id"
            raise self.fail(index, f"'{key}' is {what}")
        return value

    def args(self, ev: dict, index: int) -> dict | None:
        value = ev.get("args")
        if value is not None and not isinstance(value, dict):
            raise self.fail(index, f"'args' is {type(value).__name__}, not an object")
        return value

    def ns(self, ev: dict, key: str, index: int) -> int:
        return round(self.number(ev, key, index) * 1000)

    # -- tables --------------------------------------------------------------------------

    def process(self, pid: int | str) -> int:
        return self.processes.setdefault(pid, len(self.processes))

    def thread(self, ev: dict, index: int) -> int:
        pid, tid = self.ident(ev, "pid", index), self.ident(ev, "tid", index)
        self.process(pid)
        return self.threads.setdefault((pid, tid), len(self.threads))

    def intern(self, table: dict[str, int], name: str) -> int:
        return table.setdefault(name, len(table))

    # -- events --------------------------------------------------------------------------

    def add(self, ev: Any, index: int) -> None:
        if not isinstance(ev, dict):
            raise self.fail(index, f"is {type(ev).__name__}, not an object")
        ph = self.text(ev, "ph", index)
        if ph == "X":
            start, dur = self.ns(ev, "ts", index), self.ns(ev, "dur", index)
            if dur < 0:
                raise self.fail(index, f"negative duration {dur} ns")
            args = self.args(ev, index)
            kind = EventKind.OPEN if args and args.pop(OPEN_ARG, False) else EventKind.SPAN
            self.span(ev, index, start, start + dur, kind, args)
        elif ph == "B":
            thread, start = self.thread(ev, index), self.ns(ev, "ts", index)
            name, cat = self.text(ev, "name", index), self.text(ev, "cat", index, "")
            self.open_b.setdefault(thread, []).append((start, name, cat, self.args(ev, index)))
        elif ph == "E":
            self.end(ev, index)
        elif ph in ("i", "I"):
            t = self.ns(ev, "ts", index)
            self.span(ev, index, t, t, EventKind.INSTANT, self.args(ev, index))
        elif ph == "C":
            self.counter(ev, index)
        elif ph == "M":
            self.metadata(ev, index)
        # Other phases (flows, async, samples, objects) have no place in this model.

    def span(self, ev: dict, index: int, start: int, end: int, kind: int, args: Any) -> None:
        thread = self.thread(ev, index)
        label = self.intern(self.labels, self.text(ev, "name", index))
        channel = self.intern(self.channels, self.text(ev, "cat", index, ""))
        text = json.dumps(args, separators=(",", ":")) if args else None
        self.rows.append((start, end, thread, channel, label, kind, text))

    def end(self, ev: dict, index: int) -> None:
        thread, end = self.thread(ev, index), self.ns(ev, "ts", index)
        stack = self.open_b.get(thread)
        if not stack:
            raise self.fail(index, "'E' event with no matching 'B' on its thread")
        start, name, cat, args = stack.pop()
        if end < start:
            raise self.fail(index, f"'E' at {end} ns is before its 'B' at {start} ns")
        more = self.args(ev, index)
        merged = {**(args or {}), **(more or {})}
        row = {"name": name, "cat": cat, "pid": ev["pid"], "tid": ev["tid"]}
        self.span(row, index, start, end, EventKind.SPAN, merged)

    def counter(self, ev: dict, index: int) -> None:
        t = self.ns(ev, "ts", index)
        graph = self.text(ev, "name", index)
        if "id" in ev:
            graph = f"{graph} {ev['id']}"
        args = self.args(ev, index) or {}
        for series, value in args.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise self.fail(index, f"counter value '{series}' is not a number")
            if abs(value) > 1.7e308:  # an int past float's range
                raise self.fail(index, f"counter value '{series}' is out of range")
            self.series.setdefault(graph, {}).setdefault(series, []).append((t, float(value)))

    def metadata(self, ev: dict, index: int) -> None:
        name = self.text(ev, "name", index)
        args = self.args(ev, index) or {}
        if name == "process_name":
            pid = self.ident(ev, "pid", index)
            self.process_names[self.process(pid)] = self.text(args, "name", index)
        elif name == "thread_name":
            thread = self.thread(ev, index)
            self.thread_names[thread] = self.text(args, "name", index)
            if args.get(KIND_ARG) == "track":
                self.thread_kinds[thread] = "track"

    # -- result --------------------------------------------------------------------------

    def trace(self, origin: int, units: dict[str, str]) -> Trace:
        for thread, stack in self.open_b.items():
            if stack:
                _, name, _, _ = stack[-1]
                pid, tid = next(k for k, v in self.threads.items() if v == thread)
                raise ReportError(
                    self.path, f"'B' event {name!r} on pid {pid} tid {tid} has no matching 'E'"
                )
        n = len(self.rows)
        cols = {
            key: np.fromiter((r[i] for r in self.rows), dtype, count=n)
            for i, (key, dtype) in enumerate(
                (
                    ("start_ns", np.int64),
                    ("end_ns", np.int64),
                    ("thread", np.int32),
                    ("channel", np.int32),
                    ("label", np.int32),
                    ("kind", np.uint8),
                )
            )
        }
        cols["depth"] = nesting_depths(cols["thread"], cols["start_ns"], cols["end_ns"])
        args = {i: r[6] for i, r in enumerate(self.rows) if r[6] is not None}
        pids = list(self.processes)
        processes = [
            Process(p if isinstance(p, int) else -1, "", self.process_names.get(i, str(p)), origin)
            for i, p in enumerate(pids)
        ]
        threads = []
        for (pid, tid), i in self.threads.items():
            name = self.thread_names.get(i, f"Thread {tid}")
            kind = self.thread_kinds.get(i, "thread")
            os_tid = tid if isinstance(tid, int) and kind == "thread" else None
            threads.append(Thread(name, self.processes[pid], os_tid, kind))
        series = {
            graph: {name: _sorted_samples(samples) for name, samples in by_name.items()}
            for graph, by_name in self.series.items()
        }
        return build_trace(
            cols,
            origin_wall_ns=origin,
            labels=list(self.labels),
            channels=list(self.channels),
            threads=threads,
            processes=processes,
            series=series,
            series_units={g: units.get(g, "") for g in series},
            args=args,
        )


def _sorted_samples(samples: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    t = np.array([s[0] for s in samples], np.int64)
    v = np.array([s[1] for s in samples], np.float64)
    order = np.argsort(t, kind="stable")
    return t[order], v[order]


def nesting_depths(thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Depth of each event: how many earlier-starting events on its thread still enclose it."""
    order = np.lexsort((-(end - start), start, thread))
    depth = np.zeros(len(order), np.int32)
    threads, starts, ends = thread.tolist(), start.tolist(), end.tolist()
    stack: list[int] = []
    current = None
    for i in order.tolist():
        if threads[i] != current:
            current, stack = threads[i], []
        s, e = starts[i], ends[i]
        while stack and stack[-1] <= s and not (stack[-1] == s and e == s):
            stack.pop()
        depth[i] = len(stack)
        if e > s:
            stack.append(e)
    return depth


def import_chrome_file(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Trace:
    """The Trace in Chrome Trace Event JSON file ``path``."""
    path = Path(path)
    doc = load_json_file(path, max_bytes=max_bytes, max_depth=max_depth)
    other: dict = {}
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            raise ReportError(path, "JSON object has no 'traceEvents' array: not a Chrome trace")
        other = doc.get("otherData") if isinstance(doc.get("otherData"), dict) else {}
    elif isinstance(doc, list):
        events = doc
    else:
        raise ReportError(path, f"top level is a {type(doc).__name__}: not a Chrome trace")
    builder = _Builder(path)
    for index, ev in enumerate(events):
        builder.add(ev, index)
    origin = other.get(ORIGIN_KEY, 0)
    origin = origin if isinstance(origin, int) and not isinstance(origin, bool) else 0
    units = other.get(UNITS_KEY)
    units = (
        {k: v for k, v in units.items() if isinstance(v, str)} if isinstance(units, dict) else {}
    )
    return builder.trace(origin, units)
