"""Insights rules about cycles: compute sets whose slowest tile keeps the others waiting."""

from __future__ import annotations

import numpy as np

from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import Evidence, Finding, Severity
from profiler_core.insights.sources import source_ref

CYCLE_IMBALANCE = 2.0  # slowest tile / mean tile of a compute set
CYCLE_SHARE = 0.05  # cycles lost waiting, as a share of every compute set's cycles


def cycle_imbalance(ctx: InsightsContext) -> list[Finding]:
    """The compute set losing the most cycles to its slowest tile, over every execution."""
    programs = ctx.report.programs
    graph = ctx.report.graph
    num_cs = len(graph.cs_name)
    if not len(programs.cst_cs) or not num_cs:
        return []
    cs = programs.cst_cs.astype(np.int64)
    cycles = programs.cst_cycles.astype(np.int64)
    slowest = np.zeros(num_cs, dtype=np.int64)
    np.maximum.at(slowest, cs, cycles)
    total = np.bincount(cs, weights=cycles, minlength=num_cs)
    tiles = np.bincount(cs, minlength=num_cs)
    mean = np.divide(total, tiles, out=np.zeros(num_cs), where=tiles > 0)
    runs = np.zeros(num_cs, dtype=np.int64)
    steps = np.flatnonzero(programs.step_cs >= 0)
    np.add.at(runs, programs.step_cs[steps], ctx.executions_per_step[steps])
    lost = (slowest - mean) * runs
    spent = float((slowest * runs).sum())
    worst = int(np.argmax(lost))
    ratio = slowest[worst] / mean[worst] if mean[worst] else 0.0
    if spent <= 0 or ratio < CYCLE_IMBALANCE or lost[worst] / spent < CYCLE_SHARE:
        return []
    rows = np.flatnonzero(cs == worst)
    tile = int(programs.cst_tile[rows[np.argmax(cycles[rows])]])
    name = graph.strings[int(graph.cs_name[worst])]
    return [
        Finding(
            rule="cycle-imbalance",
            severity=Severity.WARNING,
            title=f"Compute set {name}: tile {tile} takes {ratio:.1f}x the mean tile's cycles",
            evidence=(
                Evidence("Slowest tile", int(slowest[worst]), "cycles"),
                Evidence("Mean tile", float(mean[worst]), "cycles"),
                Evidence("Executions", int(runs[worst])),
                Evidence("Cycles lost waiting", float(lost[worst]), "cycles"),
                Evidence("Share of compute cycles", 100 * lost[worst] / spent, "%"),
            ),
            suggestion=f"Every tile waits for the slowest one before the exchange, so {name} "
            f"lasts as long as tile {tile}'s work on every execution. How much work each "
            "tile gets follows how the operation laid out its vertices.",
            source=source_ref(ctx.debug, int(graph.cs_debug[worst])),
            weight=float(lost[worst] / spent),
            tiles=(tile,),
        )
    ]
