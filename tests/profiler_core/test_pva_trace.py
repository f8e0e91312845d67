"""pva.openTrace: processes, threads, events with µs times and children, and series."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from profiler_core import pva
from profiler_core.errors import ReportError
from profiler_core.pva.trace import TraceEvent
from tests.profiler_core.pvti_samples import IPU_STEPS, LOSS, MAIN_EVENTS, sql


def test_events_read_like_libpvti_objects_in_microseconds(small_pvti: Path) -> None:
    trace = pva.openTrace(small_pvti)
    (process,) = trace.processes
    assert process.pid == os.getpid() and process.name == "small"
    threads = {t.name: t for t in process.threads}
    main = threads["main"]
    got = [(e.label, e.start, e.end - e.start, e.channel) for e in main.allEvents]
    expected = sorted(
        ((label, s / 1000, (e - s) / 1000, "Training") for label, s, e, _, _ in MAIN_EVENTS),
        key=lambda r: r[1],
    )
    assert got == expected
    # libpva's thread.events are the outermost events; times in whole µs since the epoch
    (epoch,) = main.events
    origin = trace.columns.origin_wall_ns
    first = min(MAIN_EVENTS, key=lambda r: r[1])
    assert epoch.timestamp == (origin + first[1]) // 1000
    assert epoch.duration == (origin + first[2]) // 1000 - (origin + first[1]) // 1000
    assert threads["IPU 0"].id is None and threads["IPU 0"].kind == "track"
    assert [e.label for e in threads["IPU 0"].allEvents] == [s[0] for s in IPU_STEPS]
    assert threads["IPU 0"].tid < 0 and main.tid == main.id


def test_children_are_the_directly_nested_events(small_pvti: Path) -> None:
    main = next(t for t in pva.openTrace(small_pvti).processes[0].threads if t.name == "main")
    (epoch,) = main.rootEvents
    assert epoch.label == "epoch" and epoch.depth == 0
    steps = epoch.children()
    assert [(s.label, s.start) for s in steps] == [("step", 2.0), ("step", 5.0)]
    assert [c.label for c in steps[0].children()] == ["tick"]
    assert steps[0].children()[0].isInstant
    assert steps[1].children() == [] and steps[1].args == {"n": 2}


def test_series_give_times_in_microseconds_and_values(small_pvti: Path) -> None:
    trace = pva.openTrace(small_pvti)
    (loss,) = trace.series
    assert (loss.graph, loss.name, len(loss)) == ("Loss", "train", len(LOSS))
    assert loss.times.tolist() == [t / 1000 for t, _ in LOSS]
    assert loss.values.tolist() == [v for _, v in LOSS]
    assert trace.graphs["Loss"]["train"] is loss


def test_event_lists_index_like_sequences(small_pvti: Path) -> None:
    main = next(t for t in pva.openTrace(small_pvti).processes[0].threads if t.name == "main")
    events = main.allEvents
    assert len(events) == len(MAIN_EVENTS)
    assert isinstance(events[0], TraceEvent)
    assert events[-1].label == events[len(events) - 1].label
    assert [e.label for e in events[1:3]] == [events[1].label, events[2].label]
    with pytest.raises(IndexError):
        events[len(events)]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{bad", "malformed JSON at line 1 column 2"),
        ("[" * 100_000 + "]" * 100_000, "JSON nested deeper than 200 levels"),
    ],
)
def test_bad_event_arguments_are_a_report_error_when_asked_for(
    small_pvti: Path, text: str, problem: str
) -> None:
    sql(small_pvti, "UPDATE event_args SET json = ?", (text,))
    trace = pva.openTrace(small_pvti)  # arguments are decoded only when asked for
    main = {t.name: t for t in trace.processes[0].threads}["main"]
    step = next(e for e in main.allEvents if e.start == 5.0)  # the one with arguments
    assert step.label == "step" and main.events[0].args is None  # the epoch has none
    with pytest.raises(ReportError) as caught:
        _ = step.args
    assert caught.value.path == small_pvti
    assert re.search(rf"event \d+ \('step'\) arguments: {problem}", str(caught.value))


def test_good_event_arguments_decode(small_pvti: Path) -> None:
    main = {t.name: t for t in pva.openTrace(small_pvti).processes[0].threads}["main"]
    assert [e.args for e in main.allEvents if e.args is not None] == [{"n": 2}]
