"""A thread's nested lanes are indexes into the Trace's columns (issue 28): they count and
draw what brute-force numpy over the lane's own spans says; crossing spans keep copies."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.indexed_lane import IndexedLane
from profiler_core.analysis.trace_lanes import (
    Lane,
    lane_window,
    make_lane,
    thread_depth_lanes,
)
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import Process, Thread, build_trace
from profiler_core.trace.nesting import nesting_depths


def _nested_trace(seed: int, threads: int = 3, parents: int = 400):
    """Parents with 0-4 children each, some children with a grandchild, a few zero-length
    spans and instants, on ``threads`` threads; depths from the nesting walk."""
    rng = np.random.default_rng(seed)
    start, end, thread, kind = [], [], [], []
    for t in range(threads):
        at = int(rng.integers(0, 50))
        for _ in range(parents):
            length = int(rng.integers(20, 200))
            start.append(at), end.append(at + length), thread.append(t)
            kind.append(EventKind.SPAN)
            child = at + 1
            for _ in range(int(rng.integers(0, 5))):
                size = int(rng.integers(0, 8))  # 0: a zero-length span
                if child + size + 1 >= at + length:
                    break
                start.append(child), end.append(child + size), thread.append(t)
                kind.append(EventKind.SPAN)
                if size >= 4 and rng.random() < 0.5:
                    start.append(child + 1), end.append(child + 3), thread.append(t)
                    kind.append(EventKind.SPAN)
                if rng.random() < 0.2:
                    start.append(child), end.append(child), thread.append(t)
                    kind.append(EventKind.INSTANT)
                child += size + 2
            at += length + int(rng.integers(0, 30))
    start, end = np.array(start, np.int64), np.array(end, np.int64)
    thread = np.array(thread, np.int32)
    n = len(start)
    return build_trace(
        {
            "start_ns": start,
            "end_ns": end,
            "thread": thread,
            "depth": nesting_depths(thread, start, end),
            "kind": np.array(kind, np.uint8),
            "label": np.arange(n) % 7,
            "channel": np.zeros(n),
        },
        origin_wall_ns=0,
        labels=[f"op{i}" for i in range(7)],
        channels=["c"],
        threads=[Thread(f"t{t}", 0, t, "thread") for t in range(threads)],
        processes=[Process(1, "h", "p", 0)],
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nested_lanes_count_and_draw_what_their_spans_say(seed: int) -> None:
    trace = _nested_trace(seed)
    indexed = 0
    for t in range(len(trace.threads)):
        lanes = thread_depth_lanes(trace, t)
        for d, lane in zip(lanes.depths.tolist(), lanes.lanes, strict=True):
            # the lane's spans, found again from the columns
            want = np.flatnonzero(
                (trace.thread == t) & (trace.depth == d) & (trace.kind != EventKind.INSTANT)
            )
            assert lane.event.tolist() == want.tolist()
            s = trace.start_ns[want]
            e = np.maximum(trace.end_ns[want], s + 1)  # a zero-length span lasts 1 ns
            keys = np.unique(np.concatenate([s, e, s - 1, e + 1, [s.min() - 5, e.max() + 5]]))
            assert lane.started_before(keys).tolist() == (s[:, None] < keys).sum(0).tolist()
            assert lane.ended_by(keys).tolist() == (e[:, None] <= keys).sum(0).tolist()
            assert lane.start_at(np.arange(len(want))).tolist() == s.tolist()
            assert lane.end_at(np.arange(len(want))).tolist() == e.tolist()
            for t0, t1 in [(int(s[0]) - 3, int(e.max()) + 3), (int(s[len(s) // 2]), int(s[-1]))]:
                if t1 <= t0:
                    continue
                overlap = int(((s < np.ceil(t1)) & (e > np.floor(t0))).sum())
                assert lane.count_in(t0, t1) == overlap
                for width in (3, 97, 5000):
                    got = lane_window(lane, t0, t1, width)
                    copied = lane_window(make_lane(trace, want), t0, t1, width)
                    for field in ("start", "end", "event", "count"):
                        assert getattr(got, field).tolist() == getattr(copied, field).tolist()
            indexed += isinstance(lane, IndexedLane)
    assert indexed >= 2 * len(trace.threads)  # the children and grandchildren lanes


def test_crossing_spans_keep_a_lane_of_copies() -> None:
    # B starts inside A and ends after it: the walk puts B at depth 1, as is C; B and C
    # overlap, so the depth-1 lane cannot be an index of non-overlapping spans
    start = np.array([0, 5, 12, 30], np.int64)
    end = np.array([10, 20, 15, 40], np.int64)
    thread = np.zeros(4, np.int32)
    depth = np.array([0, 1, 1, 0], np.int32)
    trace = build_trace(
        {"start_ns": start, "end_ns": end, "thread": thread, "depth": depth,
         "kind": np.full(4, EventKind.SPAN, np.uint8), "label": np.zeros(4),
         "channel": np.zeros(4)},
        origin_wall_ns=0, labels=["x"], channels=["c"],
        threads=[Thread("t", 0, 1, "thread")], processes=[Process(1, "h", "p", 0)],
    )  # fmt: skip
    lanes = thread_depth_lanes(trace, 0)
    deep = lanes.lanes[1]
    assert isinstance(deep, Lane) and deep.reach is not None
    assert deep.ended_by(np.array([15, 20])).tolist() == [1, 2]
