"""Execution: where a run's cycles went (by step kind, per IPU), run totals in cycles and
seconds, and the per-tile balance of a compute step.

IPUs move from step to step together (bulk synchronous), so a step instance lasts as long
as its slowest IPU; an IPU's *active* cycles in a step are its own ``step_cycles``, and
the rest of the step it waits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_programs, checked_run, checked_runs, fail
from profiler_core.model.kinds import StepKind


@dataclass(frozen=True)
class CycleBreakdown:
    """One run's cycles by step kind (rows: ``StepKind`` values) and IPU."""

    run: int
    name: str
    total_cycles: int  # as recorded for the run
    clock_hz: float
    by_kind: np.ndarray  # int64 (kinds,) step durations (slowest IPU) summed per kind
    by_kind_ipu: np.ndarray  # int64 (kinds, IPUs) active cycles of each IPU per kind
    executions_by_kind: np.ndarray  # int64 (kinds,) executed step instances per kind

    @property
    def seconds(self) -> float:
        return self.total_cycles / self.clock_hz

    @property
    def active_per_ipu(self) -> np.ndarray:
        return self.by_kind_ipu.sum(axis=0)

    @property
    def idle_per_ipu(self) -> np.ndarray:
        """Cycles each IPU waits for slower IPUs, within the steps of the run."""
        return int(self.by_kind.sum()) - self.active_per_ipu


def cycle_breakdown(report: Any, run: int = 0) -> CycleBreakdown:
    programs = checked_programs(report)
    r = checked_run(report, run)
    by_kind, by_kind_ipu, executions = _sum_by_kind(programs, r.step_ids)
    return CycleBreakdown(
        run=run,
        name=r.name,
        total_cycles=int(r.total_cycles),
        clock_hz=float(report.target.clock_hz),
        by_kind=by_kind,
        by_kind_ipu=by_kind_ipu,
        executions_by_kind=executions,
    )


_CHUNK = 1 << 18


