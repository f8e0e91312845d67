"""What the Tile Map can colour tiles by, and the values of each metric per tile, from
profiler_core's analyses: total memory, one memory category, a variable's bytes, or the
cycles of the selected program step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from popvision_py.viewmodels.format import format_bytes
from profiler_core.analysis.memory import MemoryTable
from profiler_core.analysis.tile_values import step_cycles_per_tile, variable_bytes_per_tile
from profiler_core.model.kinds import MemoryCategory, StepKind

TOTAL = "Total memory"
VARIABLE = "A variable's bytes"
STEP_CYCLES = "Cycles of the selected step"


def metric_names() -> list[str]:
    return [TOTAL, *(c.label for c in MemoryCategory), VARIABLE, STEP_CYCLES]


@dataclass(frozen=True)
class MetricValues:
    values: np.ndarray  # one per tile
    label: str
    unit: str  # "bytes" or "cycles"
    problem: str = ""  # why the metric has no values ("" when it has)


def metric_values(
    report: Any, table: MemoryTable, metric: str, var: int = -1, step: int = -1
) -> MetricValues:
    """The values of ``metric`` per tile (zeros and a ``problem`` when it cannot be had)."""
    zeros = np.zeros(table.num_tiles, dtype=np.int64)
    if metric == TOTAL:
        return MetricValues(table.total(True), TOTAL, "bytes")
    for category in MemoryCategory:
        if metric == category.label:
            return MetricValues(table.by_category[int(category)], category.label, "bytes")
    if metric == VARIABLE:
        if var < 0:
            return MetricValues(zeros, VARIABLE, "bytes", "Type a variable's name.")
        name = report.graph.strings[int(report.graph.var_name[var])]
        return MetricValues(variable_bytes_per_tile(report, var), f"Bytes of {name}", "bytes")
    if metric == STEP_CYCLES:
        if step < 0:
            return MetricValues(zeros, STEP_CYCLES, "cycles", "Select a program step first.")
        programs = report.programs
        kind = StepKind(int(programs.step_kind[step])).poplar_name
        name = report.graph.strings[int(programs.step_name[step])]
        label = f"Cycles of step {step} ({kind} {name})"
        return MetricValues(step_cycles_per_tile(report, step), label, "cycles")
    raise ValueError(f"unknown metric {metric!r}")


def find_variable(report: Any, text: str) -> int:
    """The variable named ``text``, else the largest whose name contains it; -1 for none."""
    graph = report.graph
    needle = text.strip().lower()
    if not needle:
        return -1
    names = np.array([n.lower() for n in graph.strings.take(graph.var_name)])
    exact = np.flatnonzero(names == needle)
    hits = exact if exact.size else np.flatnonzero(np.char.find(names, needle) >= 0)
    if not hits.size:
        return -1
    return int(hits[np.argmax(graph.var_bytes[hits])])


def memory_details(table: MemoryTable) -> Callable[[int], list[str]]:
    """Hover lines of a tile's memory: total against the limit, then its largest categories."""

    def lines(tile: int) -> list[str]:
        total = int(table.total(True)[tile])
        out = [
            f"Total memory: {total:,} bytes ({100 * total / table.bytes_per_tile:.1f}% of "
            f"{table.bytes_per_tile:,})"
        ]
        values = table.by_category[:, tile]
        for c in np.lexsort((np.arange(len(values)), -values))[:4].tolist():
            if values[c] > 0:
                out.append(f"  {MemoryCategory(c).label}: {format_bytes(int(values[c]))}")
        return out

    return lines
