"""Flame lanes of a trace (spans per thread and depth, merged below a pixel) and the call
tree (time by label path), checked against hand counts and brute-force numpy."""

from __future__ import annotations

import numpy as np
import pytest

from profiler_core.analysis.call_tree import call_tree, event_parents
from profiler_core.analysis.trace_lanes import (
    MAX_THREAD_LANES,
    MERGED,
    children,
    lane_counts,
    lane_window,
    make_lane,
    merge_lanes,
    self_time,
    thread_depth_lanes,
    thread_lanes,
)
from profiler_core.formats.pvti import EventKind
from profiler_core.trace import Process, Thread, build_trace
from tests.profiler_core.test_trace_model import two_thread_trace


def _names(trace, events) -> list[str]:
    return [trace.label_of(int(e)) for e in events]


def test_thread_lanes_put_each_depth_in_a_lane_without_instants() -> None:
    trace = two_thread_trace()
    lanes = thread_lanes(trace, 0)
    assert [_names(trace, lane.event) for lane in lanes] == [["A", "C"], ["B"]]
    assert _names(trace, thread_lanes(trace, 1)[0].event) == ["D"]
    assert thread_lanes(trace, 0, channels=[]) == []


def test_a_wide_window_keeps_each_span_and_its_exact_times() -> None:
    trace = two_thread_trace()
    lane = thread_lanes(trace, 0)[0]
    spans = lane_window(lane, 0, 400, 400)  # 1 ns a pixel: nothing shares a column
    assert _names(trace, spans.event) == ["A", "C"]
    assert spans.start.tolist() == [0, 200] and spans.end.tolist() == [100, 300]
    assert spans.count.tolist() == [1, 1]
    assert lane.count_in(0, 400) == 2 and lane.count_in(100, 200) == 0
    assert lane.count_in(99, 201) == 2


def test_spans_sharing_a_pixel_merge_and_count_what_they_stand_for() -> None:
    # 1000 spans of 1 ns every 10 ns, then one long span: at 100 px over 20,000 ns each
    # column (200 ns) holds 20 short spans, the long one keeps its identity.
    start = np.concatenate([np.arange(1000) * 10, [10_000]])
    end = start + np.concatenate([np.ones(1000, np.int64), [10_000]])
    trace = _one_thread(start, end)
    spans = lane_window(thread_lanes(trace, 0)[0], 0, 20_000, 100)
    assert spans.event.tolist() == [MERGED, 1000]
    assert spans.start.tolist() == [0, 10_000] and spans.end.tolist() == [10_000, 20_000]
    assert spans.count.tolist() == [1000, 1]
    assert (spans.end[:-1] <= spans.start[1:]).all()  # never overlapping


def test_windows_agree_with_a_brute_force_count_per_pixel_column() -> None:
    rng = np.random.default_rng(3)
    gaps = rng.integers(0, 500, 5000)
    lengths = rng.integers(1, 2000, 5000)
    start = np.cumsum(gaps + np.concatenate([[0], lengths[:-1]]))
    end = start + lengths
    trace = _one_thread(start, end)
    lane = thread_lanes(trace, 0)[0]
    t0, t1, width = float(start[100]) + 0.5, float(start[900]), 333
    spans = lane_window(lane, t0, t1, width)
    edges = t0 + (t1 - t0) * np.arange(width + 1) / width
    for j in range(width):
        hit = np.flatnonzero((start < edges[j + 1]) & (end > edges[j]))
        drawn = np.flatnonzero((spans.start < edges[j + 1]) & (spans.end > edges[j]))
        assert (hit.size > 0) == (drawn.size > 0), j
        if hit.size == 1:
            assert spans.event[drawn].tolist() == hit.tolist()
        elif hit.size == 2 and start[hit[0]] < edges[j] and end[hit[1]] >= edges[j + 1]:
            assert spans.event[drawn].tolist()[-1] == hit[1]  # a hand-over: the later shows
        else:  # a span wholly inside the column: merged
            assert (spans.event[drawn] == MERGED).any()
    # Every span in the window is drawn itself or inside a merged span.
    merged = spans.event == MERGED
    for e in np.flatnonzero((start < t1) & (end > t0)).tolist():
        inside = (spans.start[merged] < end[e]) & (spans.end[merged] > start[e])
        assert e in spans.event or inside.any(), e


