"""Flow arrows of a Chrome trace: which span each flow point binds to, and the arrows, as
Perfetto draws them.

Two forms exist. Flow events ``s`` (start), ``t`` (step) and ``f`` (end) sharing a
category and an id are the points of one flow; ``s`` and ``t`` bind to the innermost span
open on their thread at their time, ``f`` to the next span to begin there unless
``"bp": "e"`` binds it to the enclosing one. Newer traces mark spans themselves:
``bind_id`` with ``flow_out`` (a start), ``flow_in`` (an end) or both (a step).

A flow's points are taken in time order, not file order (Kineto writes a kernel's ``f``
before its launch's ``s``); at one time stamp a start comes before a step before an end.
Consecutive points are arrows; an end closes its flow. What cannot be drawn is counted:
points with no span to bind to, steps and ends with no start (or before it, or after
their flow ended); and said: flows with a start and no end, ids started again while
open, ids used in more than one category. All of it is numpy over the points at once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

START, STEP, END = 0, 1, 2  # the phases, in the order they sort at one time stamp
_PHASES = {"s": START, "t": STEP, "f": END}
_BOUND = object()  # the "category" of bind_id keys: their ids are a space of their own


@dataclass
class FlowPoints:
    """Flow points met while reading (a column per field, grown a point at a time),
    matched and bound to spans once every span is known."""

    keys: dict[tuple[Any, Any], int] = field(default_factory=dict)  # (cat, id) -> key
    key: list[int] = field(default_factory=list)
    phase: list[int] = field(default_factory=list)
    track: list[int] = field(default_factory=list)
    enclosing: list[bool] = field(default_factory=list)  # False: binds to the next span
    #: (key, row, phase) of spans carrying bind_id; rows as the builder numbered them
    bound: list[tuple[int, int, int]] = field(default_factory=list)

    def add(self, cat: str, id_: Any, ph: str, track: int, enclosing: bool) -> None:
        """A flow event ``ph`` (s, t or f); its time is kept by the caller, in this order."""
        phase = _PHASES[ph]
        self.key.append(self.keys.setdefault((cat, id_), len(self.keys)))
        self.phase.append(phase)
        self.track.append(track)
        self.enclosing.append(enclosing or phase != END)

    def extend(self, cats: list[str], ids: list[Any], phs: list[str], tracks: list[int],
               bp_e: list[bool]) -> None:  # fmt: skip
        """``add`` of many flow events at once (the fast path's runs)."""
        intern = self.keys.setdefault
        self.key += [intern(k, len(self.keys)) for k in zip(cats, ids, strict=True)]
        phases = [_PHASES[ph] for ph in phs]
        self.phase += phases
        self.track += tracks
        self.enclosing += [e or p != END for e, p in zip(bp_e, phases, strict=True)]

    def extend_keyed(self, key: np.ndarray, phase: np.ndarray, track: np.ndarray,
                     enclosing: np.ndarray) -> None:  # fmt: skip
        """Flow points whose keys are already interned (the native kernel's runs)."""
        self.key += key.tolist()
        self.phase += phase.tolist()
        self.track += track.tolist()
        self.enclosing += enclosing.tolist()

    def bind(self, bind_id: Any, row: int, flow_in: bool, flow_out: bool) -> None:
        """Span ``row`` carries ``bind_id``: a start (out), an end (in) or a step (both)."""
        if flow_in or flow_out:
            phase = STEP if flow_in and flow_out else START if flow_out else END
            self.bound.append((self.keys.setdefault((_BOUND, bind_id), len(self.keys)), row,
                               phase))  # fmt: skip

    def __len__(self) -> int:
        return len(self.key) + len(self.bound)

    def arrows(
        self, spans: SpanColumns, point_ns: np.ndarray, new_track: np.ndarray,
        moved: np.ndarray | None, skipped: Counter, notes: list[str],
    ) -> np.ndarray:  # fmt: skip
        """(F, 2) rows of the spans each arrow joins. ``point_ns`` is each flow event's time,
        ``new_track`` and ``moved`` renumber the builder's tracks and rows as the columns
        are now; what cannot be drawn is added to ``skipped`` and ``notes``."""
        key = np.array(self.key, np.int64)
        phase = np.array(self.phase, np.int8)
        row = np.zeros(0, np.int64)
        if self.key:
            thread = new_track[np.array(self.track, np.int64)]
            row = spans.bind(thread, point_ns, np.array(self.enclosing, bool))
            _count(skipped, "flow events with no span to bind to", row < 0)
        if self.bound:
            b_key, b_row, b_phase = (np.array(c, np.int64) for c in zip(*self.bound, strict=True))
            if moved is not None:
                b_row = moved[b_row]
            key = np.concatenate([key, b_key])
            row = np.concatenate([row, b_row])
            phase = np.concatenate([phase, b_phase.astype(np.int8)])
            point_ns = np.concatenate([point_ns, spans.start[b_row]])
        keep = row >= 0
        pairs = match(key[keep], phase[keep], point_ns[keep], row[keep], skipped, notes)
        reused = _ids_in_several_categories(self.keys)
        if reused:
            notes.append(f"{reused:,} flow id(s) are used in more than one category "
                         "(matched per category)")  # fmt: skip
        return pairs


@dataclass(frozen=True)
class SpanColumns:
    """The columns flow points bind to, sorted in walk order (thread, start, longest first)
    with each event's nesting depth; ``is_span`` marks spans (instants bind nothing)."""

    thread: np.ndarray
    start: np.ndarray
    end: np.ndarray
    depth: np.ndarray
    is_span: np.ndarray

    def bind(self, thread: np.ndarray, ts: np.ndarray, enclosing: np.ndarray) -> np.ndarray:
        """Each point's span: with ``enclosing``, the innermost span open on its thread at
        its time; else the first span to begin there at or after it. -1 for none."""
        out = np.full(len(ts), -1, np.int64)
        rows = np.flatnonzero(self.is_span)
        if not len(ts) or not len(rows):
            return out
        row_key, point_key = _thread_time_keys(self.thread[rows], self.start[rows], thread, ts)
        after = np.searchsorted(row_key, point_key, side="left")
        nxt = ~enclosing & (after < len(rows))
        nxt[nxt] &= self.thread[rows[after[nxt]]] == thread[nxt]
        out[nxt] = rows[after[nxt]]
        last = np.searchsorted(row_key, point_key, side="right") - 1  # latest start <= ts
        inner = enclosing & (last >= 0)
        inner[inner] &= self.thread[rows[last[inner]]] == thread[inner]
        candidate = rows[last[inner]]
        open_then = self.end[candidate] >= ts[inner]
        where = np.flatnonzero(inner)
        out[where[open_then]] = candidate[open_then]
        closed = ~open_then
        if closed.any():  # ended before the point: the innermost of its open ancestors
            out[where[closed]] = self._open_ancestor(candidate[closed], ts[where[closed]])
        return out

    def _open_ancestor(self, rows: np.ndarray, ts: np.ndarray) -> np.ndarray:
        """The deepest span enclosing each of ``rows`` (by the nesting walk: the last span
        pushed before it at each shallower depth) still open at ``ts``; -1 for none. Nested
        spans' ends grow outwards, so a binary search over the depths finds it."""
        threads = np.unique(self.thread[rows])  # only their threads' spans are looked at
        pushed = np.flatnonzero(
            self.is_span & (self.end > self.start) & np.isin(self.thread, threads)
        )
        n = len(self.start)
        by_depth = self.depth[pushed].astype(np.int64) * n + pushed  # sorted: pushed rises
        order = np.argsort(by_depth, kind="stable")
        by_depth, pushed = by_depth[order], pushed[order]
        low = np.full(len(rows), -1, np.int64)  # deepest depth known open (-1: none yet)
        high = self.depth[rows].astype(np.int64)  # shallowest known closed
        while True:
            todo = np.flatnonzero(high - low > 1)
            if not len(todo):
                break
            mid = (low[todo] + high[todo]) // 2
            at = np.searchsorted(by_depth, mid * n + rows[todo], side="right") - 1
            found = at >= 0
            found[found] &= by_depth[at[found]] // n == mid[found]
            ancestor = np.where(found, pushed[np.maximum(at, 0)], 0)
            is_open = found & (self.end[ancestor] >= ts[todo])
            is_open &= self.thread[ancestor] == self.thread[rows[todo]]
            low[todo] = np.where(is_open, mid, low[todo])
            high[todo] = np.where(is_open, high[todo], mid)
        out = np.full(len(rows), -1, np.int64)
        some = low >= 0
        at = np.searchsorted(by_depth, low[some] * n + rows[some], side="right") - 1
        out[some] = pushed[at]
        return out


def match(
    key: np.ndarray, phase: np.ndarray, ts: np.ndarray, row: np.ndarray, skipped: Counter,
    notes: list[str],
) -> np.ndarray:  # fmt: skip
    """Arrows between consecutive bound points of each flow, its points in time order
    (a start, then steps, up to its first end); what cannot be drawn counted or noted."""
    if not len(key):
        return np.zeros((0, 2), np.int64)
    order = np.lexsort((np.arange(len(key)), phase, ts, key))
    key, phase, row = key[order], phase[order], row[order]
    first_of_key = np.ones(len(key), bool)
    first_of_key[1:] = key[1:] != key[:-1]
    is_start, is_end = phase == START, phase == END
    # a segment: one flow (from its start) or the points of a key before its first start
    seg_first = is_start | first_of_key
    seg = np.cumsum(seg_first) - 1
    seg_begin = np.flatnonzero(seg_first)
    real = is_start[seg_begin]  # the segment is a flow: it begins with a start
    ends_before = np.cumsum(is_end) - is_end  # ends before each point, over all points
    ends_in_seg = ends_before - ends_before[seg_begin][seg]  # ... before it in its flow
    follower = ~is_start
    drawn = follower & real[seg] & (ends_in_seg == 0)
    at = np.flatnonzero(drawn)
    pairs = np.column_stack((row[at - 1], row[at]))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]  # a flow within one span draws nothing
    orphan = follower & ~real[seg]
    key_has_start = np.zeros(int(key.max()) + 1, bool)
    key_has_start[key[is_start]] = True
    _count(skipped, "flow steps or ends before their start", orphan & key_has_start[key])
    _count(skipped, "flow steps or ends with no start", orphan & ~key_has_start[key])
    _count(skipped, "flow steps or ends after their flow had ended",
           follower & real[seg] & (ends_in_seg > 0))  # fmt: skip
    seg_ends = np.add.reduceat(is_end.astype(np.int64), seg_begin)
    unended = real & (seg_ends == 0)
    restarted = unended.copy()  # a start of the same key follows: the id was started again
    restarted[:-1] &= ~first_of_key[seg_begin[1:]]
    restarted[-1] = False
    if restarted.any():
        notes.append(f"{int(restarted.sum()):,} flow id(s) started again before their flow ended")
    if (unended & ~restarted).any():
        notes.append(f"{int((unended & ~restarted).sum()):,} flow(s) have a start and no end")
    return pairs.astype(np.int64)


