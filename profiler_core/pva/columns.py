"""Arrays the pva objects share, derived once per report from its columns: memory totals per
tile, rows of each compute set and exchange step, per-tile cycles of a step, run offsets."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from profiler_core.analysis.checks import checked_programs, checked_runs
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.model.profile import ProgramData, RunData
from profiler_core.report import Report


def _groups(keys: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by key (stable) and offsets: key k's rows are order[o[k]:o[k+1]]."""
    order = np.argsort(keys, kind="stable")
    offsets = np.concatenate(([0], np.cumsum(np.bincount(keys, minlength=count))))
    return order, offsets.astype(np.int64)


class ReportColumns:
    """The open report and what is derived from it, each computed on first use."""

    def __init__(self, report: Report) -> None:
        self.report = report

    @cached_property
    def memory(self) -> MemoryTable:
        return memory_table(self.report)

    @cached_property
    def always_live_per_tile(self) -> np.ndarray:
        """Everything on a tile but the not-always-live variables and gaps."""
        not_always = self.memory.by_category[MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES]
        return self.memory.total(False) - not_always

    @cached_property
    def programs(self) -> ProgramData:
        return checked_programs(self.report)

    @cached_property
    def duration(self) -> np.ndarray:
        cycles = self.programs.step_cycles
        return cycles.max(axis=1) if len(cycles) else np.zeros(0, np.int64)

    @cached_property
    def compute_set_vertices(self) -> tuple[np.ndarray, np.ndarray]:
        g = self.report.graph
        return _groups(g.vc_cs, len(g.cs_name))

    @cached_property
    def compute_set_tiles(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.programs
        return _groups(p.cst_cs, len(self.report.graph.cs_name))

    @cached_property
    def exchange_tiles(self) -> tuple[np.ndarray, np.ndarray]:
        p = self.programs
        return _groups(p.exch_step, p.num_steps)

    @cached_property
    def runs(self) -> list[RunData]:
        return checked_runs(self.report)

    @cached_property
    def run_offsets(self) -> np.ndarray:
        """Cycles before each run starts (runs follow each other) and steps before it."""
        cycles = [r.total_cycles for r in self.runs]
        return np.concatenate(([0], np.cumsum(cycles, dtype=np.int64)))

    @cached_property
    def run_step_offsets(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum([len(r.step_ids) for r in self.runs]))).astype(
            np.int64
        )

    def cycles_by_tile(self, step: int) -> np.ndarray:
        """Cycles of ``step`` on every tile: a compute set's tiles their compute cycles; an
        exchange's tiles their IPU's exchange cycles; any other step every tile its IPU's."""
        p, target = self.programs, self.report.target
        out = np.zeros(target.num_tiles, dtype=np.int64)
        kind, cs = int(p.step_kind[step]), int(p.step_cs[step])
        if kind == StepKind.ON_TILE_EXECUTE and cs >= 0:
            order, offsets = self.compute_set_tiles
            rows = order[offsets[cs] : offsets[cs + 1]]
            out[p.cst_tile[rows]] = p.cst_cycles[rows]
        elif kind in (StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE):
            order, offsets = self.exchange_tiles
            tiles = p.exch_tile[order[offsets[step] : offsets[step + 1]]]
            out[tiles] = p.step_cycles[step, tiles // target.tiles_per_ipu]
        else:
            out[:] = np.repeat(p.step_cycles[step], target.tiles_per_ipu)
        return out
