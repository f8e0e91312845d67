"""Nesting depths counted with numpy equal the stack walk (chrome://tracing's way) on any
spans: nested, crossing, zero-length, tied, over several threads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiler_core.trace.nesting import _counted_depths, nesting_depths, stacked_depths
from tests.fuzzing import DERANDOMIZE, examples

spans = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 12), st.integers(0, 6)), max_size=30)


def _columns(rows: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    thread = np.array([r[0] for r in rows], np.int32)
    start = np.array([r[1] for r in rows], np.int64)
    end = start + np.array([r[2] for r in rows], np.int64)
    return thread, start, end


@settings(max_examples=examples(400), derandomize=DERANDOMIZE, deadline=None)
@given(spans)
def test_counted_depths_equal_the_stack_walk(rows):
    thread, start, end = _columns(rows)
    assert (
        nesting_depths(thread, start, end).tolist() == stacked_depths(thread, start, end).tolist()
    )


@settings(max_examples=examples(200), derandomize=DERANDOMIZE, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 5)), max_size=12))
def test_properly_nested_spans_are_counted_not_walked(shape):
    # spans built nested by construction: each child inside its parent, siblings apart
    rows, t = [], 0
    for thread, children in shape:
        rows.append((thread, t, 10 * children + 10))
        rows += [(thread, t + 1 + 10 * c, 5) for c in range(children)]
        rows.append((thread, t + 3, 0))  # an instant inside
        t += 10 * children + 20
    thread, start, end = _columns(rows)
    order = np.lexsort((-(end - start), start, thread))
    counted = _counted_depths(thread, start, end, order)
    assert counted is not None
    assert counted.tolist() == stacked_depths(thread, start, end)[order].tolist()


def test_hand_depths():
    # outer [0, 10) holds a [1, 4) holding b [2, 3), and c [4, 9); the instant at 4 is
    # inside c (which starts there; a ended there)
    thread = np.zeros(5, np.int32)
    start = np.array([0, 1, 2, 4, 4], np.int64)
    end = np.array([10, 4, 3, 4, 9], np.int64)
    assert nesting_depths(thread, start, end).tolist() == [0, 1, 2, 2, 1]


def test_batches_cut_between_threads_and_give_the_same_depths(monkeypatch):
    import profiler_core.trace.nesting as nesting

    rng = np.random.default_rng(3)
    thread = rng.integers(0, 9, 400).astype(np.int32)
    start = rng.integers(0, 50, 400).astype(np.int64)
    end = start + rng.integers(0, 5, 400)
    whole = nesting_depths(thread, start, end)
    monkeypatch.setattr(nesting, "BATCH", 37)
    batches = nesting._thread_batches(np.sort(thread))
    assert len(batches) > 3
    assert nesting_depths(thread, start, end).tolist() == whole.tolist()
    assert whole.tolist() == stacked_depths(thread, start, end).tolist()


@settings(max_examples=examples(300), derandomize=DERANDOMIZE, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 60), st.integers(0, 6)), max_size=80),
    st.integers(1, 6),
    st.integers(1, 7),
)
def test_long_threads_cut_where_nothing_is_open_give_the_stack_walks_depths(rows, batch, block):
    # A thread longer than two batches is cut inside where its walk's stack is empty (the
    # running end a block at a time): the depths stay the walk's, on any spans.
    import profiler_core.trace.nesting as nesting

    thread, start, end = _columns(rows)
    order = nesting.walk_order(thread, start, end)
    thread, start, end = thread[order], start[order], end[order]
    walked = stacked_depths(thread, start, end).tolist()
    saved = nesting.BATCH, nesting._REACH_BLOCK
    nesting.BATCH, nesting._REACH_BLOCK = batch, block
    try:
        cuts = nesting._quiet_cuts(start, end, slice(0, len(start)))
        got = nesting_depths(thread, start, end, in_walk_order=True).tolist()
    finally:
        nesting.BATCH, nesting._REACH_BLOCK = saved
    assert got == walked
    for part in cuts[1:]:  # nothing before a cut is still open at it
        assert end[: part.start].max() < start[part.start]


def test_a_long_thread_of_siblings_is_cut_into_batches(monkeypatch):
    import profiler_core.trace.nesting as nesting

    monkeypatch.setattr(nesting, "BATCH", 10)
    start = np.arange(0, 1000, 10, dtype=np.int64)  # 100 siblings, each [10k, 10k + 5)
    end = start + 5
    cuts = nesting._quiet_cuts(start, end, slice(0, 100))
    assert [c.start for c in cuts] == list(range(0, 100, 10))


def test_one_thread_longer_than_a_batch(monkeypatch):
    # A trace of one thread with more events than a batch raised IndexError (an empty list
    # of thread bounds was indexed): 300,000 siblings, each holding an instant.
    import profiler_core.trace.nesting as nesting

    n = 300_000
    start = np.repeat(np.arange(n // 2, dtype=np.int64) * 10, 2)
    end = start + np.tile(np.array([5, 0], np.int64), n // 2)  # span [10k, 10k+5), instant
    expected = np.tile(np.array([0, 1], np.int32), n // 2)  # by hand: each instant inside
    assert nesting_depths(np.zeros(n, np.int32), start, end).tolist() == expected.tolist()
    assert len(nesting._quiet_cuts(start, end, slice(0, n))) > 1
    got = nesting_depths(np.zeros(n, np.int32), start, end, in_walk_order=True)
    assert got.tolist() == expected.tolist()


@settings(max_examples=examples(300), derandomize=DERANDOMIZE, deadline=None)
@given(spans)
def test_the_walk_order_sorted_on_the_negated_end_is_thread_start_longest_first(rows):
    # the importer's sort negates its own end column in place (no key column): the order
    # is Python's sort by (thread, start, longest first, file order), and end comes back
    import profiler_core.trace.nesting as nesting

    thread, start, end = _columns(rows)
    kept = end.copy()
    want = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1], -rows[i][2], i))
    assert nesting.walk_order(thread, start, end, negate_end=True).tolist() == want
    assert nesting.walk_order(thread, start, end).tolist() == want
    assert end.tolist() == kept.tolist()


@settings(max_examples=examples(400), derandomize=DERANDOMIZE, deadline=None)
@given(spans, st.booleans())
def test_the_c_walk_order_and_depths_equal_numpys(rows, presorted):
    from profiler_core.trace import nesting

    thread, start, end = _columns(rows)
    if presorted:  # written in time order per thread, threads interleaved: the counting sort
        by_time = np.lexsort((-(end - start), start))
        thread, start, end = thread[by_time], start[by_time], end[by_time]
    expected = np.lexsort((-end, start, thread))
    assert nesting.walk_order(thread, start, end).tolist() == expected.tolist()
    assert nesting.walk_order(thread, start, end, negate_end=True).tolist() == expected.tolist()
    c_depths = nesting.nesting_depths(thread, start, end)
    wide = thread.astype(np.int64)  # columns the C passes do not take: numpy's path
    numpy_depths = nesting.nesting_depths(wide, start, end)
    assert nesting.walk_order(wide, start, end).tolist() == expected.tolist()
    assert c_depths.tolist() == numpy_depths.tolist()
    assert c_depths.tolist() == stacked_depths(thread, start, end).tolist()


def test_the_c_walk_takes_a_presorted_trace_by_counting_its_threads():
    from profiler_core.trace import nesting

    thread = np.array([1, 0, 1, 0], np.int32)
    start = np.array([0, 0, 5, 1], np.int64)
    end = np.array([9, 4, 6, 2], np.int64)
    order = np.empty(4, np.int32)
    assert nesting._walk.thread_order(thread, start, end, order)
    assert order.tolist() == [1, 3, 0, 2]
    start[2] = -1  # thread 1 out of time order: numpy sorts it
    assert not nesting._walk.thread_order(thread, start, end, order)
    for bad in (np.zeros(3, np.int64), np.zeros(4, np.int64)):  # length, dtype
        with pytest.raises((TypeError, ValueError)):
            nesting._walk.stack_depths(thread, start, end, bad)
