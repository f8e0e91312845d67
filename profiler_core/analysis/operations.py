"""Operations: cycles, vertices, code, memory and FLOPs per library op, layer, operation
name, debug context, or phase.

Cycles: every executed step's cycles go to the operation that ran them (``attribution``: the
steps of a compute set several ops share are shared among them), split into compute
(OnTileExecute), exchange (DoExchange, GlobalExchange), sync (Sync) and other (stream copies,
control, prints), and by the framework phase they ran in (``phase_cycles``: a pipeline's
ramp-up, steady state and ramp-down, the feeds, the gradient all-reduce), so both "matMul
took X" and "X of that ran in the steady state" can be read; grouped by ``phase`` the rows
are those phases. Vertices, vertex types, FLOPs per execution and vertex code come from the
vertex counts through the op that added them; code that groups share on a tile is counted
once (``code_sharing``). Memory is the bytes of the variables created in the group -- added
up, although they are not all live at once -- and of those live at the Liveness peak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.attribution import StepPieces
from profiler_core.analysis.checks import checked_liveness
from profiler_core.analysis.code_sharing import CodeSharing, code_sharing, group_code
from profiler_core.analysis.liveness import liveness_table
from profiler_core.analysis.operation_groups import PHASE, Grouped, phase_columns
from profiler_core.analysis.operation_index import (
    OPERATION_GROUPINGS,
    OperationIndex,
    operation_index,
)
from profiler_core.errors import ReportError
from profiler_core.model.kinds import StepKind
from profiler_core.model.lazy_columns import StringColumn, as_str_list
from profiler_core.model.unique import sorted_unique

__all__ = ["CYCLE_CLASSES", "OPERATION_GROUPINGS", "OperationsTable", "operations_table"]

CYCLE_CLASSES = ("compute", "exchange", "sync", "other")
_CLASS_OF_KIND = np.full(len(StepKind), 3, dtype=np.int64)
_CLASS_OF_KIND[StepKind.ON_TILE_EXECUTE] = 0
_CLASS_OF_KIND[[StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE]] = 1
_CLASS_OF_KIND[StepKind.SYNC] = 2


@dataclass(frozen=True)
class OperationsTable:
    """One row per group that has steps, compute sets or variables, most cycles first; ""
    is the group without an op, layer or context (or, by phase, outside every phase)."""

    group_by: str
    #: each row's group; a StringColumn (debug string-table ids) when the contexts are lazy
    label_column: Sequence[str]
    compute_cycles: np.ndarray  # int64
    exchange_cycles: np.ndarray  # int64
    sync_cycles: np.ndarray  # int64
    other_cycles: np.ndarray  # int64
    step_executions: np.ndarray  # int64 executed step instances it ran (a shared one counts)
    compute_sets: np.ndarray  # int64 compute sets it has vertices in
    vertices: np.ndarray  # int64
    vertex_types: np.ndarray  # int64 distinct vertex types
    code_bytes: np.ndarray  # int64 vertex code: each type once per tile, shared code included
    variables: np.ndarray  # int64 variables created in the group
    variable_bytes: np.ndarray  # int64 added up: they are not all live at once
    flops: np.ndarray  # int64 per execution of every compute set of the group
    #: int64 compute + exchange + sync + other (made from them when not given)
    total_cycles: np.ndarray = field(default=None)  # type: ignore[assignment]
    #: the phases' labels ("" for cycles outside every phase), and each row's cycles in each:
    #: int64 (rows, phases), adding up to ``total_cycles`` row by row
    phase_labels: list[str] = field(default_factory=lambda: [""])
    phase_cycles: np.ndarray = field(default=None)  # type: ignore[assignment]
    #: int64 code no other group uses; their sum plus ``shared_code_bytes`` is the device's
    own_code_bytes: np.ndarray = field(default=None)  # type: ignore[assignment]
    shared_code_bytes: int = 0  # code several groups use, each codelet once per tile
    code_sharing: CodeSharing = field(default_factory=CodeSharing)
    #: int64 bytes of the group's variables live at the Liveness peak (always-live included)
    live_at_peak_bytes: np.ndarray = field(default=None)  # type: ignore[assignment]
    peak_step: int = -1  # the Liveness peak step, -1 when unknown
    notes: tuple[str, ...] = ()  # what a reader needs to know for the figures to add up

    def __post_init__(self) -> None:
        if self.total_cycles is None:
            total = self.compute_cycles + self.exchange_cycles
            total += self.sync_cycles
            total += self.other_cycles
            object.__setattr__(self, "total_cycles", total)
        if self.phase_cycles is None:
            object.__setattr__(self, "phase_cycles", self.total_cycles.reshape(-1, 1))
        if self.own_code_bytes is None:
            object.__setattr__(self, "own_code_bytes", self.code_bytes)
        if self.live_at_peak_bytes is None:
            object.__setattr__(self, "live_at_peak_bytes", np.zeros_like(self.variable_bytes))

    def __len__(self) -> int:
        return len(self.label_column)

    @cached_property
    def labels(self) -> list[str]:
        """Each row's label as a str (decoded on first use)."""
        return as_str_list(self.label_column)

    def row(self, label: str) -> int:
        """The row of ``label``; KeyError when there is none."""
        return self.labels.index(label)


