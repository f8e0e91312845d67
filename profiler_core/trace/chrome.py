"""Chrome Trace Event JSON: export a Trace for Perfetto UI / chrome://tracing, and import one.

Export writes ``{"traceEvents": [...], "displayTimeUnit": "ns"}`` with X spans and i
instants in µs, C counters for metric series and M metadata naming processes and
threads. Heatmaps have no Chrome equivalent and are not exported. Import lives in
``chrome_import.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from profiler_core.formats.pvti import EventKind
from profiler_core.trace.chrome_import import (
    KIND_ARG,
    OPEN_ARG,
    ORIGIN_KEY,
    UNITS_KEY,
    import_chrome_file,
)
from profiler_core.trace.model import Trace

#: Chrome needs an integer tid per row; pseudo tracks get ids above any Linux tid.
TRACK_TID_BASE = 1 << 30

__all__ = ["export_chrome", "import_chrome_file", "trace_to_chrome"]


def _ids(trace: Trace) -> list[tuple[int, int]]:
    """(pid, tid) of every thread of ``trace``."""
    out = []
    for i, thread in enumerate(trace.threads):
        pid = trace.processes[thread.process].pid
        tid = thread.os_tid if thread.os_tid is not None else TRACK_TID_BASE + i
        out.append((pid, tid))
    return out


def _metadata(trace: Trace, ids: list[tuple[int, int]]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for process in trace.processes:
        events.append(
            {"ph": "M", "name": "process_name", "pid": process.pid, "args": {"name": process.name}}
        )
    for thread, (pid, tid) in zip(trace.threads, ids, strict=True):
        args = {"name": thread.name}
        if thread.kind == "track":
            args[KIND_ARG] = "track"
        events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": args})
    return events


def trace_to_chrome(trace: Trace) -> dict[str, Any]:
    """The Chrome Trace Event document of ``trace`` (times relative to its origin)."""
    ids = _ids(trace)
    events = _metadata(trace, ids)
    starts = (trace.start_ns / 1000).tolist()
    durations = ((trace.end_ns - trace.start_ns) / 1000).tolist()
    for i, (thread, channel, label, kind) in enumerate(
        zip(
            trace.thread.tolist(),
            trace.channel.tolist(),
            trace.label.tolist(),
            trace.kind.tolist(),
            strict=True,
        )
    ):
        pid, tid = ids[thread]
        ev: dict[str, Any] = {
            "name": trace.labels[label],
            "cat": trace.channels[channel],
            "ts": starts[i],
            "pid": pid,
            "tid": tid,
        }
        if kind == EventKind.INSTANT:
            ev["ph"], ev["s"] = "i", "t"
        else:
            ev["ph"], ev["dur"] = "X", durations[i]
        args = _args(trace.args.get(i))
        if kind == EventKind.OPEN:
            args[OPEN_ARG] = True
        if args:
            ev["args"] = args
        events.append(ev)
    counter_pid = trace.processes[0].pid if trace.processes else 0
    for graph, by_name in trace.series.items():
        for name, (t, values) in by_name.items():
            for ts, value in zip((t / 1000).tolist(), values.tolist(), strict=True):
                events.append(
                    {"ph": "C", "name": graph, "ts": ts, "pid": counter_pid, "args": {name: value}}
                )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {ORIGIN_KEY: trace.origin_wall_ns, UNITS_KEY: dict(trace.series_units)},
    }


def _args(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    value = json.loads(text)
    return value if isinstance(value, dict) else {"value": value}


def export_chrome(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as Chrome Trace Event JSON to ``path``; returns the path."""
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(trace_to_chrome(trace), f, separators=(",", ":"))
    return path
