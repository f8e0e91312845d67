"""libpvti's Tracepoint: spans (context manager, decorator, begin/end) and instant events.

The hot path is C (``_tracepoint.c``) and allocates nothing per event: ``Tracepoint(channel,
label)`` returns the one Tracepoint of that label on that channel (made once, by ``_make``
here, with its process-wide point number), each thread keeps its open spans in C arrays
(no lock: only the thread writes them), and a finished span is one fixed-size record
appended to the writer's ring (``profiler_core.formats.pvti.ring``), which the writer's
flusher thread commits in the background. Pure Python cannot come near the cost of an
empty ``with`` (the README's issue-42 finding), so there is no Python twin of that path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from ipu_engine.common.arguments import kind_error, name_arg, sequence_arg
from ipu_engine.common.errors import ArgumentError
from ipu_engine.pvti import _tracepoint
from ipu_engine.pvti._tracepoint import TracedCall, TracepointBase
from ipu_engine.pvti.errors import InstrumentError
from ipu_engine.pvti.session import TraceChannel, channel_arg
from profiler_core.formats.pvti.ring import POINTS

F = TypeVar("F", bound=Callable[..., Any])
#: labels a channel keeps Tracepoints for; past it (labels made per call, such as
#: f"step {i}") each call makes its own, so memory does not grow with the calls
_MAX_KEPT = 1 << 16


class Tracepoint(TracepointBase):
    """A span on ``channel`` named ``label``: ``with Tracepoint(ch, "step"):`` or
    ``@Tracepoint(ch, "step")``; nests freely, per thread. ``Tracepoint(ch, label)`` is
    the same object each time for a label (a Tracepoint holds no per-call state).
    ``__enter__``, ``__exit__``, ``channel``, ``label`` and ``point`` are C's."""

    __slots__ = ()

    @classmethod
    def _make(cls, channel: TraceChannel, label: str) -> Tracepoint:
        """A label's first Tracepoint (C's ``Tracepoint(channel, label)`` found none)."""
        channel_arg(channel, "Tracepoint")
        name_arg(label, "Tracepoint: the label", ArgumentError)
        found = channel.tracepoints.get(label)  # called by keyword: C looked for none
        if found is not None:
            return found
        self = cls._alloc(channel, label, 2 * POINTS.id((channel.name, label)))
        if cls is Tracepoint and len(channel.tracepoints) < _MAX_KEPT:
            channel.tracepoints[label] = self
        return self

    def __call__(self, func: F) -> F:
        """``func`` traced: a C callable that binds as a method like a function and carries
        ``func``'s name, doc and ``__wrapped__``."""
        if not callable(func):
            raise ArgumentError(kind_error("Tracepoint: the traced object", "a callable", func))
        return functools.update_wrapper(TracedCall(self, func), func)  # type: ignore[return-value]

    @staticmethod
    def begin(channel: TraceChannel, label: str) -> None:
        """Open a span; the next ``end`` on this thread closes it (libpvti's begin)."""
        Tracepoint(channel, label).__enter__()

    @staticmethod
    def end(channel: TraceChannel, label: str = "") -> None:
        """Close this thread's innermost span opened with ``begin`` (libpvti's end)."""
        _tracepoint.end(channel_arg(channel, "Tracepoint.end"))

    @staticmethod
    def event(channel: TraceChannel, label: str) -> None:
        """An instant event (a flag on the timeline) at the current nesting depth."""
        _tracepoint.instant(Tracepoint(channel, label))  # checks both, as a span's would


def instrument_fn(channel: TraceChannel) -> Callable[[F], F]:
    """Decorator factory: trace every call of the function, labelled with its name."""

    channel_arg(channel, "instrument_fn")

    def decorate(func: F) -> F:
        if not callable(func):
            raise ArgumentError(kind_error("instrument_fn: the traced object", "a callable", func))
        return Tracepoint(channel, getattr(func, "__qualname__", type(func).__qualname__))(func)

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
