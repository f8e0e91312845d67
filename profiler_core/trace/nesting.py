"""Nesting depth of imported spans: how many spans on the same thread still enclose each one
(a Chrome trace gives no depth; a .pvti writes its own).

Spans are taken in (thread, start, longest first) order against a stack of open ends, as
chrome://tracing stacks them. When the spans of every thread nest properly (each inside
all spans open at its start, the usual case), that depth is a count -- spans begun before
it minus spans ended by its start -- and is found with numpy over all events at once.
Spans that cross (one starts inside another and ends after it) take the stack walk.
For the columns the importer makes (int32 threads, int64 times), the walk order of a trace
written in time order per thread is a counting sort of its threads, and the stack walk is
one C pass over the columns (``_walk``; issue 42: ~2.5 s of numpy sorts at 10M events
became ~0.1 s); other columns take numpy's sorts and counts, which give the same.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from profiler_core.native import native_module

_walk = native_module("profiler_core.trace._walk", "the trace's nesting walk is a C module")

#: events counted at once (whole threads): the counting's temporaries (~300 bytes an
#: event, ~20 MB) stay bounded by this, not by the trace
BATCH = 1 << 16


def walk_order(
    thread: np.ndarray, start: np.ndarray, end: np.ndarray, *, negate_end: bool = False
) -> np.ndarray:
    """The order the stack walk takes events in: by thread, start, longest first (int32
    when it fits, half the index memory). Among equal starts the longest ends last, so
    ``-end`` orders them as ``start - end`` does; ``negate_end`` (the caller's own column,
    read by no one else meanwhile) negates ``end`` where it is for the sort and back, so
    no key column is made beside the columns (80 MB at 10M events)."""
    if _walk_dtypes(thread, start, end):
        order = np.empty(len(thread), np.int32 if len(thread) < 2**31 else np.int64)
        if _walk.thread_order(thread, start, end, order):  # each thread in order already
            return order
    if negate_end:
        np.negative(end, out=end)
        try:
            order = np.lexsort((end, start, thread))
        finally:
            np.negative(end, out=end)
    else:
        order = np.lexsort((start - end, start, thread))  # start - end: longest first
    return order.astype(np.int32) if len(order) < 2**31 else order


def nesting_depths(
    thread: np.ndarray, start: np.ndarray, end: np.ndarray, *, in_walk_order: bool = False
) -> np.ndarray:
    """Depth of each event: how many earlier-starting events on its thread still enclose it.
    ``in_walk_order``: the events are in ``walk_order`` already, so no index is made (the
    depths of events so sorted never decrease among ties, so they stay sorted by (thread,
    start, depth) too)."""
    order = None if in_walk_order else walk_order(thread, start, end)
    if _walk_dtypes(thread, start, end):
        depth = np.zeros(len(thread), np.int32)
        if order is None:
            _walk.stack_depths(thread, start, end, depth)
        else:
            walked = np.empty(len(thread), np.int32)
            _walk.stack_depths(thread[order], start[order], end[order], walked)
            depth[order] = walked
        return depth
    depth = np.zeros(len(thread), np.int32)
    batches = _thread_batches(thread if order is None else thread[order])
    if order is None:  # a long thread is cut where its walk's stack is empty
        batches = [b for batch in batches for b in _quiet_cuts(start, end, batch)]
    for batch in batches:
        part = batch if order is None else order[batch]
        counted = _counted_depths(thread, start, end, part)
        if counted is None:  # some spans cross: walk this batch's threads
            depth[part] = stacked_depths(thread, start, end, part)[part]
        else:
            depth[part] = counted
    return depth


def _walk_dtypes(thread: np.ndarray, start: np.ndarray, end: np.ndarray) -> bool:
    """Columns the C passes read as they are: int32 threads, int64 times, contiguous."""
    return (
        thread.dtype == np.int32
        and start.dtype == np.int64
        and end.dtype == np.int64
        and all(c.ndim == 1 and c.flags.c_contiguous for c in (thread, start, end))
        and len(thread) == len(start) == len(end)
    )


def _thread_batches(sorted_thread: np.ndarray) -> list[slice]:
    """Slices of about BATCH events that cut only between threads."""
    n = len(sorted_thread)
    bounds = np.flatnonzero(sorted_thread[1:] != sorted_thread[:-1]) + 1
    if not len(bounds):  # one thread
        return [slice(0, n)] if n else []
    wanted = np.arange(BATCH, n, BATCH)
    cuts = np.unique(bounds[np.minimum(np.searchsorted(bounds, wanted), len(bounds) - 1)])
    edges = [0, *(int(c) for c in cuts if 0 < c < n), n]
    return [slice(a, b) for a, b in pairwise(edges) if b > a]


def _quiet_cuts(start: np.ndarray, end: np.ndarray, batch: slice) -> list[slice]:
    """``batch`` (whole threads, in walk order) cut into parts of about BATCH events where
    every event before the cut has ended before the next one starts, so no span is open
    across a cut and each part's depths are its own. A batch of several threads, or one
    thread with no such point, stays whole."""
    a, b = batch.start, batch.stop
    if b - a <= 2 * BATCH:
        return [batch]
    quiet = []  # i such that every event a..i-1 ends before start[i]
    reach = np.iinfo(np.int64).min
    for x in range(a, b, _REACH_BLOCK):  # the running end a block at a time: bounded memory
        y = min(x + _REACH_BLOCK, b)
        ends = np.maximum.accumulate(end[x:y])
        np.maximum(ends, reach, out=ends)
        if x > a and reach < start[x]:
            quiet.append(np.array([x], np.int64))
        quiet.append(np.flatnonzero(ends[:-1] < start[x + 1 : y]) + (x + 1))
        reach = int(ends[-1])
    points = np.concatenate(quiet)
    if not len(points):
        return [batch]
    wanted = np.arange(a + BATCH, b, BATCH)
    picked = np.unique(points[np.minimum(np.searchsorted(points, wanted), len(points) - 1)])
    edges = [a, *picked.tolist(), b]
    return [slice(lo, hi) for lo, hi in pairwise(edges) if hi > lo]


_REACH_BLOCK = 1 << 20


def stacked_depths(
    thread: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    order: np.ndarray | slice | None = None,
) -> np.ndarray:
    """The stack walk, one event at a time (any spans, crossing or not), over the events
    ``order`` lists or slices (all by default); depths by event index (0 for events not
    listed)."""
    if order is None:
        order = walk_order(thread, start, end)
    depth = np.zeros(len(thread), np.int32)
    threads, starts, ends = thread[order].tolist(), start[order].tolist(), end[order].tolist()
    walked = np.zeros(len(threads), np.int32)
    stack: list[int] = []
    current = None
    for k, (t, s, e) in enumerate(zip(threads, starts, ends, strict=True)):
        if t != current:
            current, stack = t, []
        while stack and stack[-1] <= s and not (stack[-1] == s and e == s):
            stack.pop()
        walked[k] = len(stack)
        if e > s:
            stack.append(e)
    depth[order] = walked
    return depth


def _counted_depths(
    thread: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray | slice
) -> np.ndarray | None:
    """The stack walk's depths of the events ``order`` lists or slices (whole threads, in
    walk order), counted with numpy; None when some spans cross."""
    th, s, e = thread[order], start[order], end[order]
    n = len(th)
    if n == 0:
        return np.zeros(0, np.int32)
    pushed = e > s  # zero-length events (instants) enclose nothing
    s_rank, e_rank, span = _time_ranks(th, s, e)
    s_key, e_key = th.astype(np.int64) * span + s_rank, th.astype(np.int64) * span + e_rank
    ends = np.sort(e_key[pushed])
    first_of_thread = np.searchsorted(th, th, side="left")
    begun = np.cumsum(pushed) - pushed  # pushed spans before each event in the order
    begun = begun - (begun[first_of_thread] if n else 0)
    ended_by = np.searchsorted(ends, s_key, side="right")  # ended at or before its start
    ended_by -= np.searchsorted(ends, th.astype(np.int64) * span, side="left")
    depth = begun - ended_by
    # A zero-length event keeps the spans ending exactly at it, unless a span of its
    # thread starting there (taken before it) already closed them.
    zero = ~pushed
    if zero.any():
        ending_at = np.searchsorted(ends, s_key[zero], side="right") - np.searchsorted(
            ends, s_key[zero], side="left"
        )
        starts_here = np.sort(s_key[pushed])
        opened_here = np.searchsorted(starts_here, s_key[zero], side="right") > np.searchsorted(
            starts_here, s_key[zero], side="left"
        )
        depth[zero] += np.where(opened_here, 0, ending_at)
    if not _nested(th, s_rank, e_rank, pushed, depth):
        return None
    return depth.astype(np.int32)


def _nested(
    th: np.ndarray, s_rank: np.ndarray, e_rank: np.ndarray, pushed: np.ndarray, depth: np.ndarray
) -> bool:
    """Whether the pushed spans nest properly: walking opens and closes in time (closes
    first at a tie, inner spans closing first), each span closes when it is the innermost
    open one, i.e. with exactly its depth + 1 spans open."""
    idx = np.flatnonzero(pushed)
    m = len(idx)
    if m == 0:
        return True
    position = idx.astype(np.int64)  # order position: later = inner at a tie
    # bracket events: (thread, time, 0 close / 1 open, tie order)
    b_thread = np.concatenate([th[idx], th[idx]])
    b_time = np.concatenate([e_rank[idx], s_rank[idx]])
    b_type = np.concatenate([np.zeros(m, np.int8), np.ones(m, np.int8)])
    b_tie = np.concatenate([-position, position])
    walk = np.lexsort((b_tie, b_type, b_time, b_thread))
    step = np.where(b_type[walk] == 1, 1, -1)
    level = np.cumsum(step)
    first = np.searchsorted(b_thread[walk], b_thread[walk], side="left")
    level_before = level - step - (level[first] - step[first])
    closes = b_type[walk] == 0
    which = walk[closes]  # index into idx of each close
    return bool(np.array_equal(level_before[closes], depth[idx[which]] + 1))


def _time_ranks(th: np.ndarray, s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Times as small non-negative ints keeping their order, and a span such that
    thread * span + time sorts by (thread, time) within int64: the times less the first
    one when that fits (no sort), else their ranks among all times."""
    low = int(min(s.min(), e.min()))
    high = int(max(s.max(), e.max()))
    threads = int(th.max()) + 1 if len(th) else 1
    if (high - low + 2) * threads < 2**62:
        return s - low, e - low, high - low + 2
    times, rank = np.unique(np.concatenate([s, e]), return_inverse=True)
    n = len(s)
    return rank[:n].astype(np.int64), rank[n:].astype(np.int64), len(times) + 1
