"""The process-wide pvti session: whether tracing is on, its writer, channels, thread stacks.

Tracing is decided at first use (the first channel, graph, heatmap or ``current_writer()``
call) from PVTI_OPTIONS, or explicitly by ``enable()``/``disable()``. The hot path of a
Tracepoint (C, ``_tracepoint.c``) appends a record to the ring ``_tracepoint.set_ring``
was given (the writer's ``RecordRing``, also ``session.ring``), so a disabled trace costs a
pointer check.
"""

from __future__ import annotations

import multiprocessing.util
import os
import threading
import warnings
import weakref
from pathlib import Path

from ipu_engine.common.arguments import flag_arg, kind_error, name_arg, number_arg
from ipu_engine.common.errors import ArgumentError
from ipu_engine.pvti.errors import PvtiOptionsError, PvtiWriteWarning
from ipu_engine.pvti.options import ENV_VAR, MAX_DURATION_S, PvtiOptions, parse_options
from profiler_core.errors import ReportError
from profiler_core.formats.pvti import PvtiWriter  # first: it says if _ring was never built
from profiler_core.native import native_module

_tracepoint = native_module("ipu_engine.pvti._tracepoint", "the tracepoints are a C module")

ChannelBase, ThreadStack = _tracepoint.ChannelBase, _tracepoint.ThreadStack


class TraceChannel(ChannelBase):
    """A named category of tracepoints that can be switched on and off (libpvti's). It
    keeps its tracepoints by label (``tracepoints``): ``Tracepoint(channel, label)`` makes
    each once. Its fields are C (``ChannelBase``), read by the tracepoints' hot path."""

    __slots__ = ()

    def __init__(self, name: str, enabled: bool = True) -> None:
        self.name = name_arg(name, "TraceChannel: the name", ArgumentError)
        self.enabled = flag_arg(enabled, "TraceChannel: enabled", ArgumentError)

    def __repr__(self) -> str:
        return f"TraceChannel({self.name!r}, enabled={self.enabled})"


def channel_arg(value: object, what: str) -> TraceChannel:
    """``value`` when it is a TraceChannel (from ``createTraceChannel``)."""
    if not isinstance(value, TraceChannel):
        raise ArgumentError(kind_error(f"{what}: the channel", "a TraceChannel", value))
    return value


class _Session:
    def __init__(self) -> None:
        self.recording = False
        #: the writer's RecordRing while recording, else None; the C hot path has its own
        #: pointer to it (``_tracepoint.set_ring``), set and cleared with this
        self.ring: object = None
        self.resolved = False
        self.writer: PvtiWriter | None = None
        # The writer's file as an absolute path, fixed when it is created (a later chdir
        # must not move it): what an engine's report records.
        self.trace_path: Path | None = None
        self.options: PvtiOptions | None = None
        self.channels: dict[str, TraceChannel] = {}
        # OS thread id -> that thread's stack, dropped when the thread ends.
        self.stacks: weakref.WeakValueDictionary[int, ThreadStack] = weakref.WeakValueDictionary()
        self.thread_names: dict[int, str] = {}
        self.lock = threading.RLock()
        self.timer: threading.Timer | None = None
        self.finalizer: multiprocessing.util.Finalize | None = None


session = _Session()


def _register_stack(stack: ThreadStack) -> None:
    # Called by the C tracepoints with each thread's new stack (its open spans, the C
    # arrays of ThreadStack): named, and listed for open_spans while the thread lives.
    session.thread_names[stack.tid] = threading.current_thread().name
    session.stacks[stack.tid] = stack


_tracepoint.set_stack_hook(_register_stack)


def thread_stack() -> ThreadStack:
    """The calling thread's stack for the current writer (created on first use)."""
    return _tracepoint.thread_stack()


def open_spans() -> list[tuple[int, str, str, int, int]]:
    """Every thread's open tracepoints, for the writer's open_spans table."""
    out = []
    ring = session.ring
    for stack in list(session.stacks.values()):
        if stack.ring is not ring:
            continue
        for tracepoint, start, depth in stack.entries():
            out.append((stack.tid, tracepoint.channel.name, tracepoint.label, start, depth))
    return out


def resolve() -> None:
    """Read PVTI_OPTIONS once, at first use, unless enable()/disable() decided already."""
    if session.resolved:
        return
    with session.lock:
        if session.resolved:
            return
        options = parse_options(os.environ.get(ENV_VAR))
        session.resolved = True
        if options is not None and options.enable:
            try:
                _start(options)
            except ReportError as exc:
                # A traced program must not die because its trace cannot be written.
                warnings.warn(f"{ENV_VAR}: tracing is off: {exc}", PvtiWriteWarning, stacklevel=3)


