"""The spans of one run that the Execution Trace's lanes draw, per IPU, for a cycle window at
a pixel width: step instances (all kinds, or BSP phase rows found together), operations, and
compute steps for tile strips.

Small runs are asked of ``profiler_core`` exactly every time. For large runs each lane's
spans over the whole run are made once at a fine pixel (~8 instances a pixel, in chunks so
the peak memory stays small) and merged again for wide windows, so a zoomed-out paint never
walks every instance (Tracy's zone merging, kept); narrow windows are asked exactly.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import numpy as np

from profiler_core.analysis.trace_window import (
    GroupSpans,
    TraceSpans,
    group_window,
    groups_in,
    merge_groups,
    merge_spans,
    phase_windows,
    spans_in,
    trace_window,
)
from profiler_core.model.kinds import StepKind

COARSE_MIN_INSTANCES = 50_000  # runs with fewer instances are always asked exactly
COARSE_INSTANCES_PER_PX = 8  # the whole-run spans kept per step lane: ~8 instances a pixel
COARSE_OPERATION_INSTANCES_PER_PX = 32  # operations span several steps: a coarser pixel
COARSE_CHUNK = 100_000  # instances asked at once while building them (bounds the peak memory)

Query = Callable[[int, int, int], list[Any]]  # (t0, t1, width) -> spans of each lane


class RunWindows:
    """Window queries of run ``run``, with the whole-run spans each lane has needed."""

    def __init__(self, report: Any, run: int) -> None:
        self.report = report
        self.run = run
        r = report.execution.runs[run]
        self.instances = len(r.step_ids)
        self.total_cycles = int(r.total_cycles)
        self._whole: dict[tuple, tuple[float, list[Any]]] = {}

    def forget(self, what: str) -> None:
        """Drop the whole-run spans of one kind of lane (operations, when regrouped)."""
        self._whole = {k: v for k, v in self._whole.items() if k[0] != what}

    def steps(self, ipu: int, t0: int, t1: int, width: int) -> TraceSpans:
        report, run = self.report, self.run
        query = lambda a, b, w: [trace_window(report, run, ipu, a, b, w)]  # noqa: E731
        return self._window(("steps", ipu), query, t0, t1, width)[0]

    def phases(
        self, ipu: int, phases: Sequence[Sequence[int]], t0: int, t1: int, width: int
    ) -> list[TraceSpans]:
        """Each phase row of IPU ``ipu``, from one pass over the window's instances."""
        report, run = self.report, self.run
        query = lambda a, b, w: phase_windows(report, run, ipu, a, b, w, phases)  # noqa: E731
        return self._window(("phases", ipu), query, t0, t1, width)

    def compute(self, ipu: int, t0: int, t1: int, width: int) -> TraceSpans:
        """Compute steps only (what a tile strip shows)."""
        report, run, kinds = self.report, self.run, [int(StepKind.ON_TILE_EXECUTE)]
        query = lambda a, b, w: [trace_window(report, run, ipu, a, b, w, kinds)]  # noqa: E731
        return self._window(("compute", ipu), query, t0, t1, width)[0]

    def operations(
        self, ipu: int, step_group: np.ndarray, t0: int, t1: int, width: int
    ) -> GroupSpans:
        report, run = self.report, self.run
        query = lambda a, b, w: [group_window(report, run, ipu, a, b, w, step_group)]  # noqa: E731
        whole = self._whole_run(("operation", ipu), query, COARSE_OPERATION_INSTANCES_PER_PX)
        cycles_per_px = (t1 - t0) / width
        if whole is not None and cycles_per_px >= 2 * whole[0]:
            return merge_groups(groups_in(whole[1][0], t0, t1), cycles_per_px)
        return query(t0, t1, width)[0]

    def _window(self, key: tuple, query: Query, t0: int, t1: int, width: int) -> list[Any]:
        """``query``'s spans of [t0, t1): from the whole-run spans when the pixel is at
        least twice theirs, else asked exactly."""
        whole = self._whole_run(key, query)
        cycles_per_px = (t1 - t0) / width
        if whole is not None and cycles_per_px >= 2 * whole[0]:
            return [merge_spans(spans_in(s, t0, t1), cycles_per_px) for s in whole[1]]
        return query(t0, t1, width)

    def _whole_run(
        self, key: tuple, query: Query, per_px: int = COARSE_INSTANCES_PER_PX
    ) -> tuple[float, list[Any]] | None:
        """(cycles per pixel, [spans]) of lanes over the whole run at a fine pixel, made by
        ``query`` over chunks of the run the first time; None for runs small enough."""
        if self.instances < COARSE_MIN_INSTANCES:
            return None
        if key not in self._whole:
            cycles_per_px = self.total_cycles * per_px / self.instances
            starts = self.report.execution.runs[self.run].start_cycles
            edges = [int(s) for s in starts[::COARSE_CHUNK]] + [self.total_cycles]
            # Chunks end where an instance starts, so no instance is in two chunks.
            parts = [
                query(t0, t1, max(int((t1 - t0) / cycles_per_px), 1))
                for t0, t1 in itertools.pairwise(edges)
                if t1 > t0
            ]
            joined = [_joined(list(lane), cycles_per_px) for lane in zip(*parts, strict=True)]
            self._whole[key] = (cycles_per_px, joined)
        return self._whole[key]


def _joined(parts: list[Any], cycles_per_px: float) -> Any:
    """Spans of consecutive chunks as one (TraceSpans or GroupSpans), merged across edges."""
    kind = type(parts[0])
    columns = [f.name for f in fields(kind)]
    whole = kind(*(np.concatenate([getattr(p, c) for p in parts]) for c in columns))
    return (merge_spans if kind is TraceSpans else merge_groups)(whole, cycles_per_px)
