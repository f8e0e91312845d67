"""Nesting depths counted with numpy equal the stack walk (chrome://tracing's way) on any
spans: nested, crossing, zero-length, tied, over several threads."""

from __future__ import annotations

import numpy as np
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
