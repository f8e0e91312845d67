"""Parse Chrome Trace Event JSON into a Trace, as chrome://tracing and Perfetto read it.

Accepts the ``{"traceEvents": [...]}`` object form and the bare array form (as written by
the PyTorch profiler, TensorFlow, viztracer, Perfetto, chrome://tracing), plain or gzip.
Spans (X, B/E), instants (i/I/R, scoped to their thread, process or the whole trace),
counters (C), async spans (b/e/n, S/T/p/F) on async tracks per id, flows (s/t/f and
bind_id) as arrows between spans, and metadata (names, sort order). An event that cannot
be read is skipped and counted; kinds with no place (objects, samples) are counted too, and
both are said in ``Trace.warnings`` -- nothing is dropped silently.
"""

from __future__ import annotations

import gc
from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.heap import release_free_memory
from profiler_core.trace import chrome_fields as fields
from profiler_core.trace.chrome_builder import (
    GAPS_KEY,
    KIND_ARG,
    OPEN_ARG,
    ORIGIN_KEY,
    UNITS_KEY,
    Builder,
)
from profiler_core.trace.chrome_fast import add_chunk
from profiler_core.trace.json_events import CHUNK_BYTES, MAX_TRACE_BYTES, EventStream, read_events
from profiler_core.trace.json_guard import DEFAULT_MAX_DEPTH
from profiler_core.trace.model import Trace

__all__ = ["GAPS_KEY", "KIND_ARG", "OPEN_ARG", "ORIGIN_KEY", "UNITS_KEY", "import_chrome_file"]

#: chunks read between hand-backs of the parsed events' memory (every ~16 MB of JSON)
_TRIM_CHUNKS = max(1, (16 << 20) // CHUNK_BYTES)


def import_chrome_file(
    path: str | Path,
    *,
    max_bytes: int = MAX_TRACE_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    fast: bool = True,
    native: bool = True,
) -> Trace:
    """The Trace in Chrome Trace Event JSON file ``path`` (plain or gzip): every event that
    can be read, with ``Trace.warnings`` counting what was skipped or has no place.
    ``fast=False`` reads every event one by one (the fast path's oracle in the tests);
    ``native=False`` reads the chunks without the C kernel, with the typed path alone (the
    kernel's other oracle)."""
    path = Path(path)
    stream = EventStream(path)
    builder = Builder(path, stream.skipped)
    collecting = gc.isenabled()
    # Parsing makes millions of dicts that live a chunk each and hold no cycles: the
    # cyclic collector would walk them again and again (a quarter of the import's time).
    gc.disable()
    try:
        chunks = read_events(path, stream, max_bytes=max_bytes, max_depth=max_depth,
                             typed=fast, native=fast and native)  # fmt: skip
        for n, chunk in enumerate(chunks):
            if fast:
                add_chunk(builder, chunk)
            else:
                for ev in chunk:
                    builder.add(ev)
            del chunk
            if n % _TRIM_CHUNKS == _TRIM_CHUNKS - 1:  # the parsed events freed
                release_free_memory()
    finally:
        if collecting:
            gc.enable()
    release_free_memory()
    origin, units, gaps = fields.other_data(stream.doc, ORIGIN_KEY, UNITS_KEY, GAPS_KEY)
    if gaps:
        stream.notes.append(f"{gaps:,} series value(s) were not finite when exported (gaps)")
    trace = builder.trace(origin, units, stream.notes)
    if not len(trace) and not trace.series and stream.skipped:
        reasons = ", ".join(f"{n:,} {why}" for why, n in stream.skipped.most_common())
        raise ReportError(path, f"no trace event could be read ({reasons})")
    return trace
