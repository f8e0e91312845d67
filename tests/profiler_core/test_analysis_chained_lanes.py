"""A lane chained over pieces draws, window by window, what the one lane of the joined
spans draws; parts that are not one after the other are refused (None)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from profiler_core.analysis.chained_lanes import chain_lanes
from profiler_core.analysis.trace_lanes import Lane, lane_window


def _lane(start: list[int], end: list[int], first: int = 0) -> Lane:
    s, e = np.array(start, np.int64), np.array(end, np.int64)
    return Lane(s, e, e, first)


def test_a_chain_draws_what_the_joined_lane_draws():
    rng = np.random.default_rng(3)
    gaps = rng.integers(0, 40, 3000)
    lengths = rng.integers(1, 30, 3000)
    start = np.cumsum(gaps + np.r_[0, lengths[:-1]])
    end = start + lengths
    cuts = [0, 1, 700, 701, 2200, 3000]  # parts of 1 .. 1500 spans
    parts = [_lane(start[a:b].tolist(), end[a:b].tolist(), 100 * i)
             for i, (a, b) in enumerate(pairwise(cuts))]  # fmt: skip
    chain = chain_lanes(parts, range(len(parts)))
    joined = _lane(start.tolist(), end.tolist())  # events 0..n-1: chain positions
    assert chain is not None and len(chain) == len(joined)
    lo, hi = int(start[0]), int(end[-1])
    for t0, t1, width in [(lo, hi, 50), (lo, hi, 4000), (lo + 500, lo + 9000, 333),
                          (hi - 100, hi + 100, 7), (lo - 50, lo + 3, 10)]:  # fmt: skip
        a, b = lane_window(chain, t0, t1, width), lane_window(joined, t0, t1, width)
        for field in ("start", "end", "event", "count"):
            assert getattr(a, field).tolist() == getattr(b, field).tolist(), (t0, t1, width)
    # A chain position names its part's piece and that part's own event index.
    piece, event = chain.locate(np.array([0, 1, 2, 700, 2999]))
    assert piece.tolist() == [0, 1, 1, 2, 4]
    assert event.tolist() == [0, 100, 101, 200, 400 + 799]


def test_parts_out_of_order_or_overlapping_are_not_chained():
    early, late = _lane([0, 10], [5, 15]), _lane([20, 30], [25, 35])
    assert chain_lanes([late, early], [0, 1]) is None  # the later part first
    assert chain_lanes([early, _lane([12], [13])], [0, 1]) is None  # ends inside the one before
    # Starting inside the one before but ending after it keeps both orders: that chains.
    assert chain_lanes([early, _lane([12], [40])], [0, 1]) is not None
    crossing = _lane([0, 1], [10, 5])
    crossing = Lane(crossing.start, crossing.end, np.sort(crossing.end), 0, None, np.array([0, 0]))
    assert chain_lanes([crossing], [0]) is None  # spans of one part overlap
    assert chain_lanes([early, _lane([], []), late], [0, 1, 2]) is not None  # empty parts skip
