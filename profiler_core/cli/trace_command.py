"""``popvision-cli trace``: a host trace (.pvti, a folder of them, Chrome JSON) at a glance:
its tracks with span, instant and open-span counts, and whether it is incomplete."""

from __future__ import annotations

import argparse

import numpy as np

from profiler_core.cli.output import Output
from profiler_core.cli.tables import Table
from profiler_core.formats.pvti import EventKind, read_pvti
from profiler_core.remote import is_remote
from profiler_core.trace import Trace, open_trace, trace_from_pvti


def trace_command(args: argparse.Namespace) -> Output:
    if is_remote(args.TRACE):  # fetched into the local cache, then read as a local one
        from profiler_core.remote import fetch_remote_trace  # the report readers with it

        files = fetch_remote_trace(args.TRACE)
        if len(files) > 1:
            return trace_output(trace_from_pvti([read_pvti(f) for f in files], in_place=True))
        return trace_output(open_trace(files[0]))
    trace = open_trace(args.TRACE)
    return trace_output(trace)


def trace_output(trace: Trace) -> Output:
    n = len(trace.threads)
    counts = {
        kind: np.bincount(trace.thread[trace.kind == kind], minlength=n)
        for kind in (EventKind.SPAN, EventKind.INSTANT, EventKind.OPEN)
    }
    is_async = np.array([t.kind == "async" for t in trace.threads], bool)
    spans = counts[EventKind.SPAN]
    # an arrow counts on each track it touches (once when both its spans are on one track)
    ends = trace.thread[trace.flows] if len(trace.flows) else np.zeros((0, 2), np.int32)
    flows = np.bincount(ends[:, 0], minlength=n) + np.bincount(
        ends[:, 1][ends[:, 1] != ends[:, 0]], minlength=n
    )
    table = Table(
        "tracks",
        {
            "track": [t.name for t in trace.threads],
            "process": [trace.processes[t.process].name for t in trace.threads],
            "kind": [t.kind for t in trace.threads],
            "spans": np.where(is_async, 0, spans),
            "async_spans": np.where(is_async, spans, 0),
            "instants": counts[EventKind.INSTANT],
            "open_spans": counts[EventKind.OPEN],
            "flows": flows.astype(np.int64),
        },
    )
    lo, hi = trace.time_range()
    warnings = trace.partial_warnings()
    header = [("events", f"{len(trace):,}"), ("duration", f"{(hi - lo) / 1e6:,.3f} ms")]
    if len(trace.flows):
        header.append(("flows", f"{len(trace.flows):,}"))
    header += [("warning", text) for text in warnings]
    document = {
        "events": len(trace),
        "duration_ns": hi - lo,
        "flows": len(trace.flows),
        "tracks": table,
        "warnings": warnings,
    }
    return Output([table], header=header, document=document, warnings=warnings)