def _sum_by_kind(programs: Any, step_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """Whole instances of ``step_ids`` summed by kind: (durations, per-IPU active cycles,
    instances). Counted per program step first, so the work is one pass over the instances
    plus one over the steps, never instances x IPUs."""
    num_kinds, num_ipus = len(StepKind), programs.step_cycles.shape[1]
    executions = np.zeros(programs.num_steps, dtype=np.int64)
    for begin in range(0, len(step_ids), _CHUNK):  # bincount copies int32 ids to int64
        executions += np.bincount(step_ids[begin : begin + _CHUNK], minlength=programs.num_steps)
    ran = np.flatnonzero(executions)
    kinds = programs.step_kind[ran].astype(np.int64)
    cycles = programs.step_cycles[ran].astype(np.int64)
    by_kind_ipu = np.zeros((num_kinds, num_ipus), dtype=np.int64)
    np.add.at(by_kind_ipu, kinds, cycles * executions[ran, None])
    by_kind = np.zeros(num_kinds, dtype=np.int64)
    np.add.at(by_kind, kinds, cycles.max(axis=1, initial=0) * executions[ran])
    instances = np.zeros(num_kinds, dtype=np.int64)
    np.add.at(instances, kinds, executions[ran])
    return by_kind, by_kind_ipu, instances


@dataclass(frozen=True)
class RunTotals:
    """Every run: program index, name, cycles, seconds and executed steps."""

    program: np.ndarray  # int64
    names: list[str]
    cycles: np.ndarray  # int64
    seconds: np.ndarray  # float64
    steps: np.ndarray  # int64 executed step instances

    def __len__(self) -> int:
        return len(self.names)


def run_totals(report: Any) -> RunTotals:
    runs = checked_runs(report)
    cycles = np.array([r.total_cycles for r in runs], dtype=np.int64)
    return RunTotals(
        program=np.array([r.program for r in runs], dtype=np.int64),
        names=[r.name for r in runs],
        cycles=cycles,
        seconds=cycles / float(report.target.clock_hz),
        steps=np.array([len(r.step_ids) for r in runs], dtype=np.int64),
    )


@dataclass(frozen=True)
class TileBalance:
    """Compute cycles of each tile with vertices in a compute step's compute set."""

    step: int
    compute_set: int
    tiles: np.ndarray  # int64 tiles with vertices, ascending
    cycles: np.ndarray  # int64 their cycles

    @property
    def min(self) -> int:
        return int(self.cycles.min()) if self.cycles.size else 0

    @property
    def max(self) -> int:
        return int(self.cycles.max(initial=0))

    @property
    def mean(self) -> float:
        return float(self.cycles.mean()) if self.cycles.size else 0.0

    def slowest(self, count: int = 10) -> np.ndarray:
        """Indices into ``tiles`` of the ``count`` slowest tiles, slowest first."""
        order = np.lexsort((self.tiles, -self.cycles))
        return order[:count]


def tile_balance(report: Any, step: int) -> TileBalance:
    """The balance of program step ``step``, which must run a compute set."""
    programs = checked_programs(report)
    if not 0 <= step < programs.num_steps:
        raise IndexError(f"step {step}: steps go from 0 to {programs.num_steps - 1}")
    cs = int(programs.step_cs[step])
    if cs < 0:
        kind = StepKind(int(programs.step_kind[step])).poplar_name
        raise ValueError(f"step {step} is a {kind} without a compute set")
    rows = np.flatnonzero(programs.cst_cs == cs)
    tiles = programs.cst_tile[rows].astype(np.int64)
    order = np.argsort(tiles, kind="stable")
    if np.any(np.diff(tiles[order]) == 0):
        fail(report, "programs", f"compute set {cs} lists a tile twice in 'cst_tile'")
    return TileBalance(step, cs, tiles[order], programs.cst_cycles[rows][order].astype(np.int64))


@dataclass(frozen=True)
class RangeCycles:
    """Cycles by step kind of the instances overlapping cycles [start, end) of a run, each
    clipped to the range: ``by_kind`` of instance durations (slowest IPU), ``by_kind_ipu`` of
    each IPU's active cycles, ``instances_by_kind`` counted whole."""

    start: int
    end: int
    by_kind: np.ndarray  # int64 (kinds,)
    by_kind_ipu: np.ndarray  # int64 (kinds, IPUs)
    instances_by_kind: np.ndarray  # int64 (kinds,)


def cycles_in_range(report: Any, run: int, start: int, end: int) -> RangeCycles:
    """Where the cycles of [start, end) of run ``run`` went, by step kind and IPU.

    An instance starts at its start cycle and lasts as long as its slowest IPU; IPU ``i`` is
    active from that start for ``step_cycles[step, i]``. Both are clipped to the range, so
    the range [0, total) gives ``cycle_breakdown``'s figures.
    """
    programs = checked_programs(report)
    r = checked_run(report, run)
    num_kinds, num_ipus = len(StepKind), programs.step_cycles.shape[1]
    by_kind_ipu = np.zeros((num_kinds, num_ipus), dtype=np.int64)
    by_kind = np.zeros(num_kinds, dtype=np.int64)
    instances = np.zeros(num_kinds, dtype=np.int64)
    if end > start:
        # Instances start in order and never overlap, so two binary searches find the window,
        # and only its first and last instance can be cut by the range's edges.
        lo = max(int(np.searchsorted(r.start_cycles, start, side="right")) - 1, 0)
        hi = int(np.searchsorted(r.start_cycles, end, side="left"))
        edges = sorted({lo, hi - 1}) if hi > lo else []
        inner = r.step_ids[lo + 1 : hi - 1] if hi - lo > 2 else r.step_ids[:0]
        by_kind, by_kind_ipu, instances = _sum_by_kind(programs, inner)
        for i in edges:
            step, begin = int(r.step_ids[i]), int(r.start_cycles[i])
            per_ipu = programs.step_cycles[step].astype(np.int64)
            kind = int(programs.step_kind[step])
            clip = max(begin, start)
            ipu_cycles = np.maximum(np.clip(begin + per_ipu, start, end) - clip, 0)
            step_cycles = max(min(begin + int(per_ipu.max(initial=0)), end) - clip, 0)
            by_kind_ipu[kind] += ipu_cycles
            by_kind[kind] += step_cycles
            instances[kind] += step_cycles > 0
    return RangeCycles(int(start), int(end), by_kind, by_kind_ipu, instances)
