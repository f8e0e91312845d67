"""Code bytes of each program step on each tile, attributed from the per-tile memory
categories: the report keeps control and exchange code per tile, not per step.

Exchange code: a tile's internal (global) exchange code is shared out over the DoExchange
(GlobalExchange) steps it takes part in, in proportion to 1 + the bytes it moves in each,
so that a step moving more data carries more send/receive instructions. Control code: a
tile's control code is shared out evenly over every program step. Shares are whole bytes;
what rounding leaves goes to the tile's last step, so the steps of a tile always add up to
its category exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_programs, fail
from profiler_core.analysis.memory import memory_table
from profiler_core.model.kinds import MemoryCategory, StepKind


def share_out(owner: np.ndarray, weight: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Split ``totals[owner]`` over the rows of each owner in proportion to ``weight``, in
    whole units that add up to each owner's total (the last row of an owner takes what
    rounding leaves)."""
    owner = np.asarray(owner, dtype=np.int64)
    weight = np.asarray(weight, dtype=np.int64)
    if owner.size == 0:
        return np.zeros(0, dtype=np.int64)
    per_owner = np.zeros(len(totals), dtype=np.int64)
    np.add.at(per_owner, owner, weight)
    total = np.asarray(totals, dtype=np.int64)[owner]
    share = total * weight // np.maximum(per_owner[owner], 1)
    given = np.zeros(len(totals), dtype=np.int64)
    np.add.at(given, owner, share)
    last = np.zeros(len(totals), dtype=np.int64)
    last[owner] = np.arange(owner.size)  # later rows overwrite: each owner's last row
    has_rows = np.bincount(owner, minlength=len(totals)) > 0
    share[last[has_rows]] += np.asarray(totals, dtype=np.int64)[has_rows] - given[has_rows]
    return share


@dataclass(frozen=True)
class ExchangeCode:
    """Exchange code per (exchange step, tile) row of the report's exchange table."""

    step: np.ndarray  # int64
    tile: np.ndarray  # int64
    code_bytes: np.ndarray  # int64

    def of_step(self, step: int, num_tiles: int) -> np.ndarray:
        out = np.zeros(num_tiles, dtype=np.int64)
        rows = self.step == step
        np.add.at(out, self.tile[rows], self.code_bytes[rows])
        return out


def exchange_code_by_step(report: Any) -> ExchangeCode:
    """Internal exchange code of DoExchange steps and global exchange code of GlobalExchange
    steps, per tile taking part (see the module docstring)."""
    programs = checked_programs(report)
    table = memory_table(report)
    step = programs.exch_step.astype(np.int64)
    if step.size and (step.min() < 0 or step.max() >= programs.num_steps):
        fail(report, "programs", f"'exch_step' refers to steps outside 0-{programs.num_steps - 1}")
    tile = programs.exch_tile.astype(np.int64)
    weight = 1 + programs.exch_bytes_in.astype(np.int64) + programs.exch_bytes_out
    code = np.zeros(step.size, dtype=np.int64)
    kinds = programs.step_kind[step]
    for kind, category in (
        (StepKind.DO_EXCHANGE, MemoryCategory.INTERNAL_EXCHANGE_CODE),
        (StepKind.GLOBAL_EXCHANGE, MemoryCategory.GLOBAL_EXCHANGE_CODE),
    ):
        rows = np.flatnonzero(kinds == kind)
        code[rows] = share_out(tile[rows], weight[rows], table.by_category[category])
    return ExchangeCode(step, tile, code)


def control_code_of_step(report: Any, step: int) -> np.ndarray:
    """Control code of ``step`` on every tile: each tile's control code over the steps evenly,
    the last step taking what rounding leaves."""
    programs = checked_programs(report)
    num_steps = programs.num_steps
    if not 0 <= step < num_steps:
        raise IndexError(f"step {step}: steps go from 0 to {num_steps - 1}")
    control = memory_table(report).by_category[MemoryCategory.CONTROL_CODE]
    share = control // num_steps
    if step == num_steps - 1:
        return control - share * (num_steps - 1)
    return share