def _start(options: PvtiOptions, process_name: str | None = None) -> None:
    writer = PvtiWriter(options.directory, process_name=process_name)
    writer.thread_names = session.thread_names
    writer.open_spans_source = open_spans
    session.options = options
    session.writer = writer
    session.trace_path = writer.path.absolute()
    _close_at_multiprocessing_exit(session)
    for channel in session.channels.values():
        channel.enabled = options.channels is None or channel.name in options.channels
    session.ring = writer.ring
    _tracepoint.set_ring(writer.ring)
    session.recording = True
    if options.duration_s > 0:
        session.timer = threading.Timer(options.duration_s, _stop_recording)
        session.timer.daemon = True
        session.timer.start()


def _stop_recording() -> None:
    session.recording = False
    session.ring = None
    _tracepoint.set_ring(None)


def enable(
    directory: str | Path = ".",
    *,
    channels: list[str] | None = None,
    duration_s: float = 0.0,
    process_name: str | None = None,
) -> Path:
    """Start tracing to a new file in ``directory`` (closing any current one); its path.

    Raises ReportError naming ``directory`` when no trace file can be created there (an
    explicit call is told; a PVTI_OPTIONS directory only warns, see ``resolve``)."""
    if not isinstance(directory, str | Path):
        raise PvtiOptionsError(kind_error("enable: the directory", "a path", directory))
    if channels is not None:
        if isinstance(channels, str) or not isinstance(channels, list | tuple | set):
            raise PvtiOptionsError(kind_error("enable: channels", "a list of names", channels))
        channels = [name_arg(c, "enable: a channel name", PvtiOptionsError) for c in channels]
    duration_s = number_arg(duration_s, "enable: duration_s", PvtiOptionsError)
    if not 0 <= duration_s <= MAX_DURATION_S:
        raise PvtiOptionsError(
            f"enable: duration_s must be 0 (no limit) to {MAX_DURATION_S:g} seconds, got "
            f"{duration_s}"
        )
    if process_name is not None:
        name_arg(process_name, "enable: process_name", PvtiOptionsError)
    with session.lock:
        disable()
        _start(
            PvtiOptions(True, Path(directory), tuple(channels) if channels else None, duration_s),
            process_name,
        )
        assert session.writer is not None
        return session.writer.path


def disable() -> None:
    """Stop tracing and close the current file (libpvti's closeTrace)."""
    with session.lock:
        session.resolved = True
        _stop_recording()
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None
        if session.finalizer is not None:
            session.finalizer.cancel()
            session.finalizer = None
        writer, session.writer = session.writer, None
        session.trace_path = None
        if writer is not None:
            writer.close()


def current_writer() -> PvtiWriter | None:
    """The writer of this process's trace, or None when tracing is off."""
    resolve()
    return session.writer if session.recording else None


def create_channel(name: str) -> TraceChannel:
    name_arg(name, "createTraceChannel: the name", ArgumentError)
    resolve()
    with session.lock:
        channel = session.channels.get(name)
        if channel is None:
            options = session.options
            enabled = options is None or options.channels is None or name in options.channels
            channel = session.channels[name] = TraceChannel(name, enabled)
        return channel


def _after_fork_in_child() -> None:
    # The parent's SQLite connection must never be used or closed here; a child that
    # traces gets its own file (its own pid in the name).
    session.lock = threading.RLock()  # another thread may have held it at the fork
    writer, was_recording = session.writer, session.recording
    if writer is None:
        return
    _stop_recording()
    session.writer = session.timer = session.finalizer = session.trace_path = None
    writer.detach_after_fork()
    if was_recording and session.options is not None:
        _start(session.options)


def _close_at_multiprocessing_exit(state: _Session) -> None:
    # multiprocessing workers end in os._exit, skipping atexit, but run multiprocessing's
    # own finalizers: closing there commits a worker's last batch too. (A worker clears
    # the finalizers inherited at fork, hence the after-fork registration below.)
    if state.writer is not None:
        state.finalizer = multiprocessing.util.Finalize(
            state.writer, state.writer.close, exitpriority=100
        )


os.register_at_fork(after_in_child=_after_fork_in_child)
multiprocessing.util.register_after_fork(session, _close_at_multiprocessing_exit)
