"""Comparing two reports: the same analyses side by side with differences (B minus A).

Memory per category (totals, per IPU, and per tile when the tile counts agree), cycles per
step kind and in total, operations matched by op, layer or name, variables matched by
name, program steps and program tree nodes matched by name. Reports of different sizes
compare without error: a row found on one side only is marked and zero on the other.
Each part is computed the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_programs, checked_runs
from profiler_core.analysis.matching import Matched, match_names, match_rows
from profiler_core.analysis.memory import MemoryTable, memory_table
from profiler_core.analysis.operations import operations_table
from profiler_core.analysis.program_tree import program_tree
from profiler_core.model.kinds import StepKind
from profiler_core.model.lazy_columns import StringColumn
from profiler_core.model.strings import Strings

ROOT_KEY = "(program root)"  # the key of a program tree root in ``programs``
#: The value columns of ``ReportComparison.operations``: OperationsTable fields.
OPERATION_COLUMNS = (
    "compute_cycles", "exchange_cycles", "sync_cycles", "other_cycles", "vertices",
    "code_bytes", "variable_bytes", "flops", "total_cycles",
)  # fmt: skip


@dataclass(frozen=True)
class MemoryComparison:
    """Bytes per memory category (rows: ``MemoryCategory`` values), gaps included."""

    a: np.ndarray  # int64 (categories,) over every tile of A
    b: np.ndarray  # int64 (categories,)
    per_ipu: Matched  # keys "IPU k", one column per category label
    per_tile_diff: np.ndarray | None  # int64 (categories, tiles) B - A, None if tiles differ
    total_a: int
    total_b: int

    @property
    def diff(self) -> np.ndarray:
        return self.b - self.a


@dataclass(frozen=True)
class CyclesComparison:
    """Cycles per step kind (rows: ``StepKind`` values) over every run, and run totals."""

    a: np.ndarray  # int64 (kinds,)
    b: np.ndarray  # int64 (kinds,)
    total_a: int  # sum of the runs' total cycles
    total_b: int
    runs: Matched  # keys "run k": cycles of each run

    @property
    def diff(self) -> np.ndarray:
        return self.b - self.a


class ReportComparison:
    """Report A against report B; each part is computed once, when first used."""

    def __init__(self, a: Any, b: Any) -> None:
        self.a = a
        self.b = b

    @cached_property
    def memory(self) -> MemoryComparison:
        table_a, table_b = memory_table(self.a), memory_table(self.b)
        same_tiles = table_a.num_tiles == table_b.num_tiles
        diff = table_b.by_category - table_a.by_category if same_tiles else None
        return MemoryComparison(
            a=table_a.by_category.sum(axis=1),
            b=table_b.by_category.sum(axis=1),
            per_ipu=match_rows(*_per_ipu(table_a), *_per_ipu(table_b)),
            per_tile_diff=diff,
            total_a=int(table_a.total().sum()),
            total_b=int(table_b.total().sum()),
        )

    @cached_property
    def cycles(self) -> CyclesComparison:
        by_kind_a, runs_a = _cycles(self.a)
        by_kind_b, runs_b = _cycles(self.b)
        return CyclesComparison(
            a=by_kind_a,
            b=by_kind_b,
            total_a=int(runs_a.sum()),
            total_b=int(runs_b.sum()),
            runs=match_rows(
                [f"run {i}" for i in range(len(runs_a))],
                {"cycles": runs_a},
                [f"run {i}" for i in range(len(runs_b))],
                {"cycles": runs_b},
            ),
        )

    def operations(self, group_by: str = "name", columns: Sequence[str] | None = None) -> Matched:
        """Operations matched by label: cycles by class, vertices, code, memory, FLOPs (or
        only ``columns`` of ``OPERATION_COLUMNS``: 400,000 groups a side are 3 MB a column)."""
        # Labels are unique on each side; they stay string-table ids when debug.cbor is
        # columnar (matched by their text with numpy, decoded only when shown). The
        # columns are this call's own: released as they are matched, not held twice.
        names = tuple(OPERATION_COLUMNS if columns is None else columns)
        if unknown := set(names) - set(OPERATION_COLUMNS):
            raise ValueError(f"not operations columns: {sorted(unknown)}")
        return match_rows(
            *_operations(self.a, group_by, names), *_operations(self.b, group_by, names),
            release=True,
        )  # fmt: skip

    @cached_property
    def variables(self) -> Matched:
        """Variables matched by name (the n-th of a name with the n-th): bytes, always-live."""
        return match_names(*_variables(self.a), *_variables(self.b))

    @cached_property
    def steps(self) -> Matched:
        """Program steps matched by kind and name: executions and cycles over every run."""
        return match_names(*_steps(self.a), *_steps(self.b))

    @cached_property
    def programs(self) -> Matched:
        """Program tree nodes matched by name: cycles and executions over every run."""
        return match_names(*_nodes(self.a), *_nodes(self.b))


def compare_reports(a: Any, b: Any) -> ReportComparison:
    """Compare report A (the baseline) with report B."""
    return ReportComparison(a, b)


def _per_ipu(table: MemoryTable) -> tuple[list[str], dict[str, np.ndarray]]:
    per_ipu = table.per_ipu(True)
    keys = [f"IPU {i}" for i in range(table.num_ipus)]
    return keys, {c.label: per_ipu[:, i] for i, c in enumerate(table.categories(True))}


def _cycles(report: Any) -> tuple[np.ndarray, np.ndarray]:
    programs = checked_programs(report)
    runs = checked_runs(report)
    duration = programs.step_cycles.max(axis=1) if programs.num_steps else np.zeros(0, np.int64)
    by_kind = np.zeros(len(StepKind), dtype=np.int64)
    for run in runs:
        kinds = programs.step_kind[run.step_ids].astype(np.int64)
        np.add.at(by_kind, kinds, duration[run.step_ids])
    return by_kind, np.array([run.total_cycles for run in runs], dtype=np.int64)


def _operations(
    report: Any, group_by: str, names: tuple[str, ...]
) -> tuple[Sequence[str], dict[str, np.ndarray]]:
    table = operations_table(report, group_by)
    return table.label_column, {name: getattr(table, name) for name in names}


def _variables(report: Any) -> tuple[Sequence[str], dict[str, np.ndarray]]:
    graph = checked_graph(report)
    strings = graph.strings
    names: Sequence[str]
    if isinstance(strings, Strings):  # string-table ids: matched by text, never decoded all
        names = StringColumn(strings, graph.var_name)
    else:
        names = strings.take(graph.var_name)
    return names, {
        "bytes": np.asarray(graph.var_bytes, dtype=np.int64),
        # 0 or 1 (so B - A is -1, 0 or 1): a byte a variable, not eight (400k a side)
        "always_live": graph.var_always_live.astype(np.int8),
    }


def _steps(report: Any) -> tuple[list[str], dict[str, np.ndarray]]:
    tree = program_tree(report)
    programs = report.programs
    # each kind's name looked up, not an enum made per step (36k steps a side)
    kind_names = {int(kind): kind.poplar_name for kind in StepKind}
    kinds = map(kind_names.__getitem__, programs.step_kind.tolist())
    names = report.graph.strings.take(programs.step_name)
    keys = [f"{kind} {name}" for kind, name in zip(kinds, names, strict=True)]
    return keys, {"executions": tree.step_executions, "cycles": tree.step_cycles}


def _nodes(report: Any) -> tuple[list[str], dict[str, np.ndarray]]:
    tree = program_tree(report)
    names = report.graph.strings.take(tree.name)
    # A root is named after its program: two builds of one model under other names still
    # have the same root, so roots are keyed by position, not by name.
    names = [ROOT_KEY if up < 0 else n for n, up in zip(names, tree.parent.tolist(), strict=True)]
    return names, {"cycles": tree.cycles, "executions": tree.executions}
