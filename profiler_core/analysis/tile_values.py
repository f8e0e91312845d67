"""One number per tile for maps: a variable's bytes on each tile, and the cycles of one
program step on each tile."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_programs
from profiler_core.model.kinds import StepKind


def variable_bytes_per_tile(report: Any, var: int) -> np.ndarray:
    """int64 (tiles,): the bytes of variable ``var`` held on each tile."""
    graph = checked_graph(report)
    if not 0 <= var < graph.num_variables:
        raise IndexError(f"variable {var}: variables go from 0 to {graph.num_variables - 1}")
    rows = np.flatnonzero(graph.region_var == var)
    element = int(graph.var_bytes[var]) // max(int(graph.var_elements[var]), 1)
    out = np.zeros(report.target.num_tiles, dtype=np.int64)
    np.add.at(out, graph.region_tile[rows], graph.region_elements[rows].astype(np.int64) * element)
    return out


def step_cycles_per_tile(report: Any, step: int) -> np.ndarray:
    """int64 (tiles,): cycles of program step ``step`` on each tile. A compute step gives
    each tile its compute set's cycles there (0 on tiles without its vertices); any other
    step gives every tile its IPU's cycles of the step (as pva's ``cyclesByTile``)."""
    programs = checked_programs(report)
    target = report.target
    if not 0 <= step < programs.num_steps:
        raise IndexError(f"step {step}: steps go from 0 to {programs.num_steps - 1}")
    out = np.zeros(target.num_tiles, dtype=np.int64)
    cs = int(programs.step_cs[step])
    if int(programs.step_kind[step]) == StepKind.ON_TILE_EXECUTE and cs >= 0:
        rows = np.flatnonzero(programs.cst_cs == cs)
        out[programs.cst_tile[rows]] = programs.cst_cycles[rows]
        return out
    return np.repeat(programs.step_cycles[step].astype(np.int64), target.tiles_per_ipu)
