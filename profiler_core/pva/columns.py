"""Arrays the pva objects share, derived once per report from its columns by profiler_core's
analyses: memory per tile, rows of each compute set and exchange step, per-tile cycles of a
step, run offsets, liveness of the tiles last asked about, lowered variables, operations."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from profiler_core.analysis.checks import checked_liveness, checked_programs, checked_runs
from profiler_core.analysis.liveness import LivenessTable
from profiler_core.analysis.liveness_tiles import ipu_tiles, liveness_on_tiles
from profiler_core.analysis.lowered_variables import LoweredVariables, lowered_variables
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.analysis.operation_members import OperationMembers, operation_members
from profiler_core.analysis.program_tree import ProgramTree, program_tree, subtree_ends
from profiler_core.analysis.step_code import ExchangeCode, exchange_code_by_step
from profiler_core.analysis.vertices import (
    TileVertexTypes,
    vertex_state_sizes,
    vertex_types_by_tile,
)
from profiler_core.model.kinds import MemoryCategory, StepKind
from profiler_core.model.profile import ProgramData, RunData
from profiler_core.pva.graph_objects import VertexType
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

    # --- memory: a script reads one cell at a time ---

    @cached_property
    def category_rows(self) -> np.ndarray:
        return self.memory.by_category

    @cached_property
    def tile_totals(self) -> tuple[np.ndarray, np.ndarray]:
        return self.memory.total(True), self.memory.total(False)

    # --- vertices ---

    @cached_property
    def _tile_vertex_types(self) -> TileVertexTypes:
        return vertex_types_by_tile(self.report)

    def tile_vertex_types(self, tile: int) -> tuple[np.ndarray, np.ndarray]:
        return self._tile_vertex_types.of(tile)

    @cached_property
    def vertex_state_sizes(self) -> list[int]:
        """State bytes of one vertex of each type (-1 where the report cannot tell)."""
        return vertex_state_sizes(self.report).tolist()

    def vertex_type(self, index: int) -> VertexType:
        g = self.report.graph
        size = self.vertex_state_sizes[index]
        return VertexType(
            index,
            g.strings[int(g.vt_name[index])],
            int(g.vt_code_bytes[index]),
            None if size < 0 else size,
        )

    # --- liveness of some tiles, kept for the last few tiles asked about ---

    def tile_liveness(self, key: tuple[str, int]) -> LivenessTable:
        """``("tile", t)`` or ``("ipu", i)``: live bytes per step of what is on those tiles."""
        cache = self._liveness_cache
        if key in cache:
            cache[key] = cache.pop(key)  # most recently used last
            return cache[key]
        kind, index = key
        if kind == "tile":
            num_tiles = self.report.target.num_tiles
            if not 0 <= index < num_tiles:
                raise IndexError(f"tile {index}: tiles go from 0 to {num_tiles - 1}")
            tiles = np.array([index])
        else:
            tiles = ipu_tiles(self.report, index)
        table = liveness_on_tiles(self.report, tiles)
        cache[key] = table
        while len(cache) > 16:
            cache.pop(next(iter(cache)))
        return table

    @cached_property
    def _liveness_cache(self) -> dict[tuple[str, int], LivenessTable]:
        return {}

    # --- programs ---

    @cached_property
    def exchange_code(self) -> ExchangeCode:
        return exchange_code_by_step(self.report)

    @cached_property
    def exchange_code_rows(self) -> tuple[np.ndarray, np.ndarray]:
        return _groups(self.exchange_code.step, self.programs.num_steps)

    @cached_property
    def lowered(self) -> LoweredVariables:
        return lowered_variables(self.report)

    @cached_property
    def tree(self) -> ProgramTree:
        return program_tree(self.report)

    @cached_property
    def subtree_end(self) -> np.ndarray:
        """Node n's subtree is nodes [n, subtree_end[n]) (nodes are in depth-first order)."""
        return subtree_ends(self.programs.node_parent)

    @cached_property
    def interval_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Live ranges grouped by first step and by last step (for a step's variables)."""
        live = checked_liveness(self.report)
        steps = self.programs.num_steps
        by_first = _groups(live.interval_first.astype(np.int64), steps)
        by_last = _groups(live.interval_last.astype(np.int64), steps)
        return (*by_first, *by_last)

    @cached_property
    def operations(self) -> OperationMembers:
        return operation_members(self.report)

    def exchange_bytes(self, step: int, ipu: int) -> tuple[int, int]:
        """Bytes in and out of IPU ``ipu``'s tiles in exchange step ``step``."""
        p, per_ipu = self.programs, self.report.target.tiles_per_ipu
        order, offsets = self.exchange_tiles
        rows = order[offsets[step] : offsets[step + 1]]
        rows = rows[p.exch_tile[rows] // per_ipu == ipu]
        return int(p.exch_bytes_in[rows].sum()), int(p.exch_bytes_out[rows].sum())