def test_a_merged_lane_of_overlapping_threads_draws_the_latest_whole_span_on_top() -> None:
    trace = two_thread_trace()
    lane = merge_lanes(trace, [thread_lanes(trace, t)[0] for t in (0, 1)])
    assert _names(trace, lane.event) == ["A", "D", "C"]
    spans = lane_window(lane, 0, 500, 500)
    # D [5, 500) covers A's tail and all of C: C is on top where it is, D elsewhere.
    shown = [(trace.label_of(int(e)) if e >= 0 else "*", s, t)
             for e, s, t in zip(spans.event, spans.start, spans.end, strict=True)]  # fmt: skip
    assert shown[0] == ("A", 0, 5) and shown[1] == ("D", 5, 200)
    assert ("C", 200, 300) in shown
    assert shown[-1] == ("D", 300, 500)


def test_children_and_self_time_of_a_span() -> None:
    trace = two_thread_trace()
    a = _names(trace, range(len(trace))).index("A")
    assert _names(trace, children(trace, a)) == ["B"]
    assert self_time(trace, a) == 100 - 10


def test_parents_are_the_enclosing_span_one_level_up() -> None:
    trace = two_thread_trace()
    parent = event_parents(trace)
    named = dict(zip(_names(trace, range(len(trace))), parent.tolist(), strict=True))
    a = _names(trace, range(len(trace))).index("A")
    assert named["B"] == a and named["I"] == a
    assert named["A"] == named["C"] == named["D"] == -1


def test_call_tree_sums_total_self_and_count_by_label_path() -> None:
    # epoch [0,100) > step [0,30), step [40,90) > copy [50,60); epoch [200,260) > step
    # [200,250); on another thread epoch [0,10). Hand sums below.
    rows = [  # label, thread, start, end, depth
        ("epoch", 0, 0, 100, 0), ("step", 0, 0, 30, 1), ("step", 0, 40, 90, 1),
        ("copy", 0, 50, 60, 2), ("epoch", 0, 200, 260, 0), ("step", 0, 200, 250, 1),
        ("epoch", 1, 0, 10, 0),
    ]  # fmt: skip
    labels = ["epoch", "step", "copy"]
    trace = build_trace(
        {
            "label": [labels.index(r[0]) for r in rows],
            "thread": [r[1] for r in rows],
            "start_ns": [r[2] for r in rows],
            "end_ns": [r[3] for r in rows],
            "depth": [r[4] for r in rows],
            "kind": np.full(len(rows), EventKind.SPAN),
            "channel": np.zeros(len(rows)),
        },
        origin_wall_ns=0,
        labels=labels,
        channels=["c"],
        threads=[Thread("a", 0, 1, "thread"), Thread("b", 0, 2, "thread")],
        processes=[Process(1, "h", "p", 0)],
    )
    tree = call_tree(trace)
    epoch = tree.find(["epoch"], trace.labels)
    step = tree.find(["epoch", "step"], trace.labels)
    copy = tree.find(["epoch", "step", "copy"], trace.labels)
    assert (tree.total[epoch], tree.self_ns[epoch], tree.count[epoch]) == (170, 170 - 130, 3)
    assert (tree.total[step], tree.self_ns[step], tree.count[step]) == (130, 120, 3)
    assert (tree.total[copy], tree.self_ns[copy], tree.count[copy]) == (10, 10, 1)
    assert len(tree) == 3
    # In [45, 210): epoch 55 + 10, step (45..90) 45 + 10, copy 10.
    window = call_tree(trace, 45, 210)
    epoch = window.find(["epoch"], trace.labels)
    step = window.find(["epoch", "step"], trace.labels)
    assert (window.total[epoch], window.count[epoch]) == (65, 2)
    assert (window.total[step], window.self_ns[step], window.count[step]) == (55, 45, 2)


