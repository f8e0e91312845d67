"""The largest always-live and not-always-live variables at the liveness peak, each with
the operation and the user's file:line of its debug context."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from profiler_core.analysis.liveness import variables_live_at
from profiler_core.insights.context import InsightsContext
from profiler_core.insights.findings import SourceRef
from profiler_core.insights.sources import source_refs


@dataclass(frozen=True)
class PeakVariables:
    """Largest first: ``var``/``names``/``bytes``/``sources`` of one group of variables."""

    var: np.ndarray  # int64
    names: list[str]
    bytes: np.ndarray  # int64
    sources: list[SourceRef]
    total_bytes: int  # of the whole group, not only the rows kept

    def __len__(self) -> int:
        return len(self.var)


@dataclass(frozen=True)
class LivenessPeak:
    step: int
    step_name: str
    live_bytes: int  # always-live included
    always_live: PeakVariables
    not_always_live: PeakVariables


def _rows(ctx: InsightsContext, var: np.ndarray, size: np.ndarray, total: int) -> PeakVariables:
    graph = ctx.report.graph
    return PeakVariables(
        var=var,
        names=graph.strings.take(graph.var_name[var]),
        bytes=size,
        sources=source_refs(ctx.debug, graph.var_debug[var]),
        total_bytes=total,
    )


def liveness_peak(ctx: InsightsContext, count: int = 10) -> LivenessPeak:
    table = ctx.liveness
    step = table.peak_step
    graph = ctx.report.graph
    always = np.flatnonzero(np.asarray(graph.var_always_live, dtype=bool))
    size = graph.var_bytes[always].astype(np.int64)
    order = np.lexsort((always, -size))
    always_rows = _rows(ctx, always[order][:count], size[order][:count], int(size.sum()))
    if step >= 0:
        live = variables_live_at(ctx.report, step, debug=ctx.debug)
        live_rows = _rows(ctx, live.var[:count], live.bytes[:count], int(live.bytes.sum()))
        name = ctx.report.graph.strings[int(table.step_name[step])]
    else:
        empty = np.zeros(0, dtype=np.int64)
        live_rows = _rows(ctx, empty, empty, 0)
        name = ""
    return LivenessPeak(step, name, table.peak_bytes, always_rows, live_rows)
