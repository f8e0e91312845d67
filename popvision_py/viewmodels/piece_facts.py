"""What the live System Trace works out about one sorted piece of a growing trace (its
(thread, depth) pairs, lanes, instants, time range), once per piece: a piece lives on
through many snapshots, and ``prepare_piece`` lets the thread that made it (the recorder's
worker, or the merge beside it) work the usual facts out before the window draws it."""

from __future__ import annotations

from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

import numpy as np

from profiler_core.analysis.trace_lanes import ThreadLanes, thread_depth_lanes
from profiler_core.formats.pvti import EventKind
from profiler_core.trace.model import Trace

ChannelKey = tuple[int, ...] | None  # the shown channels (None: all)


@dataclass
class _PieceFacts:
    lanes: dict[tuple[int, ChannelKey], ThreadLanes] = field(default_factory=dict)
    pairs: dict[ChannelKey, np.ndarray] = field(default_factory=dict)  # (thread << 32) | depth
    instants: dict[ChannelKey, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    time_range: tuple[int, int] | None = None
    has_instants: bool | None = None


FACTS: WeakKeyDictionary[Trace, _PieceFacts] = WeakKeyDictionary()


def _facts(piece: Trace) -> _PieceFacts:
    facts = FACTS.get(piece)
    if facts is None:
        facts = FACTS[piece] = _PieceFacts()
    return facts


def _kept(piece: Trace, channels: ChannelKey) -> np.ndarray:
    """Which of ``piece``'s events the channel filter shows."""
    if channels is None:
        return np.ones(len(piece), bool)
    return np.isin(piece.channel, np.array(channels, np.int64))


def piece_pairs(piece: Trace, channels: ChannelKey) -> np.ndarray:
    """The (thread, depth) pairs of ``piece``'s shown spans, as thread << 32 | depth."""
    facts = _facts(piece)
    pairs = facts.pairs.get(channels)
    if pairs is None:
        keep = (piece.kind != EventKind.INSTANT) & _kept(piece, channels)
        thread = piece.thread[keep].astype(np.int64)
        depth = piece.depth[keep].astype(np.int64) & 0xFFFFFFFF
        deepest = int(depth.max()) + 1 if len(depth) else 1
        if len(piece.threads) * deepest <= 1 << 22:  # counting beats sorting a big piece
            seen = np.flatnonzero(np.bincount(thread * deepest + depth))
            pairs = ((seen // deepest) << 32) | (seen % deepest)
        else:
            pairs = np.unique((thread << 32) | depth)
        facts.pairs[channels] = pairs
    return pairs


def piece_lanes(piece: Trace, thread: int, channels: ChannelKey) -> ThreadLanes:
    """``thread``'s lanes in ``piece`` (none for a thread that began after it was read)."""
    facts = _facts(piece)
    lanes = facts.lanes.get((thread, channels))
    if lanes is None:
        if thread < len(piece.threads):
            shown = None if channels is None else list(channels)
            lanes = thread_depth_lanes(piece, thread, shown)
        else:
            lanes = ThreadLanes([], np.zeros(0, np.int64))
        facts.lanes[(thread, channels)] = lanes
    return lanes


def piece_instants(piece: Trace, channels: ChannelKey) -> tuple[np.ndarray, np.ndarray]:
    """``piece``'s shown instants in time order: (times, event index in the piece)."""
    facts = _facts(piece)
    found = facts.instants.get(channels)
    if found is None:
        events = np.flatnonzero((piece.kind == EventKind.INSTANT) & _kept(piece, channels))
        events = events[np.argsort(piece.start_ns[events], kind="stable")]
        found = facts.instants[channels] = (piece.start_ns[events], events)
    return found


def piece_time_range(piece: Trace) -> tuple[int, int] | None:
    if not len(piece):
        return None
    facts = _facts(piece)
    if facts.time_range is None:
        facts.time_range = piece.time_range()
    return facts.time_range


def piece_has_instants(piece: Trace) -> bool:
    facts = _facts(piece)
    if facts.has_instants is None:
        facts.has_instants = bool((piece.kind == EventKind.INSTANT).any())
    return facts.has_instants


def prepare_piece(piece: Trace) -> None:
    """Work out what every snapshot will ask of ``piece`` with all channels shown."""
    threads = np.unique(piece_pairs(piece, None) >> 32).tolist()
    for thread in threads:
        piece_lanes(piece, int(thread), None)
    piece_instants(piece, None)
    piece_time_range(piece)
    piece_has_instants(piece)