def test_a_depth_column_claiming_a_billion_levels_costs_the_depths_that_occur() -> None:
    # A damaged .pvti: one span at depth 10^9 under one at depth 0. Before, one lane was
    # built per level in between (the window grew to 18 GB); two depths occur, two lanes.
    trace = _one_thread(np.array([0, 10]), np.array([100, 20]), depth=np.array([0, 10**9]))
    lanes = thread_depth_lanes(trace, 0)
    assert [lane.event.tolist() for lane in lanes.lanes] == [[0], [1]]
    assert lanes.depths.tolist() == [0, 10**9] and lanes.clamped == 0
    assert lanes.lane_of(10**9) == 1 and lanes.lane_of(5) == -1


def test_nesting_deeper_than_the_lane_limit_shares_the_last_lane_and_is_counted() -> None:
    n = MAX_THREAD_LANES + 36  # 100 nested spans, each one level deeper
    start = np.arange(n, dtype=np.int64)
    trace = _one_thread(start, 1000 - start, depth=np.arange(n))
    lanes = thread_depth_lanes(trace, 0)
    assert len(lanes.lanes) == MAX_THREAD_LANES
    assert lanes.clamped == 36  # levels 64..99 (hand count: 100 - 64)
    assert lanes.lanes[-1].event.tolist() == list(range(MAX_THREAD_LANES - 1, n))
    assert lanes.lane_of(n - 1) == MAX_THREAD_LANES - 1


@pytest.mark.parametrize(
    "depth_values",
    [[0, 1, 2, 5, 70, 10**9], [0, 1, 2, 5, 70, 3]],  # a huge depth: sorted pairs; else the table
)
def test_lane_counts_of_every_thread_at_once_match_the_lanes_built_one_by_one(
    depth_values,
) -> None:
    # The System Trace lays out rows from lane_counts and builds a row's lanes when drawn:
    # both must agree on every thread, under every channel filter.
    rng = np.random.default_rng(5)
    n, threads = 3000, 40
    start = rng.integers(0, 10**6, n)
    trace = build_trace(
        {
            "label": np.zeros(n),
            "thread": rng.integers(0, threads, n),
            "start_ns": start,
            "end_ns": start + rng.integers(0, 1000, n),
            "depth": rng.choice(depth_values, n, p=[0.5, 0.2, 0.1, 0.1, 0.05, 0.05]),
            "kind": rng.choice([EventKind.SPAN, EventKind.INSTANT], n),
            "channel": rng.integers(0, 3, n),
        },
        origin_wall_ns=0,
        labels=["x"],
        channels=["a", "b", "c"],
        threads=[Thread(f"t{i}", 0, i, "thread") for i in range(threads + 1)],  # one empty
        processes=[Process(1, "h", "p", 0)],
    )
    for channels in (None, [0], [1, 2], []):
        counts = lane_counts(trace, channels)
        built = [len(thread_depth_lanes(trace, t, channels).lanes) for t in range(threads + 1)]
        assert counts.tolist() == built
        spans = trace.kind != EventKind.INSTANT
        if channels is not None:
            spans &= np.isin(trace.channel, channels)
        for t in range(threads + 1):  # every shown span is in exactly one of its lanes
            drawn = sorted(e for lane in thread_lanes(trace, t, channels) for e in lane.event)
            assert drawn == np.flatnonzero(spans & (trace.thread == t)).tolist()


def _one_thread(start: np.ndarray, end: np.ndarray, depth: np.ndarray | None = None):
    n = len(start)
    return build_trace(
        {
            "label": np.arange(n) % 2,
            "thread": np.zeros(n),
            "start_ns": start,
            "end_ns": end,
            "depth": np.zeros(n) if depth is None else depth,
            "kind": np.full(n, EventKind.SPAN),
            "channel": np.zeros(n),
        },
        origin_wall_ns=0,
        labels=["x", "y"],
        channels=["c"],
        threads=[Thread("t", 0, 1, "thread")],
        processes=[Process(1, "h", "p", 0)],
    )


def test_make_lane_gives_zero_length_spans_a_nanosecond() -> None:
    trace = _one_thread(np.array([5, 10]), np.array([5, 20]))
    lane = make_lane(trace, np.array([1, 0]))
    assert lane.start.tolist() == [5, 10] and lane.end.tolist() == [6, 20]
