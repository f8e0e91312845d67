"""The Execution Trace's Summary tab as tables: Poplar's execution summary of the run, and
cycles by step kind for the whole run and for the visible range with each IPU's active
cycles, from profiler_core's execution summary and cycle breakdowns."""

from __future__ import annotations

import numpy as np

from popvision_py.viewmodels.step_colors import step_kind_color
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.execution import CycleBreakdown, RangeCycles
from profiler_core.analysis.execution_summary import TOTAL_LABEL, ExecutionSummary
from profiler_core.model.kinds import StepKind


def shown_kinds(run: CycleBreakdown) -> np.ndarray:
    """The kinds the run executed, in StepKind order."""
    return np.flatnonzero(run.executions_by_kind)


def percent(values: np.ndarray) -> np.ndarray:
    total = values.sum()
    return np.round(100.0 * values / total, 2) if total else np.zeros(len(values))


def summary_table(run: CycleBreakdown, visible: RangeCycles | None) -> ColumnTable:
    kinds = shown_kinds(run)
    names = [StepKind(int(k)).poplar_name for k in kinds.tolist()]
    colors = [step_kind_color(int(k)) for k in kinds.tolist()]
    columns = [
        Column("Kind", names, "The program step kind (Poplar's name)", colors=colors),
        Column("Executions", run.executions_by_kind[kinds], "Instances in the run", "count"),
        Column("Cycles (run)", run.by_kind[kinds], "Step cycles (slowest IPU)", "count"),
        Column("% of run", percent(run.by_kind)[kinds], "Share of the run's cycles", "percent"),
    ]
    if visible is not None:
        span = f"cycles {visible.start:,}-{visible.end:,}"
        columns.append(
            Column("Cycles (visible)", visible.by_kind[kinds], f"Clipped to {span}", "count")
        )
        columns.append(
            Column("% of visible", percent(visible.by_kind)[kinds], f"Share of {span}", "percent")
        )
    for ipu in range(run.by_kind_ipu.shape[1]):
        columns.append(
            Column(
                f"IPU {ipu} active",
                run.by_kind_ipu[kinds, ipu],
                f"Cycles IPU {ipu} was busy in the run's steps (the rest it waits for others)",
                "count",
            )
        )
    return ColumnTable(columns)


def poplar_summary_table(summary: ExecutionSummary) -> ColumnTable:
    """Poplar's execution summary (the figures ``printProfileSummary`` and ``popvision-cli
    execution`` give): total cycles, then tile-average cycles by category, share of total."""
    figures = [TOTAL_LABEL]
    cycles = [f"{summary.total_cycles:,}"]
    shares = ["100.0%"]
    for _, label, value in summary.rows():
        figures.append(label)
        if value is None:
            cycles.append("not recorded")
            shares.append("")
        else:
            cycles.append(f"{value:,.1f}")
            shares.append(f"{summary.percent(value):.1f}%")
    return ColumnTable(
        [
            Column("Figure", figures, "Poplar's execution summary line"),
            Column("Cycles", cycles, "Tile average over all tiles (the total: the run's)"),
            Column("% of total", shares, "Share of the run's total cycles"),
        ]
    )
