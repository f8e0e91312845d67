"""The tracepoints' hot path (issue 42): a Tracepoint is made once per label, a span is a
record in the writer's ring, and what goes wrong is an EngineError, never a raw Python one."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import ipu_engine.pvti as pvti
from ipu_engine.common.errors import EngineError
from profiler_core.formats.pvti import EventKind, read_pvti
from profiler_core.formats.pvti.ring import CAPACITY


@pytest.fixture
def channel(tmp_path: Path):
    pvti.enable(tmp_path)
    yield pvti.createTraceChannel("hot")
    pvti.disable()


def _spans(path: Path) -> list[tuple[str, int, int]]:
    """(label, depth, kind) of every event, in the order written."""
    contents = read_pvti(path)
    ev = contents.events
    return [(contents.labels[int(lab)], int(d), int(k))
            for lab, d, k in zip(ev["label"], ev["depth"], ev["kind"], strict=True)]  # fmt: skip


def test_a_tracepoint_is_made_once_per_label(channel) -> None:
    assert pvti.Tracepoint(channel, "step") is pvti.Tracepoint(channel, "step")
    assert pvti.Tracepoint(channel, "step") is not pvti.Tracepoint(channel, "other")


@pytest.mark.parametrize("label", [5, None, b"step", ["step"], {"a": 1}, 2.5])
def test_a_label_that_is_not_a_string_is_an_engine_error(channel, label) -> None:
    for make in (
        lambda: pvti.Tracepoint(channel, label),
        lambda: pvti.Tracepoint.begin(channel, label),
        lambda: pvti.Tracepoint.event(channel, label),
    ):
        with pytest.raises(EngineError, match="label must be a string"):
            make()


@pytest.mark.parametrize("not_a_channel", ["hot", None, 3])
def test_a_channel_that_is_not_one_is_an_engine_error(channel, not_a_channel) -> None:
    with pytest.raises(EngineError, match="channel"):
        pvti.Tracepoint(not_a_channel, "step")
    with pytest.raises(EngineError, match="channel"):
        pvti.Tracepoint.event(not_a_channel, "flag")
    with pytest.raises(EngineError, match="channel"):
        pvti.Tracepoint.end(not_a_channel)


def test_nested_spans_and_instants_are_written_with_their_depths(channel) -> None:
    with pvti.Tracepoint(channel, "outer"), pvti.Tracepoint(channel, "inner"):
        pvti.Tracepoint.event(channel, "flag")
    path = pvti.current_trace_path()
    pvti.disable()
    span, instant = int(EventKind.SPAN), int(EventKind.INSTANT)
    assert _spans(path) == [("flag", 2, instant), ("inner", 1, span), ("outer", 0, span)]


def test_the_trace_closed_mid_span_ends_quietly_and_a_new_trace_starts_clean(
    tmp_path: Path,
) -> None:
    pvti.enable(tmp_path / "a")
    channel = pvti.createTraceChannel("hot")
    with pvti.Tracepoint(channel, "cut"):
        pvti.closeTrace()  # closed while the span is open: its end records nothing
    second = pvti.enable(tmp_path / "b")
    # the first trace's open span is forgotten
    with pvti.Tracepoint(channel, "cut"), pvti.Tracepoint(channel, "inside"):
        pass
    pvti.disable()
    span = int(EventKind.SPAN)
    assert _spans(second) == [("inside", 1, span), ("cut", 0, span)]


def test_a_channel_disabled_mid_span_still_ends_the_span_it_began(channel) -> None:
    with pvti.Tracepoint(channel, "begun"):
        pvti.disableTraceChannel(channel)
        with pvti.Tracepoint(channel, "not traced"):
            pass
    pvti.enableTraceChannel(channel)
    path = pvti.current_trace_path()
    pvti.disable()
    assert _spans(path) == [("begun", 0, int(EventKind.SPAN))]


def test_more_spans_than_the_ring_holds_are_all_written_in_order(channel) -> None:
    n = 3 * CAPACITY + 17  # the ring is committed by the recording thread as it fills
    tracepoints = [pvti.Tracepoint(channel, f"s{i % 3}") for i in range(3)]
    for i in range(n):
        with tracepoints[i % 3]:
            pass
    path = pvti.current_trace_path()
    pvti.disable()
    labels = [label for label, _, _ in _spans(path)]
    assert labels == [f"s{i % 3}" for i in range(n)]


def test_threads_record_their_own_nesting(channel) -> None:
    def work(name: str) -> None:
        for _ in range(2000):
            with pvti.Tracepoint(channel, name), pvti.Tracepoint(channel, name + " inner"):
                pass

    threads = [threading.Thread(target=work, args=(f"t{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    path = pvti.current_trace_path()
    pvti.disable()
    spans = _spans(path)
    assert len(spans) == 4 * 2 * 2000
    # hand: every inner span is at depth 1 and every outer one at depth 0, on every thread
    assert {(label.endswith("inner"), depth) for label, depth, _ in spans} == {
        (True, 1),
        (False, 0),
    }
