"""Poplar's execution summary of a run: total cycles and the tile-average compute (including
and excluding idle worker threads), IPU exchange, global exchange, host exchange and sync
cycles, each a share of the total. One computation for the engine's printed summary,
``popvision-cli execution`` and the Execution Trace summary.

A tile's cycles in a step: compute steps charge each tile its own compute cycles and the
rest of the step it waits; exchange and host steps charge every tile of an IPU that IPU's
cycles; waiting (for slower tiles or IPUs, and in syncs) is sync. Stream-copy set-up and
control steps count in the total only, as in Poplar's summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_programs, checked_run
from profiler_core.model.kinds import StepKind

LABELS = (
    ("compute_incl", "Tile average compute cycles (including idle threads)"),
    ("compute_excl", "Tile average compute cycles (excluding idle threads)"),
    ("ipu_exchange", "Tile average IPU exchange cycles"),
    ("global_exchange", "Tile average global exchange cycles"),
    ("host_exchange", "Tile average host exchange cycles"),
    ("sync", "Tile average sync cycles"),
)
TOTAL_LABEL = "Total cycles"

_HOST = (StepKind.STREAM_COPY_MID, StepKind.PRINT_TENSOR)
_SYNC = (StepKind.SYNC, StepKind.STREAM_COPY_END)


@dataclass(frozen=True)
class ExecutionSummary:
    """One run's tile-average cycles by category (floats: averages over all tiles)."""

    run: int
    name: str
    total_cycles: int
    clock_hz: float
    compute_incl: float
    compute_excl: float | None  # None: the report does not record busy cycles
    ipu_exchange: float
    global_exchange: float
    host_exchange: float
    sync: float

    @property
    def microseconds(self) -> float:
        return self.total_cycles / self.clock_hz * 1e6

    def percent(self, value: float) -> float:
        return 100.0 * value / self.total_cycles if self.total_cycles else 0.0

    def rows(self) -> list[tuple[str, str, float | None]]:
        """(key, Poplar's label, tile-average cycles or None when not recorded)."""
        return [(key, label, getattr(self, key)) for key, label in LABELS]


def execution_summary(report: Any, run: int = 0) -> ExecutionSummary:
    programs = checked_programs(report)
    r = checked_run(report, run)
    target = report.target
    num_tiles, tiles_per_ipu = int(target.num_tiles), int(target.tiles_per_ipu)
    runs = np.zeros(programs.num_steps, dtype=np.int64)
    if len(r.step_ids):
        runs = np.bincount(r.step_ids, minlength=programs.num_steps).astype(np.int64)
    ran = np.flatnonzero(runs)
    kinds = programs.step_kind[ran].astype(np.int64)
    count = runs[ran].astype(np.float64)  # float: tile-cycles of long runs exceed int64
    per_ipu = programs.step_cycles[ran].astype(np.float64)
    duration = per_ipu.max(axis=1, initial=0)
    # tile-cycles of each step when every tile of an IPU spends that IPU's cycles in it
    ipu_tile_cycles = per_ipu.sum(axis=1) * tiles_per_ipu * count
    own = np.zeros(ran.size)  # tile-cycles each step spends on its own work

    compute = kinds == int(StepKind.ON_TILE_EXECUTE)
    cs = programs.step_cs[ran].astype(np.int64)
    with_cs = compute & (cs >= 0)
    num_cs = len(report.graph.cs_name)
    cs_runs = np.bincount(cs[with_cs], weights=count[with_cs], minlength=num_cs)
    cst_cs = programs.cst_cs.astype(np.int64)
    row_runs = cs_runs[cst_cs]
    incl = float((programs.cst_cycles * row_runs).sum())
    busy = getattr(programs, "cs_busy_cycles", None)
    excl = None if busy is None else float((busy * cs_runs).sum())
    cs_tile_cycles = np.bincount(cst_cs, weights=programs.cst_cycles, minlength=num_cs)
    own[with_cs] = cs_tile_cycles[cs[with_cs]] * count[with_cs]
    copies = compute & (cs < 0)  # on-tile copies: every tile of the IPU, as in the step
    own[copies] = ipu_tile_cycles[copies]
    incl += float(own[copies].sum())
    excl = None if excl is None else excl + float(own[copies].sum())

    def spent(*which: StepKind) -> float:
        mine = np.isin(kinds, [int(k) for k in which])
        own[mine] = ipu_tile_cycles[mine]
        return float(ipu_tile_cycles[mine].sum()) / num_tiles

    ipu_exchange = spent(StepKind.DO_EXCHANGE)
    global_exchange = spent(StepKind.GLOBAL_EXCHANGE)
    host_exchange = spent(*_HOST)
    # a sync holds every tile for the whole step; waiting in other steps (for slower tiles
    # or IPUs) is sync too, except in stream-copy set-up and control steps, which count in
    # the total only, as in Poplar's summary
    sync = np.isin(kinds, [int(k) for k in _SYNC])
    not_listed = _control(kinds) | (kinds == int(StepKind.STREAM_COPY_BEGIN))
    waiting = duration * count * num_tiles - own
    sync_cycles = float((duration[sync] * count[sync]).sum()) * num_tiles
    sync_cycles += float(np.maximum(waiting[~sync & ~not_listed], 0).sum())
    return ExecutionSummary(
        run=run,
        name=r.name,
        total_cycles=int(r.total_cycles),
        clock_hz=float(target.clock_hz),
        compute_incl=incl / num_tiles,
        compute_excl=None if excl is None else excl / num_tiles,
        ipu_exchange=ipu_exchange,
        global_exchange=global_exchange,
        host_exchange=host_exchange,
        sync=sync_cycles / num_tiles,
    )


def _control(kinds: np.ndarray) -> np.ndarray:
    control = [int(k) for k in StepKind if k.is_control]
    return np.isin(kinds, control)


def format_summary(summary: ExecutionSummary, indent: str = "  ") -> list[str]:
    """Poplar's wording: ``Total cycles: N (approx U microseconds)`` then one line per
    category with its share of the total."""
    rows = [
        (TOTAL_LABEL, f"{summary.total_cycles:,} (approx {summary.microseconds:,.1f} microseconds)")
    ]
    for _, label, value in summary.rows():
        if value is None:
            rows.append((label, "not recorded in this report"))
        else:
            rows.append((label, f"{value:,.1f} ({summary.percent(value):.1f}% of total)"))
    width = max(len(label) for label, _ in rows) + 2
    return [f"{indent}{label + ':':<{width}}{text}" for label, text in rows]
