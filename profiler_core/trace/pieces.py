"""A growing trace kept as sorted pieces (a live recording's events, poll after poll).

Each poll's events become one piece, sorted by (thread, start, depth) like a Trace; the
newest pieces are merged whenever the one before them is no bigger than they are, so
pieces shrink geometrically (O(log n) of them) and an event is copied O(log n) times over
a whole recording -- a poll costs its own events, amortised, not the recording so far.

A snapshot's event numbers are those of the whole trace the pieces make (``whole()``):
``merged_index`` finds an event's number from its piece without building that trace.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from profiler_core.heap import release_free_memory
from profiler_core.trace.build import EVENT_FIELDS, build_trace
from profiler_core.trace.model import Trace

#: merge the newest pieces while the one before them is at most this many times their size
#: (1: a binary counter -- half the polls merge nothing, an event is copied log2(n) times)
MERGE_RATIO = 1
#: a merge of at least this many events hands the heap's free pages back once its parts are
#: gone (the parts' columns are many mid-sized arrays that glibc would keep for reuse)
TRIM_EVENTS = 1 << 20


def _tables(trace: Trace) -> dict:
    return {
        "origin_wall_ns": trace.origin_wall_ns,
        "labels": trace.labels,
        "channels": trace.channels,
        "threads": trace.threads,
        "processes": trace.processes,
    }


def join_pieces(pieces: Sequence[Trace], tables: Trace, **extra: object) -> Trace:
    """One Trace of ``pieces`` (in order) with ``tables``'s names: a stable sort of their
    concatenation, so full ties keep the earlier piece first (as ``merged_index`` counts)."""
    columns = {k: np.concatenate([getattr(p, k) for p in pieces]) for k in EVENT_FIELDS}
    args: dict[int, str] = {}
    offset = 0
    for piece in pieces:
        args.update({offset + i: text for i, text in piece.args.items()})
        offset += len(piece)
    return build_trace(columns, **_tables(tables), args=args, in_place=True, **extra)  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False)
class PiecedTrace:
    """A snapshot of a growing trace: its sorted pieces, the last of which holds the spans
    still open and carries the newest names, series and heatmaps (``tables``)."""

    pieces: tuple[Trace, ...]

    @property
    def tables(self) -> Trace:
        return self.pieces[-1]

    def __len__(self) -> int:
        return sum(len(p) for p in self.pieces)

    def whole(self) -> Trace:
        """The one Trace these pieces make (what opening the file at this point would give)."""
        t = self.tables
        return join_pieces(
            self.pieces,
            t,
            series=t.series,
            series_units=t.series_units,
            heatmaps=t.heatmaps,
            warnings=t.warnings,
        )


class _Merge:
    """One merge running beside the poller: ``parts`` (pieces[first:first + len(parts)])
    joined in a thread of its own, swapped in by a later ``append`` once it is done."""

    def __init__(
        self, first: int, parts: tuple[Trace, ...], join: Callable[[tuple[Trace, ...]], Trace]
    ) -> None:
        self.first, self.parts = first, parts
        self._result: Trace | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(join,), name="pvti-merge")
        self.thread.daemon = True
        self.thread.start()

    def _run(self, join: Callable[[tuple[Trace, ...]], Trace]) -> None:
        try:
            self._result = join(self.parts)
        except BaseException as error:  # handed to the poller, which raises it
            self._error = error

    def result(self) -> Trace:
        self.thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result


@dataclass
class TracePieces:
    """The sorted pieces of a growing trace, and how many events each append copied."""

    pieces: list[Trace] = field(default_factory=list)
    #: events written into new columns, all appends so far (sorting a poll's events and
    #: every merge count each event they write once): the work the pieces cost
    copied: int = 0
    last_copied: int = 0  # of the latest append (a background merge counts when swapped in)
    #: merge in a thread beside the caller instead of within ``append``, so that no poll
    #: waits for a big merge; the merged piece replaces its parts at a later append
    background: bool = False
    #: called with each new and each merged piece in the thread that made it (e.g. to work
    #: out, off the window's thread, what a view will ask of it)
    prepare: Callable[[Trace], None] | None = None
    _merge: _Merge | None = None

    def __len__(self) -> int:
        return sum(len(p) for p in self.pieces)

    def append(self, columns: dict[str, np.ndarray], tables: Trace, args: dict[int, str]) -> None:
        """Add one poll's events (unsorted columns, ``args`` keyed by their position in
        ``columns``) named by ``tables``'s labels, channels and threads."""
        copied = self._swap_in(wait=False)
        n = len(columns["start_ns"])
        if n:
            piece = build_trace(dict(columns), **_tables(tables), args=args)  # type: ignore[arg-type]
            if self.prepare is not None:
                self.prepare(piece)
            self.pieces = [*self.pieces, piece]
            copied += n + self._merge_due(tables)
        self.copied += copied
        self.last_copied = copied

    def finish(self) -> None:
        """Wait for a merge running beside the caller and swap it in."""
        self.copied += self._swap_in(wait=True)

    def _merge_due(self, tables: Trace) -> int:
        """Merge the newest pieces while the one before them is no bigger (one merge at a
        time); the events copied now (0 when the merge runs beside the caller)."""
        if self._merge is not None:
            return 0
        first, newer = len(self.pieces) - 1, len(self.pieces[-1])
        while first > 0 and len(self.pieces[first - 1]) <= MERGE_RATIO * newer:
            first -= 1
            newer += len(self.pieces[first])
        if first == len(self.pieces) - 1:
            return 0
        parts = tuple(self.pieces[first:])
        join = lambda parts: self._joined(parts, tables)  # noqa: E731
        if self.background:
            self._merge = _Merge(first, parts, join)
            return 0
        self.pieces = [*self.pieces[:first], join(parts)]
        return newer

    def _joined(self, parts: tuple[Trace, ...], tables: Trace) -> Trace:
        merged = join_pieces(parts, tables)
        if self.prepare is not None:
            self.prepare(merged)
        return merged

    def _swap_in(self, *, wait: bool) -> int:
        merge = self._merge
        if merge is None or (merge.thread.is_alive() and not wait):
            return 0
        self._merge = None
        merged = merge.result()
        end = merge.first + len(merge.parts)
        assert all(a is b for a, b in zip(self.pieces[merge.first : end], merge.parts, strict=True))
        self.pieces = [*self.pieces[: merge.first], merged, *self.pieces[end:]]
        if len(merged) >= TRIM_EVENTS:  # when the last view of the parts lets them go
            weakref.finalize(merge.parts[0], release_free_memory)
        return len(merged)


