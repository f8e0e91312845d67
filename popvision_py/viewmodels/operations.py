"""The Operations report's state without Qt: the operations table of a software layer (or of
the framework's phases) as columns that add up -- the cycle classes and the phases each sum
to the total, a column of the cycles in hidden columns says what is off screen, memory
columns say what they add -- and the totals beside the other pages' figures. A selected
operation's tabs come from ``operation_parts``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from popvision_py.viewmodels.format import format_bytes
from popvision_py.viewmodels.operation_labels import (
    GROUP_BY_LABELS,
    NO_PHASE_LABEL,
    NONE_LABEL,
    operation_label,
)
from popvision_py.viewmodels.operation_parts import OperationParts, OperationPartsMixin
from popvision_py.viewmodels.table import Column, ColumnTable
from profiler_core.analysis.operation_index import operation_index
from profiler_core.analysis.operation_totals import OperationTotals, operation_totals
from profiler_core.analysis.operations import OperationsTable, operations_table

__all__ = [
    "GROUP_BY_LABELS",
    "NONE_LABEL",
    "NO_PHASE_LABEL",
    "OperationParts",
    "OperationsViewModel",
    "operation_label",
    "operations_column_table",
]

CLASS_HEADERS = ("Compute cycles", "Exchange cycles", "Sync cycles", "Other cycles")
HIDDEN_CLASSES = "Cycles in hidden classes"
HIDDEN_PHASES = "Cycles in hidden phases"
NO_PHASE_HEADER = "Cycles outside phases"
VARIABLES = "Variables (not all live at once)"

COLUMN_HELP = {
    "Operation": "The operation: its library op, layer, debug name or context, or the phase; "
    "(none) holds what has no debug context or ran no operation.",
    "Total cycles": "Cycles of every executed step the operation ran, in the runs counted. "
    "A step whose compute set holds several operations' vertices is shared among them by "
    "each one's busiest tile.",
    "Compute cycles": "Cycles of its OnTileExecute steps.",
    "Exchange cycles": "Cycles of its DoExchange and GlobalExchange steps.",
    "Sync cycles": "Cycles of its Sync steps.",
    "Other cycles": "Cycles of its stream copies, control and print steps.",
    HIDDEN_CLASSES: "Cycles of the cycle classes whose columns are hidden: with it the "
    "class columns shown add up to the total.",
    HIDDEN_PHASES: "Cycles of the phases whose columns are hidden: with it the phase "
    "columns shown add up to the total.",
    NO_PHASE_HEADER: "Its cycles outside the framework's phases.",
    "% of total": "Its total cycles as a share of all operations' cycles.",
    "Vertices": "Vertices it added (in compute sets of its own or shared).",
    "Vertex types": "Distinct codelets its vertices run.",
    "Own code": "Vertex code no other operation uses (each codelet once per tile). Own code "
    "of every row plus the shared code, once, is Memory's Vertex code (see the totals).",
    "Shared code": "Vertex code its vertices use that other operations' vertices use too, on "
    "the same tiles: each row shows all it shares, so the column does not add up; the "
    "Shared code tab lists who shares it, and the totals count it once.",
    VARIABLES: "Bytes of the variables created in the operation, added up: they are not all "
    "live at once, so the column can add up to more than the device holds.",
    "Live at peak": "Bytes of its variables live at the Liveness peak step (always-live "
    "ones included): the column adds up to the Liveness peak.",
    "FLOPs": "Floating-point operations of its vertices, per execution of each compute set.",
    "Step executions": "Executed instances of the program steps it ran (a step several "
    "operations shared counts for each).",
}
DEFAULT_HIDDEN = ("Vertex types", "Shared code", "Step executions")
REMAINDERS = (HIDDEN_CLASSES, HIDDEN_PHASES)

IN_COLUMN = "In"
IN_HELP = (
    "Comparing: which report has the operation -- A and B, only in A, or only in B (its "
    "figures are B's)."
)
BOTH, ONLY_A, ONLY_B = "A and B", "only in A", "only in B"


def phase_header(label: str) -> str:
    """``rampUp cycles`` for phase ``pipeline::rampUp`` (its help names it in full)."""
    return f"{label.rsplit('::', 1)[-1]} cycles" if label else NO_PHASE_HEADER


def phase_headers(table: OperationsTable) -> list[str]:
    """The phase columns' headers; none when nothing ran in a phase, or when the rows are
    the phases themselves."""
    if list(table.phase_labels) == [""] or table.group_by == "phase":
        return []
    return [phase_header(label) for label in table.phase_labels]


def operations_column_table(table: OperationsTable) -> ColumnTable:
    """The operations as table columns, in the order the table names them."""
    total = table.total_cycles
    share = 100.0 * total / max(int(total.sum()), 1)
    values: list[tuple[str, Any, str]] = [
        ("Operation", [operation_label(x, table.group_by) for x in table.labels], "text"),
        ("Total cycles", total, "count"),
        ("% of total", share, "percent"),
        ("Compute cycles", table.compute_cycles, "count"),
        ("Exchange cycles", table.exchange_cycles, "count"),
        ("Sync cycles", table.sync_cycles, "count"),
        ("Other cycles", table.other_cycles, "count"),
        (HIDDEN_CLASSES, np.zeros(len(table), np.int64), "count"),
    ]
    phases = phase_headers(table)
    values += [(h, table.phase_cycles[:, k], "count") for k, h in enumerate(phases)]
    if phases:
        values.append((HIDDEN_PHASES, np.zeros(len(table), np.int64), "count"))
    values += [
        ("Vertices", table.vertices, "count"),
        ("Vertex types", table.vertex_types, "count"),
        ("Own code", table.own_code_bytes, "bytes"),
        ("Shared code", table.code_bytes - table.own_code_bytes, "bytes"),
        (VARIABLES, table.variable_bytes, "bytes"),
        ("Live at peak", table.live_at_peak_bytes, "bytes"),
        ("FLOPs", table.flops, "count"),
        ("Step executions", table.step_executions, "count"),
    ]
    helps = {phase_header(p): _phase_help(p) for p in table.phase_labels if p}
    columns = [Column(h, data, helps.get(h) or column_help(h), kind) for h, data, kind in values]
    return ColumnTable(columns, matcher=_label_matcher(columns[0].values))


def _phase_help(phase: str) -> str:
    return (
        f"Its cycles that ran in the phase {phase}: with the other phase columns, they add "
        "up to its total."
    )


def column_help(header: str) -> str:
    if header in COLUMN_HELP:
        return COLUMN_HELP[header]
    return f"Its cycles that ran in the phase {header.removesuffix(' cycles')}."


def _label_matcher(labels: list[str]):
    lowered = [label.lower() for label in labels]

    def matches(text: str) -> np.ndarray:
        needle = text.lower()
        return np.flatnonzero(np.fromiter((needle in x for x in lowered), bool, len(lowered)))

    return matches


class OperationsViewModel(OperationPartsMixin):
    """Operations of one report grouped ``group_by`` over run ``run`` (None: every run)."""

    def __init__(self, report: Any, group_by: str = "op", run: int | None = None) -> None:
        self.report = report
        self.group_by = group_by
        self.run = run
        self.debug = report.debug if hasattr(report, "debug_or_none") else None
        self.index = operation_index(report, group_by, run, debug=self.debug)
        self.table = operations_table(report, group_by, run, index=self.index)
        self.totals: OperationTotals = operation_totals(report, self.table, run)
        self.columns = operations_column_table(self.table)
        self.labels: list[str] = list(self.table.labels)  # of the table's source rows
        self.phase_headers = phase_headers(self.table)
        self.only_in_b: set[str] = set()

    @property
    def headers(self) -> list[str]:
        return [c.header for c in self.columns.columns]

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

    def label_holding(self, steps: np.ndarray) -> str | None:
        """The label of the row holding most of the cycles of program ``steps`` -- an
        operation picked in another grouping (a graph node's op: its layer, its library
        op) -- or None when no row ran any of them. A step never run counts one cycle."""
        pieces, rows = self.index.pieces, self.index.groups.piece
        mine = np.isin(pieces.step, steps) & (rows >= 0)
        if not mine.any():
            return None
        held = np.bincount(rows[mine], weights=pieces.cycles[mine] + 1)
        return self.index.labels[int(held.argmax())]

    def hidden_sums(self, hidden: Iterable[str]) -> dict[str, bool]:
        """Fill the columns of the cycles in hidden columns for the ``hidden`` headers, and
        say which of them to show: one whose family (the cycle classes, the phases) has a
        column hidden, so the columns shown still add up to the total."""
        hidden = set(hidden)
        families = {HIDDEN_CLASSES: CLASS_HEADERS, HIDDEN_PHASES: self.phase_headers}
        shown = {}
        by_header = {c.header: c for c in self.columns.columns}
        for remainder, members in families.items():
            if remainder not in by_header:
                continue
            present = [h for h in members if h in by_header]
            off = [by_header[h].values for h in present if h in hidden]
            values = np.asarray(by_header[remainder].values)
            values[:] = np.sum(off, axis=0) if off else 0
            # a family hidden whole is not on screen to add up
            shown[remainder] = 0 < len(off) < len(present)
        return shown

    def default_hidden(self) -> tuple[str, ...]:
        """The columns hidden until asked for: a few rarely read, and the phase columns when
        no operation that computes ran in a phase (only the feeds' copies did: a model that
        is not pipelined)."""
        table = self.table
        computing = table.compute_cycles > 0
        ops_ran = any(
            label and int(table.phase_cycles[computing, k].sum()) > 0
            for k, label in enumerate(table.phase_labels)
        )
        return DEFAULT_HIDDEN + (() if ops_ran else tuple(self.phase_headers))

    def include_other(self, other: OperationsViewModel) -> None:
        """Compare mode: B's operations that A has not are listed too (with B's figures, 0
        in a column B has not: a phase A alone ran), and an "In" column says of each row: A
        and B, only in A or only in B."""
        known, in_b = set(self.labels), set(other.labels)
        extra = [i for i, label in enumerate(other.labels) if label not in known]
        present = [BOTH if label in in_b else ONLY_A for label in self.labels]
        present += [ONLY_B] * len(extra)
        theirs = {c.header: c for c in other.columns.columns}
        columns = []
        for mine in self.columns.columns:
            column = theirs.get(mine.header)
            if mine.kind == "text":
                values: Any = list(mine.values) + [column.values[i] for i in extra]
            else:
                added = (
                    np.asarray(column.values)[extra]
                    if column is not None
                    else np.zeros(len(extra), np.asarray(mine.values).dtype)
                )
                values = np.concatenate([np.asarray(mine.values), added])
            columns.append(replace(mine, values=values))
        columns.insert(1, Column(IN_COLUMN, present, IN_HELP))
        self.labels += [other.labels[i] for i in extra]
        self.only_in_b = {other.labels[i] for i in extra}
        self.columns = ColumnTable(columns, matcher=_label_matcher(columns[0].values))

    def totals_text(self, units: str = "KiB") -> str:
        """The totals line: each figure the rows add up to, beside the other page's."""
        parts = []
        for name, value, other, page in self.totals.rows():
            as_text = f"{value:,}" if name == "cycles" else format_bytes(value, units=units)
            if other is None and page:
                parts.append(f"{name} {as_text} ({page} not available)")
            elif other is None:
                parts.append(f"{name} {as_text}")
            else:
                shown = f"{other:,}" if name == "cycles" else format_bytes(other, units=units)
                sign = "=" if other == value else "≠"
                parts.append(f"{name} {as_text} {sign} {page} {shown}")
        return "Totals: " + " · ".join(parts)

    def notes_text(self) -> str:
        return " ".join(self.table.notes)
