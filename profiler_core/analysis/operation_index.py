"""One report's operations, grouped, as lookups: the steps (with the group's share of each),
compute sets, vertex-count rows, tiles' compute cycles and debug contexts of one group --
what the Operations table's rows add up and a selected row's tabs show. Built once per
report, grouping and runs; the table (``operations_table``) is made from it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.attribution import StepPieces, phase_mask, step_pieces
from profiler_core.analysis.checks import (
    check_debug_ids,
    checked_graph,
    checked_programs,
    debug_of,
    selected_runs,
)
from profiler_core.analysis.groupings import OPERATION_GROUPINGS
from profiler_core.analysis.operation_groups import Grouped, grouped, phase_names
from profiler_core.model.lazy_columns import as_str_list
from profiler_core.model.profile import GraphData, ProgramData


@dataclass(frozen=True)
class OperationIndex:
    group_by: str
    graph: GraphData
    programs: ProgramData
    debug: Any
    pieces: StepPieces
    groups: Grouped

    @cached_property
    def labels(self) -> list[str]:
        """The groups' labels, sorted ("" among them), decoded once."""
        return as_str_list(self.groups.label_column)

    def group(self, label: str) -> int:
        """The group of ``label``; ValueError when there is none."""
        return self.labels.index(label)

    def step_shares(self, group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The group's program steps in program order, their executions, and the group's
        cycles of each (all of a step's cycles unless several operations shared it)."""
        mine = self.groups.piece == group
        steps, first, inverse = np.unique(
            self.pieces.step[mine], return_index=True, return_inverse=True
        )  # two of its contexts may share a step (two matmuls in one compute set)
        cycles = np.bincount(inverse.reshape(-1), self.pieces.cycles[mine], len(steps))
        return steps, self.pieces.executions[mine][first], cycles.astype(np.int64)

    def steps(self, group: int) -> np.ndarray:
        return self.step_shares(group)[0]

    def vertex_rows(self, group: int) -> np.ndarray:
        """The vertex-count rows of the group's vertices."""
        return np.flatnonzero(self.groups.vertex == group)

    def compute_sets(self, group: int) -> np.ndarray:
        """The compute sets it has vertices in, and those without vertices in the group."""
        graph = self.graph
        empty = np.ones(len(graph.cs_name), dtype=bool)
        empty[graph.vc_cs] = False
        alone = np.flatnonzero(empty & (self.groups.compute_set == group))
        return np.union1d(graph.vc_cs[self.vertex_rows(group)], alone).astype(np.int64)

    def tile_cycles(self, group: int, num_tiles: int) -> np.ndarray:
        """Compute cycles per tile, one execution of each of its compute sets: on a tile its
        vertices share with other operations', the tile's cycles times its share of the
        vertices there."""
        graph, programs = self.graph, self.programs
        place = graph.vc_cs.astype(np.int64) * num_tiles + graph.vc_tile
        distinct, inverse = np.unique(place, return_inverse=True)
        everyone = np.bincount(inverse, weights=graph.vc_count, minlength=len(distinct))
        mine = np.bincount(
            inverse[self.groups.vertex == group],
            weights=graph.vc_count[self.groups.vertex == group],
            minlength=len(distinct),
        )
        share = np.divide(mine, everyone, out=np.zeros(len(distinct)), where=everyone > 0)
        cst_place = programs.cst_cs.astype(np.int64) * num_tiles + programs.cst_tile
        found = np.searchsorted(distinct, cst_place)
        hit = found < len(distinct)
        hit[hit] = distinct[found[hit]] == cst_place[hit]
        weights = np.zeros(len(cst_place))
        weights[hit] = programs.cst_cycles[hit] * share[found[hit]]
        return np.rint(np.bincount(programs.cst_tile, weights, minlength=num_tiles)).astype(
            np.int64
        )

    def contexts(self, group: int) -> np.ndarray:
        """The debug contexts in the group (by phase: the calls of that phase)."""
        debug = self.debug
        if debug is None:
            return np.zeros(0, dtype=np.int64)
        if self.groups.context is not None:
            return np.flatnonzero(self.groups.context == group).astype(np.int64)
        calls = np.flatnonzero(phase_mask(debug)).astype(np.int64)
        names = phase_names(debug, calls)
        label = self.labels[group]
        return calls[[name == label for name in names]]


def operation_index(
    report: Any, group_by: str = "op", run: int | None = None, debug: Any = None
) -> OperationIndex:
    """Operations grouped ``group_by`` (one of ``OPERATION_GROUPINGS``) over run ``run``, or
    every run when None. Cross-section references are checked; a damaged debug.cbor raises
    its ReportError."""
    if group_by not in OPERATION_GROUPINGS:
        choices = ", ".join(OPERATION_GROUPINGS)
        raise ValueError(f"group_by must be one of {choices}, not {group_by!r}")
    graph = checked_graph(report)
    programs = checked_programs(report)
    runs = selected_runs(report, run)
    debug = debug_of(report, debug, strict=True)
    check_debug_ids(report, "graph", "var_debug", graph.var_debug, debug)
    check_debug_ids(report, "graph", "cs_debug", graph.cs_debug, debug)
    if graph.vc_debug is not None:
        check_debug_ids(report, "graph", "vc_debug", graph.vc_debug, debug)
    check_debug_ids(report, "programs", "step_debug", programs.step_debug, debug)
    check_debug_ids(report, "programs", "node_debug", programs.node_debug, debug)
    pieces = step_pieces(programs, graph, runs, debug)
    groups = grouped(group_by, debug, graph, programs, pieces)
    return OperationIndex(group_by, graph, programs, debug, pieces, groups)
