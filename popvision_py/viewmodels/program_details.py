"""What the Program Tree's details panel says about a line: for a program step its compute
set, vertices per codelet, tiles, exchange bytes and debug context chain; for a program
node its kind, steps, cycles and debug context chain."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from popvision_py.viewmodels.program_tree import NOT_RUN, ProgramTreeViewModel
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.model.kinds import ProgramKind
from profiler_core.model.unique import sorted_unique

NOT_RECORDED = "not recorded (the report has no per-step variable access)"


@dataclass(frozen=True)
class LineDetails:
    rows: list[tuple[str, str]]  # property, value
    vertices: ColumnTable  # vertex type, vertices, tiles (empty for lines without a compute set)
    debug_context: int  # -1 for none


def vertices_of_compute_set(graph: Any, compute_set: int) -> ColumnTable:
    """One row per vertex type (codelet) of ``compute_set``: vertices and tiles it runs on."""
    rows = np.flatnonzero(graph.vc_cs == compute_set) if compute_set >= 0 else np.zeros(0, int)
    types = graph.vc_type[rows].astype(np.int64)
    unique, inverse = np.unique(types, return_inverse=True)
    counts = np.bincount(inverse, weights=graph.vc_count[rows], minlength=unique.size)
    span = int(graph.vc_tile.max(initial=0)) + 1
    tile_pairs = sorted_unique(inverse.astype(np.int64) * span + graph.vc_tile[rows])
    tiles = np.bincount(tile_pairs // span, minlength=unique.size)
    names = graph.strings.take(graph.vt_name[unique]) if unique.size else []
    return ColumnTable(
        [
            Column("Vertex type", names, "The codelet the vertices run"),
            Column("Vertices", counts.astype(np.int64), "Vertices of this type", "count"),
            Column("Tiles", tiles.astype(np.int64), "Tiles with vertices of this type", "count"),
        ]
    )


def line_details(
    model: ProgramTreeViewModel, line: int, graph: Any, programs: Any, debug: Any
) -> LineDetails:
    """The details of ``line`` from the graph and program columns (``graph`` may be None
    when the graph section is damaged)."""
    lines = model.lines
    rows: list[tuple[str, str]] = [("Name", lines.name_of(line)), ("Kind", model.text(line, 1))]
    run_text = [(header, model.text(line, column)) for column, header in
                ((2, "Executions"), (3, "Cycles"), (4, "Share of all cycles"))]  # fmt: skip
    empty = vertices_of_compute_set(graph, -1) if graph is not None else ColumnTable([])
    if not lines.is_step(line):
        steps = lines.subtree_steps(line)
        rows += [("Program node", str(line)), *run_text]
        if int(model.tree.kind[line]) == ProgramKind.REPEAT:
            rows.append(("Repeat count", f"{int(programs.node_count[line]):,}"))
        rows.append(("Own program steps", f"{model.tree.steps_of(line).size:,}"))
        rows.append(("Program steps in subtree", f"{steps.size:,}"))
        context = int(programs.node_debug[line]) if line < len(programs.node_debug) else -1
        return LineDetails(rows, empty, context)
    step = lines.step_of(line)
    rows += [("Program step", str(step)), *run_text]
    per_ipu = ", ".join(f"{int(c):,}" for c in programs.step_cycles[step])
    rows.append(("Cycles per execution, per IPU", per_ipu if model.executed else NOT_RUN))
    compute_set = int(programs.step_cs[step])
    vertices = empty
    if compute_set >= 0 and graph is not None:
        rows.append(("Compute set", graph.strings[int(graph.cs_name[compute_set])]))
        vertices = vertices_of_compute_set(graph, compute_set)
        in_cs = graph.vc_cs == compute_set
        rows.append(("Vertices", f"{int(graph.vc_count[in_cs].sum()):,}"))
        rows.append(("Vertex types", f"{len(vertices):,}"))
        rows.append(("Tiles used", f"{sorted_unique(graph.vc_tile[in_cs]).size:,}"))
    else:
        rows.append(("Compute set", "none (this step runs no vertices)"))
    exchange = programs.exch_step == step
    if exchange.any():
        rows.append(("Exchange tiles", f"{sorted_unique(programs.exch_tile[exchange]).size:,}"))
        rows.append(("Exchange bytes in", f"{int(programs.exch_bytes_in[exchange].sum()):,}"))
        rows.append(("Exchange bytes out", f"{int(programs.exch_bytes_out[exchange].sum()):,}"))
    if int(programs.step_global_bytes[step]):
        rows.append(("Bytes over IPU-Links", f"{int(programs.step_global_bytes[step]):,}"))
    rows.append(("Variables read / written", NOT_RECORDED))
    return LineDetails(rows, vertices, int(programs.step_debug[step]))
