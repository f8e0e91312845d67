"""Operations: cycles, vertices, code, memory and FLOPs per library op, layer, operation
name or debug context.

Cycles: every executed step instance of the runs counted is attributed to its debug
context (``step_debug``; the Sync and exchanges of an Execute carry its compute set's
context) and split into compute (OnTileExecute), exchange (DoExchange, GlobalExchange),
sync (Sync) and other (stream copies, control, prints). Vertices, vertex types, vertex
code (each vertex type once per tile it runs on) and FLOPs per execution come from the
vertex counts through their compute set's context (``cs_debug``); memory is the bytes of
the variables created in the group (``var_debug``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.checks import (
    check_debug_ids,
    checked_graph,
    checked_programs,
    debug_of,
    selected_runs,
)
from profiler_core.analysis.debug_groups import debug_groups
from profiler_core.model.kinds import StepKind
from profiler_core.model.lazy_columns import StringColumn, as_str_list
from profiler_core.model.unique import sorted_unique

CYCLE_CLASSES = ("compute", "exchange", "sync", "other")
_CLASS_OF_KIND = np.full(len(StepKind), 3, dtype=np.int64)
_CLASS_OF_KIND[StepKind.ON_TILE_EXECUTE] = 0
_CLASS_OF_KIND[[StepKind.DO_EXCHANGE, StepKind.GLOBAL_EXCHANGE]] = 1
_CLASS_OF_KIND[StepKind.SYNC] = 2


@dataclass(frozen=True)
class OperationsTable:
    """One row per group that has steps, compute sets or variables, most cycles first; ""
    is the group without an op, layer or context."""

    group_by: str
    #: each row's group; a StringColumn (debug string-table ids) when the contexts are lazy
    label_column: Sequence[str]
    compute_cycles: np.ndarray  # int64
    exchange_cycles: np.ndarray  # int64
    sync_cycles: np.ndarray  # int64
    other_cycles: np.ndarray  # int64
    step_executions: np.ndarray  # int64 executed step instances
    compute_sets: np.ndarray  # int64 compute sets whose context is in the group
    vertices: np.ndarray  # int64
    vertex_types: np.ndarray  # int64 distinct vertex types
    code_bytes: np.ndarray  # int64 vertex code: each type once per tile it runs on
    variables: np.ndarray  # int64 variables created in the group
    variable_bytes: np.ndarray  # int64
    flops: np.ndarray  # int64 per execution of every compute set of the group
    #: int64 compute + exchange + sync + other (made from them when not given)
    total_cycles: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.total_cycles is None:
            total = self.compute_cycles + self.exchange_cycles
            total += self.sync_cycles
            total += self.other_cycles
            object.__setattr__(self, "total_cycles", total)

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
    report: Any, group_by: str = "op", run: int | None = None, debug: Any = None
) -> OperationsTable:
    """Operations grouped ``group_by`` (one of ``GROUPINGS``) over run ``run``,
    or every run when None. A damaged debug.cbor raises its ReportError."""
    graph = checked_graph(report)
    programs = checked_programs(report)
    runs = selected_runs(report, run)
    debug = debug_of(report, debug, strict=True)
    check_debug_ids(report, "graph", "var_debug", graph.var_debug, debug)
    check_debug_ids(report, "graph", "cs_debug", graph.cs_debug, debug)
    check_debug_ids(report, "programs", "step_debug", programs.step_debug, debug)
    groups = debug_groups(debug, group_by)
    n = len(groups)

    # Per program step (tens of thousands): executions over the runs, cycles and group.
    executions = np.zeros(programs.num_steps, dtype=np.int64)
    for r in runs:
        executions += np.bincount(r.step_ids, minlength=programs.num_steps)
    duration = programs.step_cycles.max(axis=1) if programs.num_steps else np.zeros(0, np.int64)
    step_cycles = executions * duration
    step_group = groups.group_of(programs.step_debug)
    step_class = _CLASS_OF_KIND[programs.step_kind]
    var_group = groups.group_of(graph.var_debug)
    cs_group = groups.group_of(graph.cs_debug)
    label_column = groups.label_column
    del groups  # its context -> group lookup: one int64 per debug context

    # The row order first, so each column below is made and reordered in turn: with 400,000
    # groups the table is 12 columns of 3 MB, and no second copy of it is ever held.
    variable_bytes = _sum_by(var_group, graph.var_bytes, n)
    total_cycles = _sum_by(step_group, step_cycles, n)
    order = _most_cycles_first(total_cycles, variable_bytes)
    used = np.zeros(n, dtype=bool)
    used[step_group[executions > 0]] = True
    used[cs_group] = True
    used[var_group] = True
    order = order[used[order]]  # groups with nothing in them are left out
    del used
    columns = {"variable_bytes": variable_bytes[order], "total_cycles": total_cycles[order]}
    del variable_bytes, total_cycles
    columns["variables"] = np.bincount(var_group, minlength=n)[order].astype(np.int64)
    del var_group
    for k, name in enumerate(CYCLE_CLASSES):
        steps = step_class == k
        columns[f"{name}_cycles"] = _sum_by(step_group[steps], step_cycles[steps], n)[order]
    columns["step_executions"] = _sum_by(step_group, executions, n)[order]
    columns["compute_sets"] = np.bincount(cs_group, minlength=n)[order].astype(np.int64)

    vc_group = cs_group[graph.vc_cs]
    num_types = max(len(graph.vt_name), 1)
    columns["vertices"] = _sum_by(vc_group, graph.vc_count, n)[order]
    columns["flops"] = _sum_by(vc_group, graph.vc_flops, n)[order]
    type_pairs = sorted_unique(vc_group * num_types + graph.vc_type)
    vertex_types = np.bincount(type_pairs // num_types, minlength=n)
    columns["vertex_types"] = vertex_types[order].astype(np.int64)
    num_tiles = report.target.num_tiles
    code_keys = sorted_unique((vc_group * num_types + graph.vc_type) * num_tiles + graph.vc_tile)
    code_type = (code_keys // num_tiles) % num_types
    code_group = code_keys // num_tiles // num_types
    columns["code_bytes"] = _sum_by(code_group, graph.vt_code_bytes[code_type], n)[order]

    labels = _label_rows(label_column, order)
    return OperationsTable(group_by=group_by, label_column=labels, **columns)


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
