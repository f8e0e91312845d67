"""open_trace: a Trace from a .pvti file, a folder of .pvti files or Chrome JSON (plain or
gzip), told apart by content (``formats.recognise``), whatever the file is called."""

from __future__ import annotations

from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.formats.pvti import read_pvti
from profiler_core.formats.recognise import FileKind, Recognised, recognise
from profiler_core.trace.build import trace_from_pvti
from profiler_core.trace.chrome_import import import_chrome_file
from profiler_core.trace.json_events import MAX_TRACE_BYTES
from profiler_core.trace.model import Trace


def open_trace(path: str | Path, *, max_json_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """The Trace at ``path``.

    A folder merges every ``*.pvti`` in it (one per process) on the wall clock; a file is
    read as .pvti when it is SQLite and as Chrome Trace Event JSON when it starts with
    ``{`` or ``[``, as it is or inside a gzip stream. A truncated .pvti gives the committed
    events still present, with ``Trace.warnings`` saying it is incomplete.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.pvti"))
        if not files:
            found = recognise(path)
            hint = ": it is a report (open it as one)" if found.kind is FileKind.REPORT else ""
            raise ReportError(path, f"folder holds no .pvti files{hint}")
        return trace_from_pvti([read_pvti(f) for f in files], in_place=True)
    found = recognise(path)
    if found.kind is FileKind.PVTI:
        return trace_from_pvti([read_pvti(path)], in_place=True)
    if found.kind is FileKind.CHROME_JSON:
        return import_chrome_file(path, max_bytes=max_json_bytes)
    raise not_a_trace(found)


def not_a_trace(found: Recognised) -> ReportError:
    """The error saying why ``found`` (no .pvti or Chrome JSON file) is not read as a trace."""
    if found.unreadable:  # missing, a FIFO, no permission, empty
        return ReportError(found.path, found.why_not)
    if found.kind is FileKind.REPORT:
        return ReportError(found.path, "is a report's profile, not a trace: open it as a report")
    return ReportError(
        found.path,
        f"neither a .pvti trace (SQLite) nor Chrome trace JSON, plain or gzip ({found.why_not})",
    )
