"""The importer's fast path (runs of plain X/i events read at once) gives exactly the Trace
the per-event path gives: the per-event path is the oracle, on a hand-mixed corpus and on
fuzzed events."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler_core.errors import ReportError
from profiler_core.trace import import_chrome_file
from profiler_core.trace.build import EVENT_FIELDS
from profiler_core.trace.model import Trace
from tests.fuzzing import DERANDOMIZE, examples


def assert_same_trace(a: Trace, b: Trace) -> None:
    for name in EVENT_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y), name
    assert a.origin_wall_ns == b.origin_wall_ns
    assert a.labels == b.labels and a.channels == b.channels
    assert a.threads == b.threads and a.processes == b.processes
    assert np.array_equal(a.thread_offsets, b.thread_offsets)
    assert a.args == b.args
    assert np.array_equal(a.flows, b.flows)
    assert a.warnings == b.warnings
    assert a.series.keys() == b.series.keys()
    for graph, series in a.series.items():
        assert series.keys() == b.series[graph].keys()
        for key, (t, v) in series.items():
            t2, v2 = b.series[graph][key]
            assert np.array_equal(t, t2) and np.array_equal(v, v2, equal_nan=True)


def _both(path: Path) -> tuple[Trace | str, Trace | str]:
    out = []
    for fast in (True, False):
        try:
            out.append(import_chrome_file(path, fast=fast))
        except ReportError as err:
            out.append(str(err))
    return out[0], out[1]


def _mixed_corpus() -> list:
    """Plain runs broken by every kind of unusual event, ids first met in odd orders."""
    evs: list = [{"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "two"}}]
    for i in range(40):
        evs.append({"ph": "X", "name": f"op{i % 7}", "cat": "c" if i % 3 else "d",
                    "ts": i * 10 + (0.5 if i % 4 == 0 else 0), "dur": 3, "pid": 1 + i % 2,
                    "tid": i % 3, **({"args": {"i": i}} if i % 5 == 0 else {})})  # fmt: skip
        if i % 9 == 0:
            evs.append({"ph": "i", "name": "mark", "ts": i * 10 + 1, "pid": "7", "tid": "t"})
        if i == 20:  # one unusual event inside a plain run: the run goes one by one
            evs.append({"ph": "X", "name": "odd", "ts": 1, "dur": 1, "pid": 1.5, "tid": 1})
    evs += [
        {"ph": "X", "name": "bool pid", "ts": 1, "dur": 1, "pid": True, "tid": 1},
        {"ph": "X", "name": "no dur", "ts": 2, "pid": 1, "tid": 1},
        {"ph": "X", "name": "negative", "ts": 3, "dur": -1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "string ts", "ts": "4.5", "dur": "1", "pid": 1, "tid": 1},
        {"ph": "X", "name": "no tid", "ts": 5, "dur": 1, "pid": "proc"},
        {"ph": "X", "name": 12, "ts": 6, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "X", "name": "float pid", "ts": 7, "dur": 1, "pid": 1.0, "tid": 1},
        {"ph": "X", "name": "fraction pid", "ts": 7, "dur": 1, "pid": 1.5, "tid": 1},
        {
            "ph": "X",
            "name": "bound",
            "ts": 8,
            "dur": 5,
            "pid": 1,
            "tid": 0,
            "bind_id": 9,
            "flow_out": True,
        },
        {
            "ph": "X",
            "name": "bound in",
            "ts": 20,
            "dur": 5,
            "pid": 2,
            "tid": 0,
            "bind_id": 9,
            "flow_in": True,
        },
        {
            "ph": "X",
            "name": "open",
            "ts": 9,
            "dur": 1,
            "pid": 1,
            "tid": 1,
            "args": {"pvti_open": True},
        },
        {"ph": "X", "name": "list args", "ts": 10, "dur": 1, "pid": 1, "tid": 1, "args": [1]},
        {"ph": "i", "name": "global", "ts": 11, "pid": 1, "tid": 1, "s": "g"},
        {"ph": "I", "name": "process", "ts": 12, "pid": 1, "tid": 1, "s": "p"},
        {"ph": "i", "name": "thread", "ts": 13, "pid": 1, "tid": 1, "s": "t", "dur": "x"},
        {"ph": "B", "name": "begin", "ts": 14, "pid": 1, "tid": 2},
        {"ph": "X", "name": "inside", "ts": 15, "dur": 1, "pid": 1, "tid": 2},
        {"ph": "E", "ts": 17, "pid": 1, "tid": 2},
        {"ph": "C", "name": "mem", "ts": 18, "pid": 1, "args": {"used": 3, "bad": "x"}},
        {"ph": "Xtra", "name": "long phase", "ts": 19, "dur": 1, "pid": 1, "tid": 1},
        {"ph": "s", "id": 1, "ts": 8.5, "pid": 1, "tid": 0, "cat": "f"},
        {"ph": "f", "id": 1, "ts": 21, "pid": 2, "tid": 0, "cat": "f", "bp": "e"},
        {"ph": "O", "id": 1, "ts": 1, "pid": 1},
        {},
        [1, 2],
    ]
    evs += [{"ph": "X", "name": "late", "ts": 1e3 + i, "dur": 0.25, "pid": 3, "tid": 0}
            for i in range(5)]  # fmt: skip
    return evs


def test_fast_path_equals_per_event_path_on_a_mixed_corpus(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"traceEvents": _mixed_corpus()}))
    fast, slow = _both(path)
    assert isinstance(fast, Trace) and isinstance(slow, Trace)
    assert_same_trace(fast, slow)
    # the corpus does reach every part: spans, instants, flows, skips, args, open spans
    assert len(fast.flows) == 2
    assert any("skipped" in w for w in fast.warnings)
    assert len(fast.args) >= 8


def test_fast_path_keeps_nanosecond_epochs_exact(tmp_path: Path) -> None:
    base = 1_700_000_000_123_456_789  # ns epochs past 2**53: floats would lose digits
    evs = [{"ph": "X", "name": "a", "ts": base + i, "dur": 7, "pid": 1, "tid": 1}
           for i in range(5)]  # fmt: skip
    path = tmp_path / "ns.json"
    path.write_text(json.dumps(evs))
    fast, slow = _both(path)
    assert isinstance(fast, Trace) and isinstance(slow, Trace)
    assert_same_trace(fast, slow)
    assert fast.start_ns.tolist() == [0, 1, 2, 3, 4]  # hand: stamps past 9.2e15 are ns
    assert fast.end_ns.tolist() == [7, 8, 9, 10, 11]


numbers = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.integers(0, 50),
)  # fmt: skip
values = st.one_of(numbers, st.text(max_size=3), st.none(), st.booleans())
events = st.fixed_dictionaries(
    {"ph": st.sampled_from(["X", "X", "X", "i", "I", "B", "E", "M", "C", 5, "s", "t", "f"])},
    optional={
        "ts": st.one_of(st.integers(0, 100), values),
        "dur": st.one_of(st.integers(0, 10), values),
        "pid": st.one_of(st.integers(0, 2), st.sampled_from(["1", "a"]), values),
        "tid": st.one_of(st.integers(0, 2), st.sampled_from(["2", "b"]), values),
        "name": st.one_of(st.sampled_from(["a", "b"]), values),
        "cat": st.one_of(st.sampled_from(["c"]), values),
        "args": st.one_of(st.none(), st.dictionaries(st.sampled_from(["v", "pvti_open"]), values)),
        "s": st.sampled_from(["t", "p", "g"]),
        "bind_id": st.integers(0, 2),
        "flow_in": st.booleans(),
        "flow_out": st.booleans(),
        "id": st.one_of(st.integers(0, 2), st.sampled_from(["1", " 2", "0x1"]), values),
        "bp": st.sampled_from(["e", "x"]),
    },
)


@settings(
    max_examples=examples(150), derandomize=DERANDOMIZE, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)  # fmt: skip
@given(st.lists(events, max_size=12))
def test_fast_path_equals_per_event_path_on_any_events(evs: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzzed.json"
        path.write_text(json.dumps(evs))
        fast, slow = _both(path)
    if isinstance(slow, str):
        assert fast == slow
    else:
        assert isinstance(fast, Trace)
        assert_same_trace(fast, slow)
