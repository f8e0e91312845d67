"""One flame lane over the sorted pieces of a growing trace, without joining them.

A thread's lane at one depth holds spans that never overlap, so the spans each new piece
adds to it come after those already there: the pieces' lanes, in piece order, are the
lane. ``ChainedLane`` answers ``lane_window``'s questions (how many spans start before a
time, which span is at a position) by asking each part, so drawing a window costs the
pixels times the pieces, and a new piece costs nothing until it is drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from profiler_core.analysis.trace_lanes import AnyLane


@dataclass(frozen=True, eq=False)
class ChainedLane:
    """Lanes, one after the other in time: position k of the chain is position
    k - offsets[i] of part i. Its "events" are chain positions; ``locate`` says whose."""

    parts: tuple[AnyLane, ...]
    owners: np.ndarray  # int64: the piece each part belongs to
    offsets: np.ndarray  # int64, len(parts) + 1: where each part begins in the chain

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def started_before(self, keys: np.ndarray) -> np.ndarray:
        return sum((p.started_before(keys) for p in self.parts), np.zeros(len(keys), np.int64))

    def ended_by(self, keys: np.ndarray) -> np.ndarray:
        return sum((p.ended_by(keys) for p in self.parts), np.zeros(len(keys), np.int64))

    def _gather(
        self, pos: np.ndarray, take: Callable[[AnyLane, np.ndarray], np.ndarray]
    ) -> np.ndarray:
        """``take(part, positions in part)`` for chain positions ``pos``, part by part."""
        pos = np.asarray(pos, np.int64)
        part = np.searchsorted(self.offsets, pos, side="right") - 1
        out = np.zeros(len(pos), np.int64)
        for i in np.unique(part).tolist():
            here = part == i
            out[here] = take(self.parts[i], pos[here] - self.offsets[i])
        return out

    def start_at(self, pos: np.ndarray) -> np.ndarray:
        return self._gather(pos, lambda lane, local: lane.start_at(local))

    def end_at(self, pos: np.ndarray) -> np.ndarray:
        return self._gather(pos, lambda lane, local: lane.end_at(local))

    def reach_at(self, pos: np.ndarray) -> np.ndarray:
        return pos  # the chain's ends ascend: each span reaches furthest so far

    def event_at(self, pos: np.ndarray) -> np.ndarray:
        return np.asarray(pos, np.int64)

    def locate(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(piece, event index in that piece) of chain positions ``pos``."""
        part = np.searchsorted(self.offsets, np.asarray(pos, np.int64), side="right") - 1
        return self.owners[part], self._gather(pos, lambda lane, local: lane.event_at(local))


def chain_lanes(parts: Sequence[AnyLane], owners: Sequence[int]) -> ChainedLane | None:
    """The chain of ``parts`` (lanes of pieces ``owners``, in piece order), or None when
    their spans one after the other are not in start and in end order (a part starting or
    ending before the one before it, or a part whose own ends are out of order): such a
    lane must be built from the joined trace."""
    kept = [(lane, owner) for lane, owner in zip(parts, owners, strict=True) if len(lane)]
    last, first = np.array([-1]), np.array([0])
    for (a, _), (b, _) in pairwise(kept):
        if a.start_at(last)[0] > b.start_at(first)[0] or a.end_at(last)[0] > b.end_at(first)[0]:
            return None
    if any(lane.reach is not None for lane, _ in kept):
        return None
    sizes = [len(lane) for lane, _ in kept]
    return ChainedLane(
        tuple(lane for lane, _ in kept),
        np.array([owner for _, owner in kept], np.int64),
        np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
    )
