"""libpvti's Python API for instrumenting host code, writing PopVision System Analyser traces.

Use it as ``import ipu_engine.pvti as pvti`` where a script would ``import libpvti as pvti``.
Tracing is on when ``PVTI_OPTIONS='{"enable":"true","directory":"dir"}'`` is set at first
use, or after ``enable(directory)``; off, a tracepoint costs a flag check. Files are
``.pvti`` (see profiler_core.formats.pvti), one per process.

The engine's internal hooks are ``current_writer()``, ``current_trace_path()`` and
``ipu_track_span()``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ipu_engine.pvti.errors import PvtiOptionsError, PvtiWriteWarning
from ipu_engine.pvti.metrics import Graph, HeatmapDouble, HeatmapInt64, Series
from ipu_engine.pvti.session import (
    TraceChannel,
    channel_arg,
    create_channel,
    current_writer,
    disable,
    enable,
    session,
)
from ipu_engine.pvti.tracepoint import Tracepoint, instrument, instrument_fn

#: The channel the engine's IPU tracks ("IPU 0", "IPU 1", ...) are recorded on.
IPU_CHANNEL = "IPU"


def createTraceChannel(name: str) -> TraceChannel:
    """The channel called ``name`` (created on first request)."""
    return create_channel(name)


def enableTraceChannel(channel: TraceChannel) -> None:
    channel_arg(channel, "enableTraceChannel").enabled = True


def disableTraceChannel(channel: TraceChannel) -> None:
    channel_arg(channel, "disableTraceChannel").enabled = False


def checkTraceChannel(channel: TraceChannel) -> bool:
    return channel_arg(channel, "checkTraceChannel").enabled


def listTraceChannel() -> list[list[str | bool]]:
    """[[name, enabled], ...] for every channel, as libpvti lists them."""
    return [[c.name, c.enabled] for c in session.channels.values()]


def getCurrentTraceFilename() -> str:
    """The path of the file being written, or "" when tracing is off."""
    writer = current_writer()
    return "" if writer is None else str(writer.path)


def current_trace_path() -> Path | None:
    """Engine hook: the absolute path of the file being written, or None when tracing is
    off (a report records it, so a viewer finds the trace wherever it was written)."""
    return session.trace_path if current_writer() is not None else None


def closeTrace() -> None:
    """Commit and close the trace file; later tracepoints record nothing."""
    disable()


def ipu_track_span(ipu: int, label: str, start_ns: int, end_ns: int, depth: int = 0) -> None:
    """Engine hook: one step of IPU ``ipu`` on track "IPU <ipu>", in host monotonic ns."""
    writer = current_writer()
    if writer is not None:
        writer.add_span(f"IPU {ipu}", IPU_CHANNEL, label, start_ns, end_ns, depth)


def ipu_track_spans(
    ipu: int,
    start_ns: np.ndarray,
    end_ns: np.ndarray,
    label_names: list[str],
    label_index: np.ndarray,
    depth: np.ndarray | int = 0,
) -> None:
    """Engine hook: many steps of IPU ``ipu`` at once (no per-step Python work)."""
    writer = current_writer()
    if writer is not None:
        writer.add_spans(
            f"IPU {ipu}", IPU_CHANNEL, start_ns, end_ns, label_names, label_index, depth
        )


def _builtin(name: str) -> TraceChannel:
    # libpvti's predefined channels exist from import on, without deciding tracing yet.
    channel = session.channels.get(name)
    if channel is None:
        channel = session.channels[name] = TraceChannel(name)
    return channel


# libpvti's names for its predefined channels.
traceDrivers = _builtin("Drivers")  # noqa: N816
tracePoplar = _builtin("Poplar")  # noqa: N816
traceFramework = _builtin("Framework")  # noqa: N816
trace_drivers, trace_poplar, trace_framework = traceDrivers, tracePoplar, traceFramework

# snake_case spellings of the libpvti names.
create_trace_channel = createTraceChannel
enable_trace_channel = enableTraceChannel
disable_trace_channel = disableTraceChannel
check_trace_channel = checkTraceChannel
list_trace_channel = listTraceChannel
get_current_trace_filename = getCurrentTraceFilename
close_trace = closeTrace

__all__ = [
    "IPU_CHANNEL",
    "Graph",
    "HeatmapDouble",
    "HeatmapInt64",
    "PvtiOptionsError",
    "PvtiWriteWarning",
    "Series",
    "TraceChannel",
    "Tracepoint",
    "checkTraceChannel",
    "check_trace_channel",
    "closeTrace",
    "close_trace",
    "createTraceChannel",
    "create_trace_channel",
    "current_trace_path",
    "current_writer",
    "disable",
    "disableTraceChannel",
    "disable_trace_channel",
    "enable",
    "enableTraceChannel",
    "enable_trace_channel",
    "getCurrentTraceFilename",
    "get_current_trace_filename",
    "instrument",
    "instrument_fn",
    "ipu_track_span",
    "ipu_track_spans",
    "listTraceChannel",
    "list_trace_channel",
    "traceDrivers",
    "traceFramework",
    "tracePoplar",
    "trace_drivers",
    "trace_framework",
    "trace_poplar",
]
