"""Chrome Trace Event JSON: export a Trace for Perfetto UI / chrome://tracing, and import one.

Export writes ``{"traceEvents": [...], "displayTimeUnit": "ns"}`` with X spans and i
instants in µs, C counters for metric series and M metadata naming processes and
threads. Heatmaps have no Chrome equivalent and are not exported. Import lives in
``chrome_import.py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from profiler_core.formats.pvti import EventKind
from profiler_core.trace.chrome_import import (
    GAPS_KEY,
    KIND_ARG,
    OPEN_ARG,
    ORIGIN_KEY,
    UNITS_KEY,
    import_chrome_file,
)
from profiler_core.trace.model import Trace

#: Chrome needs an integer tid per row; pseudo tracks get ids above any Linux tid.
TRACK_TID_BASE = 1 << 30
_INSTANT, _OPEN = int(EventKind.INSTANT), int(EventKind.OPEN)
META_CAT, COUNTER_CAT, FLOW_CAT = "__metadata", "counter", "flow"  # "cat" on every event

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
            {"ph": "M", "cat": META_CAT, "name": "process_name", "pid": process.pid,
             "args": {"name": process.name}}
        )  # fmt: skip
    for thread, (pid, tid) in zip(trace.threads, ids, strict=True):
        args = {"name": thread.name}
        if thread.kind == "track":
            args[KIND_ARG] = "track"
        events.append(
            {"ph": "M", "cat": META_CAT, "name": "thread_name", "pid": pid, "tid": tid,
             "args": args}
        )  # fmt: skip
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
    events += _flow_events(trace, ids)
    counter_pid = trace.processes[0].pid if trace.processes else 0
    for graph, by_name in trace.series.items():
        for name, (t, values) in by_name.items():
            t, values = _finite_samples(t, values)
            for ts, value in zip((t / 1000).tolist(), values.tolist(), strict=True):
                events.append(
                    {"ph": "C", "cat": COUNTER_CAT, "name": graph, "ts": ts, "pid": counter_pid,
                     "args": {name: value}}
                )  # fmt: skip
    return {"traceEvents": events, "displayTimeUnit": "ns", "otherData": _other_data(trace)}


def _other_data(trace: Trace) -> dict[str, Any]:
    other = {ORIGIN_KEY: trace.origin_wall_ns, UNITS_KEY: dict(trace.series_units)}
    gaps = non_finite_samples(trace)
    if gaps:
        other[GAPS_KEY] = gaps
    return other


def non_finite_samples(trace: Trace) -> int:
    """Series values that are NaN or infinite: JSON has no such numbers, so an export leaves
    them out (a gap in the counter) and says how many in its otherData."""
    return sum(
        int((~np.isfinite(values)).sum())
        for by_name in trace.series.values()
        for _, values in by_name.values()
    )


def _finite_samples(t: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    finite = np.isfinite(values)
    return (t, values) if finite.all() else (t[finite], values[finite])


def _flow_events(trace: Trace, ids: list[tuple[Any, int]]) -> list[dict[str, Any]]:
    """Each arrow as a flow start on its first span and an end bound to ("bp": "e") its
    second, at their starts: the spans Chrome and Perfetto bind them to."""
    events = []
    for k, (a, b) in enumerate(trace.flows.tolist()):
        for ph, event in (("s", a), ("f", b)):
            pid, tid = ids[int(trace.thread[event])]
            ev = {"ph": ph, "cat": FLOW_CAT, "name": "flow", "id": k,
                  "ts": float(trace.start_ns[event]) / 1000, "pid": pid, "tid": tid}  # fmt: skip
            if ph == "f":
                ev["bp"] = "e"
            events.append(ev)
    return events


def _args(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    value = _finite(json.loads(text))
    return value if isinstance(value, dict) else {"value": value}


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities (which JSON cannot hold) as null."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


#: Events formatted per chunk while exporting: bounds the text held at once (~15 MB).
CHUNK_EVENTS = 1 << 16


def export_chrome(trace: Trace, path: str | Path) -> Path:
    """Write ``trace`` as Chrome Trace Event JSON to ``path``; returns the path.

    The text is the same as ``json.dumps(trace_to_chrome(trace))`` (compact separators)
    but streamed: events are formatted a chunk at a time from the columns, with each
    label, channel and thread encoded once, so 10M events never exist as 10M dicts or one
    giant string.
    """
    path = Path(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"traceEvents":[')
        first = True
        for text in _event_chunks(trace):
            if text:
                f.write(text if first else "," + text)
                first = False
        f.write('],"displayTimeUnit":"ns","otherData":')
        f.write(_dumps(_other_data(trace)))
        f.write("}")
    return path


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def _event_chunks(trace: Trace) -> Iterator[str]:
    """The events of ``trace_to_chrome`` as JSON text, in its order, a chunk at a time."""
    ids = _ids(trace)
    yield ",".join(_dumps(ev) for ev in _metadata(trace, ids))
    # Everything before "ts" and between "ts" and the phase, per label/channel/thread.
    names = [f'{{"name":{_dumps(label)},"cat":' for label in trace.labels]
    cats = [f'{_dumps(channel)},"ts":' for channel in trace.channels]
    where = [f',"pid":{_dumps(pid)},"tid":{tid},"ph":' for pid, tid in ids]
    args_at = trace.args
    n = len(trace)
    for lo in range(0, n, CHUNK_EVENTS):
        hi = min(n, lo + CHUNK_EVENTS)
        start, end = trace.start_ns[lo:hi], trace.end_ns[lo:hi]
        parts = []
        for i, ts, dur, thread, channel, label, kind in zip(
            range(lo, hi),
            (start / 1000).tolist(),
            ((end - start) / 1000).tolist(),
            trace.thread[lo:hi].tolist(),
            trace.channel[lo:hi].tolist(),
            trace.label[lo:hi].tolist(),
            trace.kind[lo:hi].tolist(),
            strict=True,
        ):
            head = f"{names[label]}{cats[channel]}{ts}{where[thread]}"
            phase = '"i","s":"t"' if kind == _INSTANT else f'"X","dur":{dur}'
            if i in args_at or kind == _OPEN:
                args = _args(args_at.get(i))
                if kind == _OPEN:
                    args[OPEN_ARG] = True
                if args:
                    phase += f',"args":{_dumps(args)}'
            parts.append(f"{head}{phase}}}")
        yield ",".join(parts)
    yield ",".join(_dumps(ev) for ev in _flow_events(trace, ids))
    counter_pid = trace.processes[0].pid if trace.processes else 0
    for graph, by_name in trace.series.items():
        head = f'{{"ph":"C","cat":{_dumps(COUNTER_CAT)},"name":{_dumps(graph)},"ts":'
        for name, (t, values) in by_name.items():
            t, values = _finite_samples(t, values)
            tail = f',"pid":{_dumps(counter_pid)},"args":{{{_dumps(name)}:'
            for lo in range(0, len(t), CHUNK_EVENTS):
                yield ",".join(
                    f"{head}{ts}{tail}{_dumps(value)}}}}}"
                    for ts, value in zip(
                        (t[lo : lo + CHUNK_EVENTS] / 1000).tolist(),
                        values[lo : lo + CHUNK_EVENTS].tolist(),
                        strict=True,
                    )
                )
