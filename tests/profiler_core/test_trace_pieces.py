"""A growing trace kept as sorted pieces: what each poll copies stays bounded by the merge
schedule (O(n log n) over a recording, not O(n^2)), and the pieces join into, and number
their events as, the trace sorted at once."""

from __future__ import annotations

import gc
import math
import threading

import numpy as np

from profiler_core.trace import pieces as pieces_module
from profiler_core.trace.build import EVENT_FIELDS, build_trace
from profiler_core.trace.model import Process, Thread
from profiler_core.trace.pieces import PiecedTrace, TracePieces, merged_index

THREADS = 3


def _tables():
    threads = [Thread(f"t{t}", 0, t, "thread") for t in range(THREADS)]
    return build_trace(
        {k: np.zeros(0) for k in EVENT_FIELDS},
        origin_wall_ns=0,
        labels=["a", "b", "c"],
        channels=["ch"],
        threads=threads,
        processes=[Process(1, "host", "p", 0)],
    )


def _poll(rng: np.random.Generator, first_ns: int, n: int) -> dict[str, np.ndarray]:
    """``n`` events of one poll: mostly later than the last poll's, some begun before it
    (a parent span ending now), some tied on (thread, start)."""
    start = first_ns + rng.integers(0, 1000, n)
    start[: n // 10] -= rng.integers(0, 5000, n // 10)  # parents begun long ago
    start[n // 10 : n // 5] = first_ns  # ties on the start
    return {
        "start_ns": start,
        "end_ns": start + rng.integers(0, 50, n),
        "depth": rng.integers(0, 3, n),
        "thread": rng.integers(0, THREADS, n),
        "channel": np.zeros(n, np.int64),
        "label": rng.integers(0, 3, n),
        "kind": np.zeros(n, np.int64),
    }


def test_the_work_of_a_recording_grows_as_n_log_n_not_as_n_squared():
    rng = np.random.default_rng(1)
    pieces = TracePieces()
    tables = _tables()
    per_poll, polls = 500, 400
    copied = []
    for k in range(polls):
        pieces.append(_poll(rng, 1000 * k, per_poll), tables, {})
        copied.append(pieces.last_copied)
        # Pieces shrink geometrically: at most log2(n) + 1 of them at any time.
        assert len(pieces.pieces) <= math.log2(len(pieces)) + 1
    n = per_poll * polls
    assert len(pieces) == n
    # Each event is sorted once and merged at most log2(polls) times (a merge at least
    # doubles the piece that held it) ...
    bound = n * (1 + math.log2(polls))
    assert pieces.copied == sum(copied) <= bound
    # ... far below rebuilding every poll (what the recorder did: all events each poll).
    rebuild = sum(per_poll * (k + 1) for k in range(polls))
    assert pieces.copied < rebuild / 20
    # The k-th poll's work does not grow with k beyond the merge schedule: half the polls
    # copy only their own events, the median poll copies as much in the last quarter as
    # in the first, and at every point the work so far is within n log n of the events.
    assert sum(c == per_poll for c in copied) == polls // 2
    quarter = polls // 4
    assert np.median(copied[:quarter]) == np.median(copied[-quarter:]) <= 2 * per_poll
    so_far = np.cumsum(copied)
    for k in range(polls):
        events = per_poll * (k + 1)
        assert so_far[k] <= events * (1 + math.log2(k + 1))


def test_the_pieces_join_and_number_events_as_the_trace_sorted_at_once():
    rng = np.random.default_rng(2)
    pieces = TracePieces()
    tables = _tables()
    arrived = []
    for k in range(37):
        cols = _poll(rng, 700 * k, int(rng.integers(1, 300)))
        args = {0: f'{{"poll": {k}}}'}
        pieces.append(cols, tables, args)
        arrived.append(cols)
    snapshot = PiecedTrace((*pieces.pieces, tables))
    every = {k: np.concatenate([c[k] for c in arrived]) for k in EVENT_FIELDS}
    # The reference: numpy's stable lexsort of every event in arrival order.
    order = np.lexsort((every["depth"], every["start_ns"], every["thread"]))
    whole = snapshot.whole()
    for k in EVENT_FIELDS:
        assert whole_column(whole, k).tolist() == every[k][order].tolist()
    # Each poll's argument follows its first event to where the sort put it.
    firsts = np.cumsum([0] + [len(c["start_ns"]) for c in arrived[:-1]])
    moved = np.empty(len(order), np.int64)
    moved[order] = np.arange(len(order))
    assert whole.args == {int(moved[f]): f'{{"poll": {k}}}' for k, f in enumerate(firsts)}
    # merged_index: an event's number in the joined trace, found from its piece alone.
    for p, piece in enumerate(snapshot.pieces):
        local = np.arange(len(piece))
        numbers = merged_index(snapshot.pieces, np.full(len(piece), p), local)
        for k in ("start_ns", "end_ns", "thread", "depth", "label"):
            assert whole_column(whole, k)[numbers].tolist() == getattr(piece, k).tolist()
        assert len(set(numbers.tolist())) == len(piece)


def whole_column(trace, name: str) -> np.ndarray:
    return getattr(trace, name).astype(np.int64)


def test_merges_beside_the_poller_join_to_the_same_trace_and_prepare_every_piece():
    rng = np.random.default_rng(4)
    tables = _tables()
    polls = [_poll(rng, 900 * k, int(rng.integers(1, 2000))) for k in range(60)]
    prepared: list[tuple[int, str]] = []
    background = TracePieces(
        background=True,
        prepare=lambda p: prepared.append((len(p), threading.current_thread().name)),
    )
    inline = TracePieces()
    for cols in polls:
        background.append(cols, tables, {})
        inline.append(cols, tables, {})
    background.finish()
    n = sum(len(c["start_ns"]) for c in polls)
    assert len(background) == len(inline) == n
    a = PiecedTrace((*background.pieces, tables)).whole()
    b = PiecedTrace((*inline.pieces, tables)).whole()
    for k in EVENT_FIELDS:
        assert getattr(a, k).tolist() == getattr(b, k).tolist()
    # Every poll's piece was prepared by the poller, every merged one by the merge thread.
    by_poller = [size for size, thread in prepared if thread != "pvti-merge"]
    merged = [size for size, thread in prepared if thread == "pvti-merge"]
    assert by_poller == [len(c["start_ns"]) for c in polls]
    assert merged and background.copied == n + sum(merged) <= n * (2 + math.log2(len(polls)))


def test_a_big_merge_hands_the_heap_back_once_its_parts_are_let_go(monkeypatch):
    """The parts' many mid-sized columns would stay in glibc's free lists: once a merge of
    TRIM_EVENTS or more replaced them and nothing holds them any more, the free pages go
    back to the system (malloc_trim), once per such merge; small merges never trim."""
    trims = []
    monkeypatch.setattr(pieces_module, "release_free_memory", lambda: trims.append(1))
    monkeypatch.setattr(pieces_module, "TRIM_EVENTS", 64)
    rng = np.random.default_rng(3)
    pieces, tables = TracePieces(background=True), _tables()
    for k in range(2):  # two polls of 40: one merge of 80 events, beside the poller
        pieces.append(_poll(rng, 1000 * k, 40), tables, {})
    held = list(pieces.pieces)  # a view still showing the two parts
    pieces.finish()
    assert [len(p) for p in pieces.pieces] == [80]
    gc.collect()
    assert trims == []  # the parts are still shown
    del held
    gc.collect()
    assert trims == [1]
    small = TracePieces(background=True)
    for k in range(2):
        small.append(_poll(rng, 1000 * k, 10), tables, {})
    small.finish()
    gc.collect()
    assert trims == [1]  # a merge of 20 events is not worth a trim
