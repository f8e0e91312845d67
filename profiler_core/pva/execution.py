"""libpva's ``report.execution``: runs, and execution steps (each run's, or every run's in
order) with their program, ``cyclesByTile`` and per-IPU cycles.

Cycle counts are from the start of the first run: runs follow each other, so run r starts
where the runs before it ended. In a step, every tile of an IPU starts together (bulk
synchronous); a tile ends after its own cycles, an IPU after its slowest tile.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.pva.graph_objects import ComputeSet
from profiler_core.pva.lazy import LazyList
from profiler_core.pva.programs import CycleCount, Program, make_program
from profiler_core.pva.unmodelled import PvaObject


class StepIpu(PvaObject):
    """One IPU in one execution step: ``cycles`` it was active, ``activeCycles`` range."""

    __slots__ = ("_step", "ipu")

    def __init__(self, step: ExecutionStep, ipu: int) -> None:
        self._step = step
        self.ipu = ipu

    @property
    def cycles(self) -> int:
        return int(self._step._columns.programs.step_cycles[self._step.programStep, self.ipu])

    @property
    def activeCycles(self) -> CycleRange:
        start = self._step._start
        per_ipu = self._step._columns.report.target.tiles_per_ipu
        tiles = self._step.cyclesByTile[self.ipu * per_ipu : (self.ipu + 1) * per_ipu]
        active = tiles[tiles > 0]
        if active.size == 0:
            ends = CycleCount(start, start, start)
        else:
            ends = CycleCount(start + active.min(), start + self.cycles, start + active.mean())
        return CycleRange(CycleCount(start, start, start), ends)

    @property
    def dataIn(self) -> int:
        """Bytes the IPU's tiles received in the step's exchange (0 for other steps)."""
        return self._step._columns.exchange_bytes(self._step.programStep, self.ipu)[0]

    @property
    def dataOut(self) -> int:
        """Bytes the IPU's tiles sent in the step's exchange (0 for other steps)."""
        return self._step._columns.exchange_bytes(self._step.programStep, self.ipu)[1]

    @property
    def activeTiles(self) -> int:
        per_ipu = self._step._columns.report.target.tiles_per_ipu
        tiles = self._step.cyclesByTile[self.ipu * per_ipu : (self.ipu + 1) * per_ipu]
        return int(np.count_nonzero(tiles))


class CycleRange:
    __slots__ = ("cyclesFrom", "cyclesTo")

    def __init__(self, cycles_from: CycleCount, cycles_to: CycleCount) -> None:
        self.cyclesFrom = cycles_from
        self.cyclesTo = cycles_to


class ExecutionStep(PvaObject):
    """One executed instance of a program step."""

    __slots__ = ("_columns", "_start", "programStep", "run")

    def __init__(self, columns: Any, run: int, program_step: int, start: int) -> None:
        self._columns = columns
        self.run = run
        self.programStep = program_step
        self._start = start

    @property
    def cyclesFrom(self) -> CycleCount:
        return CycleCount(self._start, self._start, self._start)

    @property
    def cyclesTo(self) -> CycleCount:
        end = self._start + int(self._columns.duration[self.programStep])
        return CycleCount(end, end, end)

    @property
    def program(self) -> Program:
        end = self._start + int(self._columns.duration[self.programStep])
        return make_program(self._columns, self.programStep, self._start, end)

    @property
    def cyclesByTile(self) -> np.ndarray:
        return self._columns.cycles_by_tile(self.programStep)

    @property
    def ipus(self) -> LazyList[StepIpu]:
        return LazyList(self._columns.report.target.num_ipus, lambda k: StepIpu(self, k))

    @property
    def computeSets(self) -> list[ComputeSet]:
        cs = int(self._columns.programs.step_cs[self.programStep])
        return [ComputeSet(self._columns, cs)] if cs >= 0 else []

    @property
    def name(self) -> str:
        return self.program.name

    def __repr__(self) -> str:
        return f"ExecutionStep({self.name!r}, cyclesFrom={self._start})"


def _step_of_run(columns: Any, run: int, index: int) -> ExecutionStep:
    r = columns.runs[run]
    start = int(columns.run_offsets[run]) + int(r.start_cycles[index])
    return ExecutionStep(columns, run, int(r.step_ids[index]), start)


class Microseconds(PvaObject):
    """When a run started and ended, in µs from the start of the first run."""

    __slots__ = ("end", "start")

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    @property
    def duration(self) -> float:
        return self.end - self.start


class Run(PvaObject):
    """One run: ``name``, ``program`` (engine program index), ``cycles``, ``microseconds``
    (runs follow each other on the IPU clock: the report has no host timestamps)."""

    def __init__(self, columns: Any, index: int) -> None:
        self._columns = columns
        self.index = index
        r = columns.runs[index]
        self.name = r.name
        self.program = r.program
        self.cycles = r.total_cycles
        us_per_cycle = 1e6 / columns.report.target.clock_hz
        begin, end = columns.run_offsets[index : index + 2].tolist()
        self.microseconds = Microseconds(begin * us_per_cycle, end * us_per_cycle)

    @cached_property
    def steps(self) -> LazyList[ExecutionStep]:
        count = len(self._columns.runs[self.index].step_ids)
        return LazyList(count, lambda i: _step_of_run(self._columns, self.index, i))


class TotalCycles:
    __slots__ = ("total",)

    def __init__(self, total: int) -> None:
        self.total = total


class Execution(PvaObject):
    def __init__(self, columns: Any) -> None:
        self._columns = columns

    @cached_property
    def runs(self) -> LazyList[Run]:
        return LazyList(len(self._columns.runs), lambda i: Run(self._columns, i))

    @cached_property
    def steps(self) -> LazyList[ExecutionStep]:
        """Every run's steps, run after run."""
        offsets = self._columns.run_step_offsets

        def make(i: int) -> ExecutionStep:
            run = int(np.searchsorted(offsets, i, side="right")) - 1
            return _step_of_run(self._columns, run, i - int(offsets[run]))

        return LazyList(int(offsets[-1]), make)

    @property
    def totalCycles(self) -> TotalCycles:
        return TotalCycles(int(self._columns.run_offsets[-1]))
