"""Operations as libpva's OperationAnalysis sees them: each library op call (the nearest
debug context at or above a step's or variable's own that is an op call, as
``debug_groups.operation_contexts`` decides) with the program steps and variables that
belong to it, ordered by the first step they run in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import check_debug_ids, checked_graph, checked_programs, debug_of
from profiler_core.analysis.debug_groups import operation_contexts


@dataclass(frozen=True)
class OperationMembers:
    """One row per operation context that owns a step or a variable, by first step (operations
    without steps last), then by context id."""

    context: np.ndarray  # int64 debug context id of the op call
    step_offsets: np.ndarray  # int64 (ops + 1,): op i's steps are steps[o[i]:o[i+1]]
    steps: np.ndarray  # int64 program steps, ascending
    var_offsets: np.ndarray  # int64 (ops + 1,)
    vars: np.ndarray  # int64 variables, ascending

    def __len__(self) -> int:
        return len(self.context)

    def steps_of(self, op: int) -> np.ndarray:
        return self.steps[self.step_offsets[op] : self.step_offsets[op + 1]]

    def vars_of(self, op: int) -> np.ndarray:
        return self.vars[self.var_offsets[op] : self.var_offsets[op + 1]]


def _cut(rank: np.ndarray, rows: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by ``rank`` (the operation's row, -1 for none), ascending within one."""
    keep = rank >= 0
    rank, items = rank[keep], rows[keep]
    sort = np.lexsort((items, rank))
    offsets = np.searchsorted(rank[sort], np.arange(count + 1)).astype(np.int64)
    return offsets, items[sort].astype(np.int64)


def operation_members(report: Any, debug: Any = None) -> OperationMembers:
    programs = checked_programs(report)
    graph = checked_graph(report)
    debug = debug_of(report, debug, strict=True)
    if debug is None:
        empty = np.zeros(0, dtype=np.int64)
        return OperationMembers(empty, np.zeros(1, np.int64), empty, np.zeros(1, np.int64), empty)
    check_debug_ids(report, "programs", "step_debug", programs.step_debug, debug)
    check_debug_ids(report, "graph", "var_debug", graph.var_debug, debug)
    owner = np.append(operation_contexts(debug), -1)  # id -1 (no context) has no operation
    step_op = owner[programs.step_debug.astype(np.int64)]
    var_op = owner[graph.var_debug.astype(np.int64)]
    contexts = np.union1d(step_op[step_op >= 0], var_op[var_op >= 0])
    steps = np.arange(programs.num_steps, dtype=np.int64)
    first = np.full(len(owner), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, step_op[step_op >= 0], steps[step_op >= 0])
    contexts = contexts[np.lexsort((contexts, first[contexts]))]
    order_of = np.full(len(owner), -1, dtype=np.int64)
    order_of[contexts] = np.arange(len(contexts))
    step_owner = np.where(step_op >= 0, order_of[step_op], -1)
    var_owner = np.where(var_op >= 0, order_of[var_op], -1)
    step_offsets, step_rows = _cut(step_owner, steps, len(contexts))
    var_offsets, var_rows = _cut(var_owner, np.arange(graph.num_variables), len(contexts))
    return OperationMembers(
        contexts.astype(np.int64), step_offsets, step_rows, var_offsets, var_rows
    )
