"""``popvision-cli operations``: the Operations page's table -- cycles by class and by the
phase they ran in, vertices, code (own, and shared code once with who shares it), memory
(variables added up, and live at the peak) and FLOPs -- with the totals beside the other
pages' figures and the notes a reader needs for them to add up. The same analyses as the
window's, so the figures are the same."""

from __future__ import annotations

import argparse
from typing import Any

from profiler_core.analysis.operation_totals import OperationTotals, operation_totals
from profiler_core.analysis.operations import OperationsTable, operations_table
from profiler_core.cli.output import Output, category_column
from profiler_core.cli.tables import Table, TextColumn
from profiler_core.report import Report

NO_PHASE_COLUMN = "cycles_outside_phases"


def phase_column(label: str) -> str:
    """``cycles_in_pipeline_steadystate`` for phase ``pipeline::steadyState``."""
    return f"cycles_in_{category_column(label)}" if label else NO_PHASE_COLUMN


def operations(report: Report, args: argparse.Namespace) -> Output:
    table = operations_table(report, args.group_by, args.run, debug=report.debug)
    none = "(no phase)" if args.group_by == "phase" else "(none)"
    columns: dict[str, Any] = {
        args.group_by: TextColumn(table.label_column, none),
        "total_cycles": table.total_cycles,
        "compute_cycles": table.compute_cycles,
        "exchange_cycles": table.exchange_cycles,
        "sync_cycles": table.sync_cycles,
        "other_cycles": table.other_cycles,
    }
    columns |= _phase_columns(table)
    columns |= {
        "step_executions": table.step_executions,
        "compute_sets": table.compute_sets,
        "vertices": table.vertices,
        "vertex_types": table.vertex_types,
        "code_bytes": table.code_bytes,
        "own_code_bytes": table.own_code_bytes,
        "variables": table.variables,
        "variable_bytes": table.variable_bytes,
        "live_at_peak_bytes": table.live_at_peak_bytes,
        "flops": table.flops,
    }
    shown = Table(f"operations by {args.group_by}", columns, notes=list(table.notes))
    sharing = table.code_sharing
    shared = Table(
        "shared code",
        {
            "operations": ["; ".join(m or none for m in members) for members in sharing.members],
            "bytes": sharing.bytes,
            "tiles": sharing.tiles,
            "vertex_types": ["; ".join(types) for types in sharing.vertex_types],
        },
        notes=["code several operations use on the same tiles, each codelet once per tile"],
    )
    found = operation_totals(report, table, args.run)
    totals = _totals(found)
    document = {
        shown.name.replace(" ", "_"): shown,
        "shared_code": shared,
        "totals": totals,
        "notes": list(table.notes),
    }
    out = Output([shown, shared, totals], document=document, csv_table=shown)
    # A figure of another page that could not be read leaves its totals cell empty: the
    # answer is partial, so exit 5 with a warning naming the section, as every command does.
    out.warnings = found.errors
    return out


def _phase_columns(table: OperationsTable) -> dict[str, Any]:
    """A column of cycles per phase (none when no cycle ran in a phase, or by phase)."""
    if list(table.phase_labels) == [""] or table.group_by == "phase":
        return {}
    return {phase_column(p): table.phase_cycles[:, k] for k, p in enumerate(table.phase_labels)}


def _totals(found: OperationTotals) -> Table:
    rows = found.rows()
    return Table(
        "totals",
        {
            "figure": [name for name, *_ in rows],
            "operations": [value for _, value, *_ in rows],
            "elsewhere": [other if other is not None else "" for _, _, other, _ in rows],
            "page": [page for *_, page in rows],
        },
        notes=["what the operations add up to, beside the same figure on another page"],
    )