def _count(skipped: Counter, reason: str, mask: np.ndarray) -> None:
    n = int(mask.sum())
    if n:
        skipped[reason] += n


def _ids_in_several_categories(keys: dict[tuple[Any, Any], int]) -> int:
    seen: Counter = Counter(id_ for cat, id_ in keys if cat is not _BOUND)
    return sum(1 for n in seen.values() if n > 1)


def _thread_time_keys(
    row_thread: np.ndarray, row_time: np.ndarray, point_thread: np.ndarray, point_time: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """int64 keys ordering (thread, time) pairs of rows (sorted so already) and points alike:
    thread * span + time from the first, or the times' ranks where that would not fit."""
    times = np.concatenate([row_time, point_time])
    low, high = int(times.min()), int(times.max())
    threads = int(max(row_thread.max(), point_thread.max())) + 1
    span = high - low + 2
    if span * threads < 2**62:
        r = row_thread.astype(np.int64) * span + (row_time - low)
        return r, point_thread.astype(np.int64) * span + (point_time - low)
    _, rank = np.unique(times, return_inverse=True)
    span = int(rank.max()) + 2
    n = len(row_time)
    r = row_thread.astype(np.int64) * span + rank[:n]
    return r, point_thread.astype(np.int64) * span + rank[n:]