def merged_index(pieces: Sequence[Trace], piece: np.ndarray, local: np.ndarray) -> np.ndarray:
    """The number in ``join_pieces(pieces)`` of event ``local[i]`` of ``pieces[piece[i]]``:
    its place in its piece plus, in every other piece, the events sorting before it by
    (thread, start, depth) -- ties count when that piece comes earlier."""
    piece = np.asarray(piece, np.int64)
    local = np.asarray(local, np.int64)
    out = local.copy()
    if not len(out):
        return out
    thread = np.empty(len(out), np.int64)
    start = np.empty(len(out), np.int64)
    depth = np.empty(len(out), np.int64)
    for p in np.unique(piece).tolist():
        here = piece == p
        at = local[here]
        thread[here] = pieces[p].thread[at]
        start[here] = pieces[p].start_ns[at]
        depth[here] = pieces[p].depth[at]
    for q, other in enumerate(pieces):
        ask = piece != q
        if not ask.any() or not len(other):
            continue
        out[ask] += _events_before(other, thread[ask], start[ask], depth[ask], piece[ask] > q)
    return out


def _events_before(
    trace: Trace, thread: np.ndarray, start: np.ndarray, depth: np.ndarray, ties: np.ndarray
) -> np.ndarray:
    """Per query, the events of ``trace`` sorting before (thread, start, depth); with
    ``ties`` those equal to it too."""
    count = np.zeros(len(thread), np.int64)
    offsets = trace.thread_offsets
    for t in np.unique(thread).tolist():
        here = np.flatnonzero(thread == t)
        if t >= len(offsets) - 1:  # a thread this piece does not know: all its events first
            count[here] = len(trace)
            continue
        lo, hi = int(offsets[t]), int(offsets[t + 1])
        starts = trace.start_ns[lo:hi]
        s = start[here]
        left = np.searchsorted(starts, s, side="left")
        right = np.searchsorted(starts, s, side="right")
        count[here] = lo + left
        for k in np.flatnonzero(right > left).tolist():  # same start: order by depth
            tied = trace.depth[lo + left[k] : lo + right[k]]
            side = "right" if ties[here[k]] else "left"
            count[here[k]] += int(np.searchsorted(tied, depth[here[k]], side=side))
    return count
