"""open_trace: a Trace from a .pvti file, a folder of .pvti files or Chrome JSON, by content."""

from __future__ import annotations

from pathlib import Path

from profiler_core.errors import ReportError
from profiler_core.formats.files import regular_file_size
from profiler_core.formats.pvti import is_sqlite, read_pvti
from profiler_core.trace.build import trace_from_pvti
from profiler_core.trace.chrome_import import import_chrome_file
from profiler_core.trace.json_events import MAX_TRACE_BYTES
from profiler_core.trace.model import Trace


def open_trace(path: str | Path, *, max_json_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """The Trace at ``path``.

    A folder merges every ``*.pvti`` in it (one per process) on the wall clock; a file is
    read as .pvti when it is SQLite and as Chrome Trace Event JSON when it starts with
    ``{`` or ``[``, whatever its name. A truncated .pvti gives the committed events still
    present, with ``Trace.warnings`` saying it is incomplete.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.pvti"))
        if not files:
            raise ReportError(path, "folder holds no .pvti files")
        return trace_from_pvti([read_pvti(f) for f in files], in_place=True)
    try:
        regular_file_size(path)  # a FIFO named *.pvti would block open() forever
        with open(path, "rb") as f:
            head = f.read(4096)
    except FileNotFoundError:
        raise ReportError(path, "no such file") from None
    except OSError as exc:
        raise ReportError(path, f"cannot be read: {exc.strerror or exc}") from None
    if is_sqlite(head):
        return trace_from_pvti([read_pvti(path)], in_place=True)
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] in (b"{", b"["):
        return import_chrome_file(path, max_bytes=max_json_bytes)
    if not head:
        raise ReportError(path, "empty file: not a trace")
    raise ReportError(path, "neither a .pvti trace (SQLite) nor Chrome trace JSON")
