"""Host traces on another machine, Qt-free: the .pvti files of a report opened over SSH
(fetched when the System Trace reads them, in its worker), and a trace named by an ssh://
address. Only the report's own folder is read: a trace the program wrote elsewhere on that
machine is named, with the address that opens it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath

from popvision_py.viewmodels.trace_open import OpenedTrace, read_trace
from profiler_core.errors import ReportError
from profiler_core.remote import RemoteReport, fetch_remote_trace, is_remote
from profiler_core.remote.report import TRACE_SUFFIXES

Progress = Callable[[float, str], None]
Stopped = Callable[[], bool]


def is_remote_trace(source: object) -> bool:
    """An ssh:// address of a .pvti or Chrome JSON file."""
    return is_remote(source) and PurePosixPath(str(source)).suffix.lower() in TRACE_SUFFIXES


def read_remote_trace(url: str, progress: Progress, stopped: Stopped) -> OpenedTrace:
    """Fetch (into the cache) and read the trace ``url`` names."""
    files = fetch_remote_trace(url, lambda f, t: progress(0.5 * f, t), stopped)
    return read_trace(files, lambda f, t: progress(0.5 + 0.5 * f, t), stopped)


def read_report_traces(report: RemoteReport, progress: Progress, stopped: Stopped) -> OpenedTrace:
    """Fetch and read the .pvti files in the folder of a report opened over SSH."""
    files = report.fetch_traces(lambda f, t: progress(0.5 * f, t), stopped)
    return read_trace(files, lambda f, t: progress(0.5 + 0.5 * f, t), stopped)


def elsewhere_text(report: RemoteReport) -> str:
    """What the System Trace says of traces the program recorded outside the report's
    remote folder ("" when there are none)."""
    try:
        recorded = report.header.traces
    except ReportError:
        return ""
    folder = report.remote.folder.rstrip("/") + "/"
    outside = [p for p in recorded if p.endswith(".pvti") and not p.startswith(folder)]
    if not outside:
        return ""
    base = report.remote.folder_location
    addresses = "\n".join(f"  {base.__class__(base.host, p, base.user, base.port).url}"
                          for p in outside)  # fmt: skip
    return (
        "This report's host trace was written outside its folder on the other machine; only "
        "the folder you opened is read over SSH. Open the trace on its own with File > Open "
        f"remote…:\n{addresses}"
    )
