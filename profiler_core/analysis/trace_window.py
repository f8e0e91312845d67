"""The execution trace's question: what falls in cycles [t0, t1) of one IPU in one run, drawn
``width_px`` pixels wide? Step instances overlapping the window, with runs of spans shorter
than a pixel (and less than a pixel apart) merged into one span, so a view never draws
more than about two spans per pixel column.

A run's instances start in order and never overlap (each lasts as long as its slowest
IPU, and the next starts when it ends), so the window is found with two binary searches
on the start cycles; the work after that grows with the instances in the window.
"""

from __future__ import annotations

from collections.abc import Sequence
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


def trace_window(
    report: Any,
    run: int,
    ipu: int,
    t0: int,
    t1: int,
    width_px: int,
    kinds: Sequence[int] | None = None,
) -> TraceSpans:
    """Spans of IPU ``ipu`` active in cycles [t0, t1) of run ``run``, for ``width_px`` pixels;
    only steps of ``kinds`` (``StepKind`` values) when given, as a BSP phase row shows."""
    start, end, steps = _instances(report, run, ipu, t0, t1, width_px)
    programs = report.programs
    if kinds is not None:
        wanted = np.zeros(256, dtype=bool)
        wanted[np.asarray(kinds, dtype=np.int64)] = True
        keep = wanted[programs.step_kind[steps]]
        start, end, steps = start[keep], end[keep], steps[keep]
    return _merge(programs, start, end, steps, (t1 - t0) / width_px)


def phase_windows(
    report: Any,
    run: int,
    ipu: int,
    t0: int,
    t1: int,
    width_px: int,
    phases: Sequence[Sequence[int]],
) -> list[TraceSpans]:
    """``trace_window`` for each phase (a set of step kinds) of one IPU, finding the window's
    instances once: what a view splitting an IPU into BSP phase rows asks per paint."""
    start, end, steps = _instances(report, run, ipu, t0, t1, width_px)
    programs = report.programs
    phase_of_kind = np.full(256, -1, dtype=np.int64)
    for phase, kinds in enumerate(phases):
        phase_of_kind[np.asarray(kinds, dtype=np.int64)] = phase
    phase = phase_of_kind[programs.step_kind[steps]]
    out = []
    for index in range(len(phases)):
        keep = phase == index
        out.append(_merge(programs, start[keep], end[keep], steps[keep], (t1 - t0) / width_px))
    return out


@dataclass(frozen=True)
class GroupSpans:
    """Runs of consecutive step instances whose steps share a group (an operation), in time
    order; ``group`` is MERGED where sub-pixel runs of different groups were joined."""

    start: np.ndarray  # int64
    end: np.ndarray  # int64 (exclusive)
    group: np.ndarray  # int64 the group of every instance in the span, or MERGED
    count: np.ndarray  # int64 step instances in the span

    def __len__(self) -> int:
        return len(self.start)


def group_window(
    report: Any,
    run: int,
    ipu: int,
    t0: int,
    t1: int,
    width_px: int,
    step_group: np.ndarray,
) -> GroupSpans:
    """Spans of IPU ``ipu`` in cycles [t0, t1) where consecutive active instances belong to
    the same group (``step_group[step]``, e.g. debug groups by op), merged below a pixel.

    A run of one group is cut at the window's edges: the first span starts at the first
    instance overlapping ``t0``, which is all a view drawing [t0, t1) needs.
    """
    start, end, steps = _instances(report, run, ipu, t0, t1, width_px)
    if len(step_group) != report.programs.num_steps:
        raise ValueError(f"{len(step_group)} step groups for {report.programs.num_steps} steps")
    groups = np.asarray(step_group, dtype=np.int64)[steps]
    if start.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return GroupSpans(empty, empty, empty, empty)
    first = np.flatnonzero(np.concatenate(([True], groups[1:] != groups[:-1])))
    count = np.diff(np.append(first, start.size))
    start, end = start[first], np.maximum.reduceat(end, first)
    groups = groups[first]
    joined = _join_small(start, end, (t1 - t0) / width_px)
    same = np.minimum.reduceat(groups, joined) == np.maximum.reduceat(groups, joined)
    return GroupSpans(
        start=start[joined].astype(np.int64),
        end=np.maximum.reduceat(end, joined).astype(np.int64),
        group=np.where(same, groups[joined], MERGED).astype(np.int64),
        count=np.add.reduceat(count, joined).astype(np.int64),
    )


