"""Timelines of spans in lanes, as the Execution Trace and the System Trace draw them.

A timeline asks its source "which spans fall in [x0, x1) at this width" and gets a
``SpanBatch`` of numpy columns, already merged below a pixel by the analysis that answers.
Here are the Qt-free steps shared by both views: turning a batch into one colour per pixel
column of each lane (so a paint costs the pixels on screen, not the events), picking the
span under the mouse, zooming and panning a range, and reading a typed range.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

NO_KEY = -1
"""``key`` of a span that stands for several (merged) items."""


@dataclass(frozen=True)
class SpanBatch:
    """Spans to draw, any order. ``lane`` is the row (0 at the top), ``key`` the source's
    id of the item (a program step, an event index; ``NO_KEY`` for merged spans), ``color``
    RGBA rows. Labels are optional: only spans wide enough to read get one drawn."""

    lane: np.ndarray  # int32
    start: np.ndarray  # float64, the timeline's unit (cycles, ns, ...)
    end: np.ndarray  # float64, exclusive; a span shorter than a pixel is drawn one pixel wide
    color: np.ndarray  # uint8 (N, 4)
    key: np.ndarray  # int64
    labels: Sequence[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.lane.shape[0])

    @staticmethod
    def empty() -> SpanBatch:
        return SpanBatch(
            lane=np.zeros(0, np.int32),
            start=np.zeros(0),
            end=np.zeros(0),
            color=np.zeros((0, 4), np.uint8),
            key=np.zeros(0, np.int64),
        )

    @staticmethod
    def concat(batches: Sequence[SpanBatch]) -> SpanBatch:
        batches = [b for b in batches if len(b)]
        if not batches:
            return SpanBatch.empty()
        with_labels = all(len(b.labels) == len(b) for b in batches)
        return SpanBatch(
            lane=np.concatenate([b.lane for b in batches]).astype(np.int32),
            start=np.concatenate([b.start for b in batches]).astype(np.float64),
            end=np.concatenate([b.end for b in batches]).astype(np.float64),
            color=np.concatenate([b.color for b in batches]).astype(np.uint8),
            key=np.concatenate([b.key for b in batches]).astype(np.int64),
            labels=[label for b in batches for label in b.labels] if with_labels else [],
        )


@dataclass(frozen=True)
class PixelSpans:
    """A batch placed on ``width`` pixel columns: first and last-plus-one column of each."""

    first: np.ndarray  # int64
    stop: np.ndarray  # int64, > first: every span covers at least one column


def pixel_columns(batch: SpanBatch, x0: float, x1: float, width: int) -> PixelSpans:
    """The pixel columns each span covers when [x0, x1) is drawn ``width`` pixels wide."""
    scale = width / max(x1 - x0, 1e-300)
    # A hair of tolerance so 5.2 units at 10 px a unit is 52 columns, not 53.
    first = np.floor((batch.start - x0) * scale + 1e-6)
    stop = np.ceil((batch.end - x0) * scale - 1e-6)
    first = np.clip(first, 0, width).astype(np.int64)
    stop = np.clip(stop, 0, width).astype(np.int64)
    return PixelSpans(first, np.maximum(stop, np.minimum(first + 1, width)))


def lane_pixels(batch: SpanBatch, lanes: int, x0: float, x1: float, width: int) -> np.ndarray:
    """The index into ``batch`` of the span shown in each pixel column of each lane,
    (lanes, width) int64, -1 where nothing is drawn.

    Spans of one lane do not overlap (a flame layout puts nested spans in lanes of their
    own). Where spans share a pixel column the one starting later wins, so a short span
    after a long one stays visible; this is one sort and one running maximum for all lanes.
    """
    shown = np.full((lanes, width), -1, dtype=np.int64)
    inside = (batch.lane >= 0) & (batch.lane < lanes) & (batch.end > x0) & (batch.start < x1)
    index = np.flatnonzero(inside)
    if index.size == 0 or width < 1:
        return shown
    px = pixel_columns(batch, x0, x1, width)
    first, stop = px.first[index], px.stop[index]
    lane = batch.lane[index].astype(np.int64)
    order = np.lexsort((stop, first, lane))  # by lane, then start column
    index, first, stop, lane = index[order], first[order], stop[order], lane[order]
    cells = lane * width + first
    marks = np.full(lanes * width, -1, dtype=np.int64)
    marks[cells] = np.arange(index.size)  # later in order wins a shared start column
    owner = np.maximum.accumulate(marks)
    covered = owner >= 0
    columns = np.tile(np.arange(width), lanes)
    rows = np.repeat(np.arange(lanes), width)
    ok = covered.copy()
    ok[covered] = (columns[covered] < stop[owner[covered]]) & (
        rows[covered] == lane[owner[covered]]
    )
    flat = shown.reshape(-1)
    flat[ok] = index[owner[ok]]
    return shown


def span_at(batch: SpanBatch, lane: int, x: float, tolerance: float = 0.0) -> int:
    """Index of the span of ``lane`` under ``x`` (within ``tolerance``), the shortest
    when several are; -1 for none."""
    hit = (batch.lane == lane) & (batch.start - tolerance <= x) & (x < batch.end + tolerance)
    candidates = np.flatnonzero(hit)
    if candidates.size == 0:
        return -1
    lengths = batch.end[candidates] - batch.start[candidates]
    return int(candidates[int(np.argmin(lengths))])


# -- ranges ---------------------------------------------------------------------------------
def zoom_range(
    x0: float, x1: float, factor: float, anchor: float, limits: tuple[float, float]
) -> tuple[float, float]:
    """[x0, x1) scaled by ``factor`` (< 1 zooms in) about ``anchor``, kept in ``limits``."""
    lo, hi = limits
    width = min(max((x1 - x0) * factor, 1e-9), hi - lo)
    fraction = (anchor - x0) / (x1 - x0) if x1 > x0 else 0.5
    start = anchor - fraction * width
    start = min(max(start, lo), hi - width)
    return start, start + width


def pan_range(
    x0: float, x1: float, fraction: float, limits: tuple[float, float]
) -> tuple[float, float]:
    """[x0, x1) moved by ``fraction`` of its width, kept in ``limits``."""
    lo, hi = limits
    width = x1 - x0
    start = min(max(x0 + fraction * width, lo), max(hi - width, lo))
    return start, start + width


class RangeError(ValueError):
    """A typed range that cannot be read; the message says what is expected."""


_NUMBER = r"([0-9][0-9,_]*(?:\.[0-9]+)?)"
_RANGE = re.compile(rf"^\s*{_NUMBER}\s*(?:-|\.\.|to|,\s)\s*{_NUMBER}\s*$")


def parse_range(text: str) -> tuple[float, float]:
    """``"1,000 - 25,000"`` (also ``1000..25000``, ``1000 to 25000``) -> (1000.0, 25000.0)."""
    match = _RANGE.match(text)
    if match is None:
        raise RangeError(f"{text.strip()!r} is not a range: type two numbers such as 1000-25000")
    start, end = (float(g.replace(",", "").replace("_", "")) for g in match.groups())
    if end <= start:
        raise RangeError(f"{text.strip()!r}: the end must be after the start")
    return start, end
