"""A traced function (``@Tracepoint(...)``, ``@instrument_fn``, issue 42) is a C callable
that behaves as the function it wraps does: same result and errors, binds as a method,
keeps its name, doc, signature and pickles by name -- and each call is one span whose
times lie within bounds the test measures around the call."""

from __future__ import annotations

import inspect
import pickle
import time
from pathlib import Path

import pytest

import ipu_engine.pvti as pvti
from ipu_engine.common.errors import EngineError
from ipu_engine.pvti import _tracepoint
from profiler_core.formats.pvti import EventKind, read_pvti

MODULE_CHANNEL = pvti.createTraceChannel("module level")


@pvti.instrument_fn(MODULE_CHANNEL)
def scaled(x: float, *, by: float = 2.0) -> float:
    """x times by."""
    return x * by


@pytest.fixture
def channel(tmp_path: Path):
    pvti.enable(tmp_path)
    yield pvti.createTraceChannel("calls")
    pvti.disable()


def _spans(path: Path) -> list[tuple[str, int, int, int, int]]:
    """(label, depth, kind, start_ns, end_ns) of every event, in the order written."""
    contents = read_pvti(path)
    ev = contents.events
    return [(contents.labels[int(lab)], int(d), int(k), int(s), int(e))
            for lab, d, k, s, e in zip(ev["label"], ev["depth"], ev["kind"], ev["start_ns"],
                                       ev["end_ns"], strict=True)]  # fmt: skip


def test_a_traced_function_keeps_its_face() -> None:
    assert isinstance(scaled, _tracepoint.TracedCall)
    assert scaled.__name__ == "scaled" and scaled.__qualname__ == "scaled"
    assert scaled.__doc__ == "x times by." and scaled.__module__ == __name__
    assert str(inspect.signature(scaled)) == "(x: 'float', *, by: 'float' = 2.0) -> 'float'"
    assert scaled(3.0, by=4.0) == 12.0
    assert pickle.loads(pickle.dumps(scaled)) is scaled


def test_each_call_is_one_span_within_the_time_measured_around_it(channel) -> None:
    @pvti.Tracepoint(channel, "work")
    def work(n: int) -> int:
        return sum(range(n))

    bounds = []
    for n in (10, 1000, 100_000):
        before = time.monotonic_ns()
        assert work(n) == n * (n - 1) // 2
        bounds.append((before, time.monotonic_ns()))
    path = pvti.current_trace_path()
    pvti.disable()
    written = _spans(path)
    assert [(label, d, k) for label, d, k, _, _ in written] == [("work", 0, EventKind.SPAN)] * 3
    for (*_, start, end), (before, after) in zip(written, bounds, strict=True):
        assert before <= start <= end <= after


def test_a_call_that_raises_ends_its_span_and_the_error_goes_on(channel) -> None:
    @pvti.Tracepoint(channel, "fails")
    def fails() -> None:
        raise KeyError("the caller's own error")

    with pvti.Tracepoint(channel, "outer"):
        with pytest.raises(KeyError, match="the caller's own error"):
            fails()
        with pvti.Tracepoint(channel, "next"):
            pass
    path = pvti.current_trace_path()
    pvti.disable()
    span = int(EventKind.SPAN)
    assert [s[:3] for s in _spans(path)] == [("fails", 1, span), ("next", 1, span),
                                             ("outer", 0, span)]  # fmt: skip


class Counter:
    def __init__(self) -> None:
        self.n = 0

    def add(self, k: int) -> int:
        self.n += k
        return self.n


def test_a_traced_method_binds_to_its_instance(channel) -> None:
    Counter.add = pvti.Tracepoint(channel, "Counter.add")(Counter.add)
    try:
        counter = Counter()
        assert counter.add(2) == 2
        bound = counter.add
        assert bound(3) == 5 and bound.__self__ is counter
        assert Counter.add(counter, 1) == 6  # looked up on the class: unbound, as a function
        assert Counter.__dict__["add"].__get__(None, Counter) is Counter.__dict__["add"]
    finally:
        Counter.add = Counter.add.__wrapped__
    path = pvti.current_trace_path()
    pvti.disable()
    assert [s[0] for s in _spans(path)] == ["Counter.add"] * 3


@pytest.mark.parametrize("not_callable", [5, "step", None])
def test_tracing_what_is_not_callable_is_an_engine_error(channel, not_callable) -> None:
    with pytest.raises(EngineError, match="must be a callable"):
        pvti.Tracepoint(channel, "step")(not_callable)
    with pytest.raises(EngineError, match="must be a callable"):
        pvti.instrument_fn(channel)(not_callable)
