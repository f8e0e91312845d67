"""The Operations report's state without Qt: the operations table of a software layer as
columns, and for a selected operation its program steps, compute cycles per tile, FLOPs per
compute set and vertex type, and debug contexts."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from popvision_py.viewmodels.step_colors import step_kind_color
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.checks import selected_runs
from profiler_core.analysis.debug_groups import DebugGroups, debug_groups
from profiler_core.analysis.operations import OperationsTable, operations_table
from profiler_core.errors import ReportError
from profiler_core.model.kinds import StepKind

GROUP_BY_LABELS = {
    "op": "Library op (PopLibs call)",
    "layer": "Layer (outermost name scope)",
    "name": "Operation (debug name of the call)",
    "framework": "Framework op (ONNX node, outermost call)",
    "framework_op": "Framework op type (onnx::Conv)",
    "context": "Debug context (full name)",
}
NONE_LABEL = "(none)"

COLUMN_HELP = {
    "Operation": "The operation: its library op, layer, debug name or context; (none) holds "
    "what has no debug context.",
    "Total cycles": "Cycles of every executed step of the operation in the runs counted.",
    "Compute cycles": "Cycles of its OnTileExecute steps.",
    "Exchange cycles": "Cycles of its DoExchange and GlobalExchange steps.",
    "Sync cycles": "Cycles of its Sync steps.",
    "Other cycles": "Cycles of its stream copies, control and print steps.",
    "% of total": "Its total cycles as a share of all operations' cycles.",
    "Vertices": "Vertices of its compute sets.",
    "Vertex types": "Distinct codelets its vertices run.",
    "Code": "Vertex code: each codelet once per tile it runs on.",
    "Memory": "Bytes of the variables created in the operation.",
    "FLOPs": "Floating-point operations of its vertices, per execution of each compute set.",
    "Step executions": "Executed instances of its program steps.",
}
DEFAULT_HIDDEN = ("Other cycles", "Vertex types")


IN_COLUMN = "In"
IN_HELP = (
    "Comparing: which report has the operation -- A and B, only in A, or only in B (its "
    "figures are B's)."
)
BOTH, ONLY_A, ONLY_B = "A and B", "only in A", "only in B"


def operation_label(label: str) -> str:
    return label or NONE_LABEL


def operations_column_table(table: OperationsTable) -> ColumnTable:
    """The operations as table columns, in the order the table names them."""
    total = table.total_cycles
    share = 100.0 * total / max(int(total.sum()), 1)
    values: list[tuple[str, Any, str]] = [
        ("Operation", [operation_label(x) for x in table.labels], "text"),
        ("Total cycles", total, "count"),
        ("Compute cycles", table.compute_cycles, "count"),
        ("Exchange cycles", table.exchange_cycles, "count"),
        ("Sync cycles", table.sync_cycles, "count"),
        ("Other cycles", table.other_cycles, "count"),
        ("% of total", share, "percent"),
        ("Vertices", table.vertices, "count"),
        ("Vertex types", table.vertex_types, "count"),
        ("Code", table.code_bytes, "bytes"),
        ("Memory", table.variable_bytes, "bytes"),
        ("FLOPs", table.flops, "count"),
        ("Step executions", table.step_executions, "count"),
    ]
    columns = [Column(header, data, COLUMN_HELP[header], kind) for header, data, kind in values]
    return ColumnTable(columns, matcher=_label_matcher(columns[0].values))


def _label_matcher(labels: list[str]):
    lowered = [label.lower() for label in labels]

    def matches(text: str) -> np.ndarray:
        needle = text.lower()
        return np.flatnonzero(np.fromiter((needle in x for x in lowered), bool, len(lowered)))

    return matches


@dataclass(frozen=True)
class OperationParts:
    """What the tabs of a selected operation show."""

    label: str
    steps: np.ndarray  # program steps of the operation, in program order
    compute_sets: np.ndarray  # compute sets whose debug context is in the group
    contexts: np.ndarray  # debug contexts in the group


class OperationsViewModel:
    """Operations of one report grouped ``group_by`` over run ``run`` (None: every run)."""

    def __init__(self, report: Any, group_by: str = "op", run: int | None = None) -> None:
        self.report = report
        self.group_by = group_by
        self.run = run
        self.debug = report.debug if hasattr(report, "debug_or_none") else None
        self.table = operations_table(report, group_by, run, debug=self.debug)
        self.columns = operations_column_table(self.table)
        self.labels: list[str] = list(self.table.labels)  # of the table's source rows
        self.groups: DebugGroups = debug_groups(self.debug, group_by)
        programs, graph = report.programs, report.graph
        self.step_group = self.groups.group_of(programs.step_debug)
        self.cs_group = self.groups.group_of(graph.cs_debug)
        executions = np.zeros(programs.num_steps, dtype=np.int64)
        for r in selected_runs(report, run):
            executions += np.bincount(r.step_ids, minlength=programs.num_steps)
        self.step_executions = executions
        duration = programs.step_cycles.max(axis=1) if programs.num_steps else executions
        self.step_cycles = executions * duration

    def label_at(self, shown_row: int) -> str:
        """The operation label of a shown (sorted, filtered) row."""
        return self.labels[int(self.columns.rows[shown_row])]

    def shown_row_of(self, label: str) -> int:
        """The shown row of ``label``, -1 when it is filtered out or unknown."""
        try:
            source = self.labels.index(label)
        except ValueError:
            return -1
        found = np.flatnonzero(self.columns.rows == source)
        return int(found[0]) if found.size else -1

    def include_other(self, other: OperationsViewModel) -> None:
        """Compare mode: B's operations that A has not are listed too (with B's figures),
        and an "In" column says of each row: A and B, only in A or only in B."""
        known, in_b = set(self.labels), set(other.labels)
        extra = [i for i, label in enumerate(other.labels) if label not in known]
        present = [BOTH if label in in_b else ONLY_A for label in self.labels]
        present += [ONLY_B] * len(extra)
        columns = []
        for mine, theirs in zip(self.columns.columns, other.columns.columns, strict=True):
            if mine.kind == "text":
                values = list(mine.values) + [theirs.values[i] for i in extra]
            else:
                values = np.concatenate([np.asarray(mine.values), np.asarray(theirs.values)[extra]])
            columns.append(replace(mine, values=values))
        columns.insert(1, Column(IN_COLUMN, present, IN_HELP))
        self.labels += [other.labels[i] for i in extra]
        self.only_in_b = {other.labels[i] for i in extra}
        self.columns = ColumnTable(columns, matcher=_label_matcher(columns[0].values))

    def parts(self, label: str) -> OperationParts:
        if label not in self.groups.labels:
            raise ReportError(
                None,
                f"{operation_label(label)} is only in report B: its steps "
                "and tiles are shown when B is the baseline (Swap A and B).",
            )
        group = self.groups.labels.index(label)
        contexts = np.flatnonzero(self.groups.group_of(np.arange(len(self.debug or []))) == group)
        return OperationParts(
            label=label,
            steps=np.flatnonzero(self.step_group == group),
            compute_sets=np.flatnonzero(self.cs_group == group),
            contexts=contexts,
        )

    # -- what the tabs show -------------------------------------------------------------------
    def summary_rows(self, label: str) -> list[tuple[str, str]]:
        row = self.table.row(label)
        out = [
            ("Operation", operation_label(label)),
            ("Grouped by", GROUP_BY_LABELS[self.group_by]),
        ]
        for column in self.columns.columns[1:]:
            out.append((column.header, column.display(row)))
        out.append(("Compute sets", f"{int(self.table.compute_sets[row]):,}"))
        out.append(("Variables", f"{int(self.table.variables[row]):,}"))
        return out

    def steps_table(self, parts: OperationParts) -> ColumnTable:
        programs = self.report.programs
        steps = parts.steps
        kind_values = programs.step_kind[steps].tolist()
        kinds = [StepKind(int(k)).poplar_name for k in kind_values]
        colors = [step_kind_color(k) for k in kind_values]
        return ColumnTable(
            [
                Column("Step", steps, "Program step index", "count"),
                Column("Name", self.report.strings.take(programs.step_name[steps]), "Step name"),
                Column("Kind", kinds, "Program step kind", colors=colors),
                Column("Executions", self.step_executions[steps], "Times it ran", "count"),
                Column("Cycles", self.step_cycles[steps], "Cycles over its executions", "count"),
            ]
        )

    def tile_cycles(self, parts: OperationParts) -> np.ndarray:
        """Compute cycles per tile: the sum over the operation's compute sets of each one's
        cycles on the tile (one execution of each)."""
        programs = self.report.programs
        rows = np.isin(programs.cst_cs, parts.compute_sets)
        return np.bincount(
            programs.cst_tile[rows],
            weights=programs.cst_cycles[rows].astype(np.float64),
            minlength=self.report.target.num_tiles,
        ).astype(np.int64)

    def flops_table(self, parts: OperationParts) -> ColumnTable:
        """FLOPs and vertices per (compute set, vertex type) of the operation."""
        graph = self.report.graph
        rows = np.flatnonzero(np.isin(graph.vc_cs, parts.compute_sets))
        keys = graph.vc_cs[rows].astype(np.int64) * max(len(graph.vt_name), 1) + graph.vc_type[rows]
        unique, inverse = np.unique(keys, return_inverse=True)
        flops = np.bincount(inverse, weights=graph.vc_flops[rows], minlength=unique.size)
        vertices = np.bincount(inverse, weights=graph.vc_count[rows], minlength=unique.size)
        cs = unique // max(len(graph.vt_name), 1)
        types = unique % max(len(graph.vt_name), 1)
        strings = self.report.strings
        return ColumnTable(
            [
                Column("Compute set", strings.take(graph.cs_name[cs]), "Compute set name"),
                Column("Vertex type", strings.take(graph.vt_name[types]), "Codelet"),
                Column("Vertices", vertices.astype(np.int64), "Vertices", "count"),
                Column("FLOPs", flops.astype(np.int64), "FLOPs per execution", "count"),
            ]
        )
