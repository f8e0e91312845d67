"""The Execution Trace's spans as drawn: a timeline batch with each span's step kind and
instance count beside it, and the keys that tell an operation's span from a step's."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.timeline import SpanBatch


def group_key(group: np.ndarray | int) -> np.ndarray | int:
    """Operation spans' keys are negative (below NO_KEY), so they never match a step id."""
    return -2 - group


def key_group(key: int) -> int:
    return -2 - key


@dataclass(frozen=True)
class DrawnSpans:
    """A batch with what the timeline does not keep: each span's kind and instance count."""

    batch: SpanBatch
    kind: np.ndarray  # int16 StepKind, or MERGED
    count: np.ndarray  # int64

    @staticmethod
    def empty() -> DrawnSpans:
        return DrawnSpans(SpanBatch.empty(), np.zeros(0, np.int16), np.zeros(0, np.int64))

    @staticmethod
    def part(
        lane: int,
        start: np.ndarray,
        end: np.ndarray,
        color: np.ndarray,
        key: np.ndarray,
        kind: np.ndarray,
        count: np.ndarray,
    ) -> DrawnSpans:
        batch = SpanBatch(
            lane=np.full(len(start), lane, np.int32),
            start=start.astype(np.float64),
            end=end.astype(np.float64),
            color=np.asarray(color, np.uint8).reshape(-1, 4),
            key=np.asarray(key, np.int64),
        )
        return DrawnSpans(batch, np.asarray(kind, np.int16), np.asarray(count, np.int64))

    @staticmethod
    def join(parts: list[DrawnSpans]) -> DrawnSpans:
        if not parts:
            return DrawnSpans.empty()
        batch = SpanBatch.concat([p.batch for p in parts])
        kind = np.concatenate([p.kind for p in parts]) if parts else np.zeros(0, np.int16)
        count = np.concatenate([p.count for p in parts]) if parts else np.zeros(0, np.int64)
        return DrawnSpans(batch, kind, count)
