"""libpvti's Tracepoint: spans (context manager, decorator, begin/end) and instant events.

Each thread keeps its own stack of open tracepoints, so nesting depth is per thread and
no lock is taken; a finished span is one tuple appended to the writer's buffer.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from time import monotonic_ns
from typing import Any, TypeVar

from ipu_engine.common.arguments import name_arg, sequence_arg
from ipu_engine.common.errors import ArgumentError
from ipu_engine.pvti.errors import InstrumentError
from ipu_engine.pvti.session import (
    TraceChannel,
    channel_arg,
    session,
    thread_local,
    thread_stack,
)
from profiler_core.formats.pvti import EventKind

F = TypeVar("F", bound=Callable[..., Any])
_SPAN = int(EventKind.SPAN)
_INSTANT = int(EventKind.INSTANT)


def _close_top(stack: list, end_ns: int) -> None:
    tracepoint, start, depth = stack[-1]
    # Record before popping: a concurrent commit then sees the span open or finished,
    # never neither.
    session.record(
        (start, end_ns, stack.tid, tracepoint.channel.name, tracepoint.label, _SPAN,
         depth, None)
    )  # fmt: skip
    stack.pop()
    if len(session.buffer) > session.limit:
        session.relieve()


def _close_inside(stack: list, tracepoint: Tracepoint, end_ns: int) -> None:
    """Close ``tracepoint`` where it sits below the top (spans of interleaved coroutines
    end out of order); it keeps the depth it had when it began."""
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] is tracepoint:
            _, start, depth = stack[i]
            session.record(
                (start, end_ns, stack.tid, tracepoint.channel.name, tracepoint.label, _SPAN,
                 depth, None)
            )  # fmt: skip
            del stack[i]
            if len(session.buffer) > session.limit:
                session.relieve()
            return


class Tracepoint:
    """A span on ``channel`` named ``label``: ``with Tracepoint(ch, "step"):`` or
    ``@Tracepoint(ch, "step")``; nests freely, per thread."""

    __slots__ = ("channel", "label")

    def __init__(self, channel: TraceChannel, label: str) -> None:
        self.channel = channel_arg(channel, "Tracepoint")
        self.label = name_arg(label, "Tracepoint: the label", ArgumentError)

    def __enter__(self) -> Tracepoint:
        if session.recording and self.channel.enabled:
            stack = thread_stack()
            stack.append((self, monotonic_ns(), len(stack)))
        return self

    def __exit__(self, *exc: object) -> None:
        if session.recording:
            try:
                stack = thread_local.stack
            except AttributeError:
                return
            if stack and stack.gen == session.gen:
                if stack[-1][0] is self:
                    _close_top(stack, monotonic_ns())
                else:
                    _close_inside(stack, self, monotonic_ns())

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def traced(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return traced  # type: ignore[return-value]

    @staticmethod
    def begin(channel: TraceChannel, label: str) -> None:
        """Open a span; the next ``end`` on this thread closes it (libpvti's begin)."""
        Tracepoint(channel, label).__enter__()

    @staticmethod
    def end(channel: TraceChannel, label: str = "") -> None:
        """Close this thread's innermost span opened with ``begin`` (libpvti's end)."""
        if session.recording:
            stack = getattr(thread_local, "stack", None)
            if stack and stack.gen == session.gen and stack[-1][0].channel is channel:
                _close_top(stack, monotonic_ns())

    @staticmethod
    def event(channel: TraceChannel, label: str) -> None:
        """An instant event (a flag on the timeline) at the current nesting depth."""
        if session.recording and channel.enabled:
            stack = thread_stack()
            t = monotonic_ns()
            session.record((t, t, stack.tid, channel.name, label, _INSTANT, len(stack), None))
            if len(session.buffer) > session.limit:
                session.relieve()


def instrument_fn(channel: TraceChannel) -> Callable[[F], F]:
    """Decorator factory: trace every call of the function, labelled with its name."""

    channel_arg(channel, "instrument_fn")

    def decorate(func: F) -> F:
        return Tracepoint(channel, func.__qualname__)(func)

    return decorate


def instrument(obj: Any, methods: Any, channel: TraceChannel) -> Any:
    """libpvti's ``instrument(obj, methods, channel)``: every call of each named method of
    ``obj`` (a class, or one object) becomes a span on ``channel`` labelled with the method's
    qualified name (``Dataset.__getitem__``). An object gets a subclass of its own, so that
    special methods (``len(obj)``, ``obj[i]``) are traced too and other objects are not."""
    names = (
        [methods]
        if isinstance(methods, str)
        else sequence_arg(methods, "instrument: the methods", ArgumentError)
    )
    for name in names:
        name_arg(name, "instrument: a method name", ArgumentError)
    channel_arg(channel, "instrument")
    target = obj if isinstance(obj, type) else type(obj)
    wrapped: dict[str, Any] = {}
    for name in names:
        method = getattr(target, name, None)
        if method is None:
            raise InstrumentError(f"{target.__name__} has no method {name!r} to instrument")
        wrapped[name] = Tracepoint(channel, getattr(method, "__qualname__", name))(method)
    if isinstance(obj, type):
        for name, fn in wrapped.items():
            setattr(obj, name, fn)
        return obj
    try:
        obj.__class__ = type(target.__name__, (target,), wrapped)
    except TypeError:  # builtins and slotted classes keep their class: trace bound methods
        for name in names:
            setattr(obj, name, Tracepoint(channel, name)(getattr(obj, name)))
    return obj
