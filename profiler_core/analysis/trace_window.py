"""The execution trace's question: what falls in cycles [t0, t1) of one IPU in one run, drawn
``width_px`` pixels wide? Step instances overlapping the window, with runs of spans shorter
than a pixel (and less than a pixel apart) merged into one span, so a view never draws
more than about two spans per pixel column.

A run's instances start in order and never overlap (each lasts as long as its slowest
IPU, and the next starts when it ends), so the window is found with two binary searches
on the start cycles; the work after that grows with the instances in the window.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_target, fail, run_at

MERGED = -1
"""``kind``, ``name`` and ``step`` of a merged span (``kind`` only when its kinds differ)."""


@dataclass(frozen=True)
class TraceSpans:
    """Spans to draw, in time order; cycles are from the start of the run."""

    start: np.ndarray  # int64
    end: np.ndarray  # int64 (exclusive)
    kind: np.ndarray  # int16 kinds.StepKind, or MERGED when the merged instances differ
    name: np.ndarray  # int32 string index of the step's name, or MERGED
    step: np.ndarray  # int32 program step, or MERGED
    count: np.ndarray  # int64 step instances in the span

    def __len__(self) -> int:
        return len(self.start)


def trace_window(report: Any, run: int, ipu: int, t0: int, t1: int, width_px: int) -> TraceSpans:
    """Spans of IPU ``ipu`` active in cycles [t0, t1) of run ``run``, for ``width_px`` pixels."""
    if t1 <= t0 or width_px < 1:
        raise ValueError(f"an empty window: cycles [{t0}, {t1}) over {width_px} pixels")
    target = checked_target(report)
    if not 0 <= ipu < target.num_ipus:
        raise IndexError(f"IPU {ipu}: the target has IPUs 0 to {target.num_ipus - 1}")
    r = run_at(report, run)  # checking every instance would make each query linear
    programs = report.programs
    if programs.step_cycles.shape != (programs.num_steps, target.num_ipus):
        fail(report, "programs", f"'step_cycles' has shape {programs.step_cycles.shape}")
    starts = r.start_cycles
    lo = max(int(np.searchsorted(starts, t0, side="right")) - 1, 0)
    hi = int(np.searchsorted(starts, t1, side="left"))
    steps = r.step_ids[lo:hi]
    if len(r.start_cycles) != len(r.step_ids):
        fail(report, "execution", f"run {run} has start cycles and steps of different lengths")
    if steps.size and (int(steps.min()) < 0 or int(steps.max()) >= programs.num_steps):
        fail(report, "execution", f"run {run} executes a step that is not in the programs")
    start = starts[lo:hi]
    end = start + programs.step_cycles[steps, ipu]
    keep = (end > start) & (end > t0) & (start < t1)
    start, end, steps = start[keep], end[keep], steps[keep]
    return _merge(programs, start, end, steps, (t1 - t0) / width_px)


def _merge(
    programs: Any, start: np.ndarray, end: np.ndarray, steps: np.ndarray, cycles_per_px: float
) -> TraceSpans:
    kind = programs.step_kind[steps].astype(np.int16)
    if start.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return TraceSpans(empty, empty, kind, empty.astype(np.int32), empty.astype(np.int32), empty)
    small = (end - start) < cycles_per_px
    joins = small[1:] & small[:-1] & ((start[1:] - end[:-1]) < cycles_per_px)
    first = np.flatnonzero(np.concatenate(([True], ~joins)))
    last = np.append(first[1:], start.size) - 1
    count = (last - first + 1).astype(np.int64)
    single = count == 1
    same_kind = np.minimum.reduceat(kind, first) == np.maximum.reduceat(kind, first)
    return TraceSpans(
        start=start[first].astype(np.int64),
        end=np.maximum.reduceat(end, first).astype(np.int64),
        kind=np.where(same_kind, kind[first], MERGED).astype(np.int16),
        name=np.where(single, programs.step_name[steps[first]], MERGED).astype(np.int32),
        step=np.where(single, steps[first], MERGED).astype(np.int32),
        count=count,
    )