def operations_table(
    report: Any,
    group_by: str = "op",
    run: int | None = None,
    debug: Any = None,
    index: OperationIndex | None = None,
) -> OperationsTable:
    """Operations grouped ``group_by`` (one of ``OPERATION_GROUPINGS``) over run ``run``,
    or every run when None (``index``, when given, is ``operation_index`` of the same). A
    damaged debug.cbor raises its ReportError."""
    if index is None:
        index = operation_index(report, group_by, run, debug)
    graph, programs, pieces, groups = index.graph, index.programs, index.pieces, index.groups
    phase_labels, piece_phase = phase_columns(index.debug, pieces)
    n = len(groups)

    # The row order first, so each column below is made and reordered in turn: with 400,000
    # groups the table is 12 columns of 3 MB, and no second copy of it is ever held.
    variable_bytes = _sum_by(groups.variable, graph.var_bytes, n)
    total_cycles = _sum_by(groups.piece, pieces.cycles, n)
    order = _most_cycles_first(total_cycles, variable_bytes)
    used = np.zeros(n, dtype=bool)
    used[groups.piece[pieces.executions > 0]] = True
    used[groups.vertex] = True
    used[groups.compute_set[_without_vertices(graph)]] = True
    used[groups.variable] = True
    order = order[used[order]]  # groups with nothing in them are left out
    del used
    columns: dict[str, Any] = {"variable_bytes": variable_bytes[order]}
    columns["total_cycles"] = total_cycles[order]
    del variable_bytes, total_cycles
    columns["variables"] = np.bincount(groups.variable, minlength=n)[order].astype(np.int64)
    piece_class = _CLASS_OF_KIND[programs.step_kind[pieces.step]]
    for k, name in enumerate(CYCLE_CLASSES):
        mine = piece_class == k
        columns[f"{name}_cycles"] = _sum_by(groups.piece[mine], pieces.cycles[mine], n)[order]
    # a step once per group, though two of its contexts may share it
    pairs = sorted_unique(groups.piece * max(programs.num_steps, 1) + pieces.step)
    step_of_pair = pairs % max(programs.num_steps, 1)
    executions = pieces.executions[np.searchsorted(pieces.step, step_of_pair)]
    columns["step_executions"] = _sum_by(pairs // max(programs.num_steps, 1), executions, n)[order]
    columns["phase_cycles"] = _phase_cycles(groups.piece, piece_phase, pieces, n, phase_labels)
    columns["phase_cycles"] = columns["phase_cycles"][order]
    columns["live_at_peak_bytes"], peak_step, live_note = _live_at_peak(report, groups, n)
    columns["live_at_peak_bytes"] = columns["live_at_peak_bytes"][order]
    columns |= _vertex_columns(report, graph, groups, n, order)
    labels = _label_rows(groups.label_column, order)
    code = group_code(groups.vertex, graph.vc_type, graph.vc_tile, graph.vt_code_bytes, n)
    columns["code_bytes"] = code.code_bytes[order]
    columns["own_code_bytes"] = code.own_bytes[order]
    # only the sharers' labels are decoded: 400,000 groups' are not
    sharing = code_sharing(code, groups.label_column, graph.strings.take(graph.vt_name))
    notes = _notes(index, columns["total_cycles"], live_note)
    return OperationsTable(
        group_by=group_by,
        label_column=labels,
        phase_labels=phase_labels,
        shared_code_bytes=code.shared_bytes,
        code_sharing=sharing,
        peak_step=peak_step,
        notes=notes,
        **columns,
    )


def _vertex_columns(
    report: Any, graph: Any, groups: Grouped, n: int, order: np.ndarray
) -> dict[str, np.ndarray]:
    """Vertices, FLOPs, vertex types and compute sets: through the op that added each
    vertex-count row (a compute set without vertices, through its own context)."""
    vertex = groups.vertex
    num_types = max(len(graph.vt_name), 1)
    type_pairs = sorted_unique(vertex * num_types + graph.vc_type)
    vertex_types = np.bincount(type_pairs // num_types, minlength=n)
    num_cs = max(len(graph.cs_name), 1)
    empty = _without_vertices(graph)
    alone = groups.compute_set[empty] * num_cs + np.flatnonzero(empty)
    cs_pairs = sorted_unique(np.concatenate((vertex * num_cs + graph.vc_cs, alone)))
    return {
        "vertices": _sum_by(vertex, graph.vc_count, n)[order],
        "flops": _sum_by(vertex, graph.vc_flops, n)[order],
        "vertex_types": vertex_types[order].astype(np.int64),
        "compute_sets": np.bincount(cs_pairs // num_cs, minlength=n)[order].astype(np.int64),
    }


def _without_vertices(graph: Any) -> np.ndarray:
    """Which compute sets have no vertices (they count through their own context)."""
    empty = np.ones(len(graph.cs_name), dtype=bool)
    empty[graph.vc_cs] = False
    return empty


def _phase_cycles(
    group: np.ndarray, phase: np.ndarray, pieces: StepPieces, n: int, labels: list[str]
) -> np.ndarray:
    width = len(labels)
    flat = _sum_by(group * width + phase, pieces.cycles, n * width)
    return flat.reshape(n, width)


def _live_at_peak(report: Any, groups: Grouped, n: int) -> tuple[np.ndarray, int, str]:
    """Bytes of each group's variables live at the Liveness peak step: the always-live ones
    and those whose live range covers the step. Without liveness, zeros and why."""
    try:
        liveness = checked_liveness(report)
        peak = liveness_table(report).peak_step
    except ReportError as error:
        return np.zeros(n, np.int64), -1, f"Live at peak is not known: {error}"
    graph = report.graph
    live = np.asarray(graph.var_always_live, dtype=bool).copy()
    if peak >= 0:
        covers = (liveness.interval_first <= peak) & (liveness.interval_last >= peak)
        live[liveness.interval_var[covers]] = True
    return _sum_by(groups.variable[live], graph.var_bytes[live], n), peak, ""


def _notes(index: OperationIndex, total_cycles: np.ndarray, live_note: str) -> tuple[str, ...]:
    debug, graph, pieces = index.debug, index.graph, index.pieces
    notes = []
    if index.group_by == PHASE:
        notes.append(
            "By phase, a compute set's vertices and code count in the phase of its first run; "
            "variables are made by operations, not in a phase: they are all outside phases."
        )
    if debug is None or not len(debug):
        notes.append(
            "This report has no debug contexts: every cycle, vertex and variable is in (none)."
        )
    idle = int(np.count_nonzero(total_cycles == 0))
    if idle:
        notes.append(
            f"{idle} operations ran no steps: they hold variables or vertices only."
            if idle > 1
            else "1 operation ran no steps: it holds variables or vertices only."
        )
    if pieces.shared_steps:
        notes.append(
            f"{pieces.shared_steps:,} steps ran the vertices of several operations in one "
            "compute set: their cycles are shared among them by each one's busiest tile."
        )
    if pieces.phase_only_cycles and graph.vc_debug is None:
        notes.append(
            f"{pieces.phase_only_cycles:,} cycles of compute sets a pipeline phase shares are "
            "in (none): this report predates vertices naming their op (record it again to "
            "see them by op)."
        )
    elif pieces.phase_only_cycles:
        notes.append(
            f"{pieces.phase_only_cycles:,} cycles are a pipeline phase's own control (the "
            "Repeat of its time steps), which no operation ran: they are in (none)."
        )
    if live_note:
        notes.append(live_note)
    return tuple(notes)


def _sum_by(group: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int64)
    np.add.at(out, group, np.asarray(values, dtype=np.int64))
    return out


def _most_cycles_first(total_cycles: np.ndarray, variable_bytes: np.ndarray) -> np.ndarray:
    """Group order by cycles, then memory, then label (the groups' labels are sorted, so a
    stable order breaks the remaining ties by label)."""
    return np.lexsort((-variable_bytes, -total_cycles))


def _label_rows(labels: Sequence[str], order: np.ndarray) -> Sequence[str]:
    if isinstance(labels, StringColumn):
        return StringColumn(labels.table, labels.ids[order])
    return list(map(labels.__getitem__, order.tolist()))
