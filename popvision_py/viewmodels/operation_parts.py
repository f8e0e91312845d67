"""What the tabs of a selected operation show, without Qt: its program steps (its share of
each), compute cycles per tile, FLOPs per compute set and vertex type, the code it shares
and with whom, and its debug contexts -- all from the report's ``OperationIndex``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.operation_labels import GROUP_BY_LABELS, operation_label
from popvision_py.viewmodels.step_colors import step_kind_color
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.errors import ReportError
from profiler_core.model.kinds import StepKind

if TYPE_CHECKING:
    from profiler_core.analysis.operation_index import OperationIndex
    from profiler_core.analysis.operations import OperationsTable


@dataclass(frozen=True)
class OperationParts:
    """What the tabs of a selected operation show."""

    label: str
    group: int  # in the index's groups
    steps: np.ndarray  # program steps it ran, in program order
    compute_sets: np.ndarray  # compute sets it has vertices in
    contexts: np.ndarray  # debug contexts in the group


class OperationPartsMixin:
    """The selected operation's tabs; the view model gives ``report``, ``index``, ``table``,
    ``columns``, ``group_by`` and ``debug``."""

    report: Any
    index: OperationIndex
    table: OperationsTable
    columns: ColumnTable
    group_by: str

    def parts(self, label: str) -> OperationParts:
        try:
            group = self.index.group(label)
        except ValueError:
            raise ReportError(
                None,
                f"{operation_label(label, self.group_by)} is only in report B: its steps "
                "and tiles are shown when B is the baseline (Swap A and B).",
            ) from None
        return OperationParts(
            label=label,
            group=group,
            steps=self.index.steps(group),
            compute_sets=self.index.compute_sets(group),
            contexts=self.index.contexts(group),
        )

    def summary_rows(self, label: str) -> list[tuple[str, str]]:
        row = self.table.row(label)
        out = [
            ("Operation", operation_label(label, self.group_by)),
            ("Grouped by", GROUP_BY_LABELS[self.group_by]),
        ]
        for column in self.columns.columns[1:]:
            if column.header not in ("Cycles in hidden classes", "Cycles in hidden phases"):
                out.append((column.header, column.display(row)))
        out.append(("Compute sets", f"{int(self.table.compute_sets[row]):,}"))
        out.append(("Variables", f"{int(self.table.variables[row]):,}"))
        return out

    def steps_table(self, parts: OperationParts) -> ColumnTable:
        """Its steps: executions, its cycles of each, and the step's own cycles (more when
        other operations' vertices ran in the step too)."""
        programs = self.report.programs
        steps, executions, cycles = self.index.step_shares(parts.group)
        kind_values = programs.step_kind[steps].tolist()
        kinds = [StepKind(int(k)).poplar_name for k in kind_values]
        colors = [step_kind_color(k) for k in kind_values]
        whole = executions * programs.step_cycles.max(axis=1)[steps] if len(steps) else cycles
        return ColumnTable(
            [
                Column("Step", steps, "Program step index", "count"),
                Column("Name", self.report.strings.take(programs.step_name[steps]), "Step name"),
                Column("Kind", kinds, "Program step kind", colors=colors),
                Column("Executions", executions, "Times it ran", "count"),
                Column("Cycles", cycles, "Its cycles of the step over its executions", "count"),
                Column(
                    "Step's cycles",
                    whole,
                    "The step's cycles over its executions: more than its own where other "
                    "operations' vertices ran in the same compute set",
                    "count",
                ),
            ]
        )

    def tile_cycles(self, parts: OperationParts) -> np.ndarray:
        """Compute cycles per tile over its compute sets (one execution of each); on a tile
        shared with other operations, its vertices' share of the tile's cycles."""
        return self.index.tile_cycles(parts.group, self.report.target.num_tiles)

    def flops_table(self, parts: OperationParts) -> ColumnTable:
        """FLOPs and vertices per (compute set, vertex type) of its vertices."""
        graph = self.report.graph
        rows = self.index.vertex_rows(parts.group)
        num_types = max(len(graph.vt_name), 1)
        keys = graph.vc_cs[rows].astype(np.int64) * num_types + graph.vc_type[rows]
        unique, inverse = np.unique(keys, return_inverse=True)
        flops = np.bincount(inverse, weights=graph.vc_flops[rows], minlength=unique.size)
        vertices = np.bincount(inverse, weights=graph.vc_count[rows], minlength=unique.size)
        cs, types = unique // num_types, unique % num_types
        strings = self.report.strings
        return ColumnTable(
            [
                Column("Compute set", strings.take(graph.cs_name[cs]), "Compute set name"),
                Column("Vertex type", strings.take(graph.vt_name[types]), "Codelet"),
                Column("Vertices", vertices.astype(np.int64), "Vertices", "count"),
                Column("FLOPs", flops.astype(np.int64), "FLOPs per execution", "count"),
            ]
        )

    def sharing_table(self, parts: OperationParts, units: str = "KiB") -> ColumnTable:
        """The code it shares, once per set of operations sharing it."""
        sharing = self.table.code_sharing
        rows = sharing.of(parts.label)
        others = [
            ", ".join(
                operation_label(m, self.group_by) for m in sharing.members[i] if m != parts.label
            )
            for i in rows
        ]
        types = [", ".join(sharing.vertex_types[i]) for i in rows]
        return ColumnTable(
            [
                Column("Code", sharing.bytes[rows], "Bytes, once per tile", "bytes", units=units),
                Column("Tiles", sharing.tiles[rows], "Tiles it is on", "count"),
                Column("Vertex types", types, "The codelets"),
                Column("Shared with", others, "The other operations whose vertices use it"),
            ]
        )

    def sharing_summary(self, parts: OperationParts, units: str = "KiB") -> str:
        row = self.table.row(parts.label)
        own = int(self.table.own_code_bytes[row])
        shared = int(self.table.code_bytes[row]) - own
        return (
            f"Its vertices use {format_bytes(own + shared, units=units)} of code: "
            f"{format_bytes(own, units=units)} its own, {format_bytes(shared, units=units)} "
            "shared with the operations below (counted once in the totals)."
        )
