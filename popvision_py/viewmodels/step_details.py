"""What the Execution Trace says about one program step: its hover text, and the Details tab
(vertices per codelet, tiles, bytes exchanged, tile balance and debug context), from numpy
columns of the programs, graph and debug sections.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.execution import TileBalance, tile_balance
from profiler_core.model.kinds import StepKind
from profiler_core.model.unique import sorted_unique


@dataclass(frozen=True)
class StepDetails:
    step: int
    name: str
    kind: str  # Poplar's name
    properties: ColumnTable  # Property, Value
    codelets: ColumnTable  # Codelet, Vertices, Tiles
    balance: TileBalance | None  # compute steps only


def step_name(report: Any, step: int) -> str:
    index = int(report.programs.step_name[step])
    return report.strings[index] if index >= 0 else f"step {step}"


def balance_or_none(report: Any, step: int) -> TileBalance | None:
    if int(report.programs.step_cs[step]) < 0:
        return None
    return tile_balance(report, step)


def span_tooltip(report: Any, step: int, ipu: int, operation: str) -> str:
    """Hover text of an instance of ``step`` on ``ipu``."""
    programs = report.programs
    kind = StepKind(int(programs.step_kind[step]))
    cycles = programs.step_cycles[step]
    lines = [
        step_name(report, step),
        f"Kind: {kind.poplar_name}",
        f"Cycles on IPU {ipu}: {int(cycles[ipu]):,} (slowest IPU {int(cycles.max()):,})",
        f"Operation: {operation or '(none)'}",
    ]
    balance = balance_or_none(report, step)
    if balance is not None:
        lines.append(f"Tiles busy: {len(balance.tiles):,}")
        lines.append(
            f"Tile cycles: min {balance.min:,} · mean {balance.mean:,.1f} · max {balance.max:,}"
        )
    lines.append(f"Program step {step}")
    return "\n".join(lines)


def merged_tooltip(kind: int, count: int, start: float, end: float) -> str:
    what = "mixed kinds" if kind < 0 else StepKind(int(kind)).poplar_name
    return (
        f"{count:,} step instances ({what}) in cycles {start:,.0f}-{end:,.0f}, "
        "each narrower than a pixel: zoom in to see them."
    )


def step_details(report: Any, step: int, debug: Any = None) -> StepDetails:
    programs, graph = report.programs, report.graph
    kind = StepKind(int(programs.step_kind[step])).poplar_name
    cs = int(programs.step_cs[step])
    rows: list[tuple[str, str]] = [
        ("Program step", str(step)),
        ("Name", step_name(report, step)),
        ("Kind", kind),
        ("Cycles per IPU", ", ".join(f"{int(c):,}" for c in programs.step_cycles[step])),
    ]
    codelets = ColumnTable([Column("Codelet", []), Column("Vertices", [], kind="count")])
    balance = balance_or_none(report, step)
    if cs >= 0:
        rows.append(("Compute set", report.strings[int(graph.cs_name[cs])]))
        codelets = _codelet_table(report, cs)
        rows.append(("Vertices", f"{int(graph.vc_count[graph.vc_cs == cs].sum()):,}"))
    if balance is not None:
        rows.append(("Tiles with vertices", f"{len(balance.tiles):,}"))
        rows.append(
            (
                "Tile cycles",
                f"min {balance.min:,}, mean {balance.mean:,.1f}, max {balance.max:,}",
            )
        )
    exch = programs.exch_step == step
    if exch.any() or programs.step_global_bytes[step]:
        rows.append(("Bytes exchanged in", f"{int(programs.exch_bytes_in[exch].sum()):,}"))
        rows.append(("Bytes exchanged out", f"{int(programs.exch_bytes_out[exch].sum()):,}"))
        rows.append(("Tiles exchanging", f"{int(sorted_unique(programs.exch_tile[exch]).size):,}"))
        rows.append(("Bytes over IPU-Links", f"{int(programs.step_global_bytes[step]):,}"))
    rows += _debug_rows(debug, int(programs.step_debug[step]))
    properties = ColumnTable(
        [Column("Property", [r[0] for r in rows]), Column("Value", [r[1] for r in rows])]
    )
    return StepDetails(step, step_name(report, step), kind, properties, codelets, balance)


def _codelet_table(report: Any, cs: int) -> ColumnTable:
    graph = report.graph
    rows = np.flatnonzero(graph.vc_cs == cs)
    types, inverse = np.unique(graph.vc_type[rows], return_inverse=True)
    vertices = np.bincount(inverse, weights=graph.vc_count[rows], minlength=types.size)
    tiles = np.array(
        [sorted_unique(graph.vc_tile[rows][inverse == i]).size for i in range(types.size)], np.int64
    )
    names = [report.strings[int(graph.vt_name[t])] for t in types.tolist()]
    order = np.argsort(-vertices, kind="stable")
    return ColumnTable(
        [
            Column("Codelet", [names[i] for i in order.tolist()], "The vertex type (codelet)"),
            Column("Vertices", vertices[order].astype(np.int64), "Vertices of it", "count"),
            Column("Tiles", tiles[order], "Tiles running it", "count"),
        ]
    )


def _debug_rows(debug: Any, context: int) -> list[tuple[str, str]]:
    if debug is None or not 0 <= context < len(debug):
        return [("Debug context", "(none)")]
    rows = [("Debug context", debug.name[context])]
    for label, values in (("Operation", debug.op), ("Layer", debug.layer), ("API", debug.api)):
        if values[context]:
            rows.append((label, values[context]))
    if debug.file[context]:
        rows.append(("Source", f"{debug.file[context]}:{int(debug.line[context])}"))
    return rows


def balance_histogram(balance: TileBalance, bins: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(counts, edges) of the tiles' cycles: how evenly the compute set is spread."""
    if balance.cycles.size == 0:
        return np.zeros(0, np.int64), np.zeros(1)
    low, high = balance.min, max(balance.max, balance.min + 1)
    return np.histogram(balance.cycles, bins=bins, range=(low, high))