def _instances(
    report: Any, run: int, ipu: int, t0: int, t1: int, width_px: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end and step of the instances of run ``run`` active on ``ipu`` in [t0, t1)."""
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
    # A column then a 1-D take: several times faster than 2-D fancy indexing.
    cycles = programs.step_cycles[:, ipu].take(steps)
    keep = cycles > 0
    if start.size and start[0] + cycles[0] <= t0:  # only the first can end before t0
        keep[0] = False
    start, steps = start[keep], steps[keep]
    return start, start + cycles[keep], steps


def _join_small(start: np.ndarray, end: np.ndarray, cycles_per_px: float) -> np.ndarray:
    """The first index of each run of spans to draw as one: neighbours both shorter than a
    pixel and less than a pixel apart are joined."""
    small = (end - start) < cycles_per_px
    joins = small[1:] & small[:-1] & ((start[1:] - end[:-1]) < cycles_per_px)
    return np.flatnonzero(np.concatenate(([True], ~joins)))


def _merge(
    programs: Any, start: np.ndarray, end: np.ndarray, steps: np.ndarray, cycles_per_px: float
) -> TraceSpans:
    kind = programs.step_kind[steps].astype(np.int16)
    if start.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return TraceSpans(empty, empty, kind, empty.astype(np.int32), empty.astype(np.int32), empty)
    first = _join_small(start, end, cycles_per_px)
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


def spans_in(spans: TraceSpans, t0: float, t1: float) -> TraceSpans:
    """The spans of ``spans`` (in time order, not overlapping) that overlap [t0, t1)."""
    lo = int(np.searchsorted(spans.end, t0, side="right"))
    hi = int(np.searchsorted(spans.start, t1, side="left"))
    return TraceSpans(*(column[lo:hi] for column in _columns(spans)))


def merge_spans(spans: TraceSpans, cycles_per_px: float) -> TraceSpans:
    """``spans`` merged again for a coarser pixel: what ``trace_window`` gives at
    ``cycles_per_px`` when ``spans`` are its single instances, and close to it (joined runs
    stay joined) when they were already merged at a finer pixel. A view keeps the spans of a
    whole run at a fine pixel and merges them for wide windows instead of walking every
    instance again."""
    if len(spans) == 0:
        return spans
    first = _join_small(spans.start, spans.end, cycles_per_px)
    pieces = np.diff(np.append(first, len(spans)))
    count = np.add.reduceat(spans.count, first)
    kind = spans.kind
    same_kind = np.minimum.reduceat(kind, first) == np.maximum.reduceat(kind, first)
    single = (pieces == 1) & (count == 1)
    return TraceSpans(
        start=spans.start[first],
        end=np.maximum.reduceat(spans.end, first),
        kind=np.where(same_kind, kind[first], MERGED).astype(np.int16),
        name=np.where(single, spans.name[first], MERGED).astype(np.int32),
        step=np.where(single, spans.step[first], MERGED).astype(np.int32),
        count=count.astype(np.int64),
    )


def groups_in(spans: GroupSpans, t0: float, t1: float) -> GroupSpans:
    """The group spans (in time order, not overlapping) that overlap [t0, t1)."""
    lo = int(np.searchsorted(spans.end, t0, side="right"))
    hi = int(np.searchsorted(spans.start, t1, side="left"))
    return GroupSpans(spans.start[lo:hi], spans.end[lo:hi], spans.group[lo:hi], spans.count[lo:hi])


def merge_groups(spans: GroupSpans, cycles_per_px: float) -> GroupSpans:
    """``merge_spans`` for operation spans."""
    if len(spans) == 0:
        return spans
    first = _join_small(spans.start, spans.end, cycles_per_px)
    group = spans.group
    same = np.minimum.reduceat(group, first) == np.maximum.reduceat(group, first)
    return GroupSpans(
        start=spans.start[first],
        end=np.maximum.reduceat(spans.end, first),
        group=np.where(same, group[first], MERGED).astype(np.int64),
        count=np.add.reduceat(spans.count, first).astype(np.int64),
    )


def _columns(spans: TraceSpans) -> tuple[np.ndarray, ...]:
    return spans.start, spans.end, spans.kind, spans.name, spans.step, spans.count
