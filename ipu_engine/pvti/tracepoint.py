"""libpvti's Tracepoint: spans (context manager, decorator, begin/end) and instant events.

The hot path allocates nothing per event: ``Tracepoint(channel, label)`` returns the one
Tracepoint of that label on that channel (made once, with its process-wide channel and
label ids), each thread keeps its open spans in preallocated lists (no lock: only the
thread writes them), and a finished span is one ``struct.pack_into`` of a fixed-size
record into the writer's ring (``profiler_core.formats.pvti.ring``), which the writer's
flusher thread commits in the background.
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
    ThreadStack,
    TraceChannel,
    channel_arg,
    session,
    thread_local,
    thread_stack,
)
from profiler_core.formats.pvti.ring import INSTANT_BIT, OFFSET_MASK, POINTS

F = TypeVar("F", bound=Callable[..., Any])
#: labels a channel keeps Tracepoints for; past it (labels made per call, such as
#: f"step {i}") each call makes its own, so memory does not grow with the calls
_MAX_KEPT = 1 << 16


def _record(stack: ThreadStack, k: int, end_ns: int) -> None:
    """Entry ``k`` of ``stack`` as a finished span (the out-of-order and begin/end path)."""
    ring = stack.ring
    if ring is not None:
        ring.put(stack.starts[k], end_ns, stack.tid, stack.points[k].point, stack.depths[k])


def _close_inside(stack: ThreadStack, tracepoint: Tracepoint, end_ns: int) -> None:
    """Close ``tracepoint`` where it sits below the top (spans of interleaved coroutines
    end out of order); it keeps the depth it had when it began."""
    for k in range(stack.depth - 1, -1, -1):
        if stack.points[k] is tracepoint:
            # Record before removing: a concurrent commit then sees the span open or
            # finished, never neither.
            _record(stack, k, end_ns)
            stack.remove(k)
            return


class Tracepoint:
    """A span on ``channel`` named ``label``: ``with Tracepoint(ch, "step"):`` or
    ``@Tracepoint(ch, "step")``; nests freely, per thread. ``Tracepoint(ch, label)`` is
    the same object each time for a label (a Tracepoint holds no per-call state)."""

    __slots__ = ("channel", "label", "point")

    def __new__(cls, channel: TraceChannel, label: str) -> Tracepoint:
        try:
            return channel.tracepoints[label]
        except (AttributeError, KeyError, TypeError):  # new, or not a channel and label
            pass
        self = object.__new__(cls)
        self.channel = channel_arg(channel, "Tracepoint")
        self.label = name_arg(label, "Tracepoint: the label", ArgumentError)
        self.point = 2 * POINTS.id((channel.name, label))  # a span's; + 1: an instant's
        if cls is Tracepoint and len(channel.tracepoints) < _MAX_KEPT:
            channel.tracepoints[label] = self
        return self

    def __enter__(self) -> Tracepoint:
        ring = session.ring
        if ring is not None and self.channel.enabled:
            try:
                stack = thread_local.stack
            except AttributeError:
                stack = thread_stack()
            if stack.ring is not ring:
                stack = thread_stack()  # spans left from an earlier writer are forgotten
            d = stack.depth
            try:
                stack.starts[d] = monotonic_ns()
            except IndexError:
                stack.grow()
                stack.starts[d] = monotonic_ns()
            stack.points[d] = self
            stack.depths[d] = d
            stack.depth = d + 1
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        ring = session.ring
        if ring is not None:
            try:
                stack = thread_local.stack
            except AttributeError:
                return
            d = stack.depth - 1
            if d < 0 or stack.ring is not ring:
                return
            if stack.points[d] is self:
                # Record before popping: a concurrent commit then sees the span open or
                # finished, never neither.
                i = ring.claim()
                ring.pack(ring.buf, i & OFFSET_MASK, stack.starts[d], monotonic_ns(),
                          stack.tid, i + 1, self.point, stack.depths[d])  # fmt: skip
                stack.depth = d
                if i >= ring.limit_at:
                    ring.relieve()
            else:
                _close_inside(stack, self, monotonic_ns())

    def __call__(self, func: F) -> F:
        enter, leave = self.__enter__, self.__exit__

        @functools.wraps(func)
        def traced(*args: Any, **kwargs: Any) -> Any:
            enter()
            try:
                return func(*args, **kwargs)
            finally:
                leave(None, None, None)

        return traced  # type: ignore[return-value]

    @staticmethod
    def begin(channel: TraceChannel, label: str) -> None:
        """Open a span; the next ``end`` on this thread closes it (libpvti's begin)."""
        Tracepoint(channel, label).__enter__()

    @staticmethod
    def end(channel: TraceChannel, label: str = "") -> None:
        """Close this thread's innermost span opened with ``begin`` (libpvti's end)."""
        channel_arg(channel, "Tracepoint.end")
        if session.recording:
            stack = getattr(thread_local, "stack", None)
            if stack is None or stack.ring is not session.ring or not stack.depth:
                return
            d = stack.depth - 1
            if stack.points[d].channel is channel:
                _record(stack, d, monotonic_ns())
                stack.depth = d

    @staticmethod
    def event(channel: TraceChannel, label: str) -> None:
        """An instant event (a flag on the timeline) at the current nesting depth."""
        tracepoint = Tracepoint(channel, label)  # checks both, as a span's would be
        if session.ring is not None and channel.enabled:
            stack = thread_stack()
            if stack.ring is not None:
                t = monotonic_ns()
                stack.ring.put(t, t, stack.tid, tracepoint.point + INSTANT_BIT, stack.depth)


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
