"""Operations as libpva's OperationAnalysis sees them: each library op call (the nearest
debug context at or above a step's or variable's own that is an op call, as
``debug_groups.operation_contexts`` decides) with the program steps and variables that
belong to it, ordered by the first step they run in. A step belongs to every op whose
vertices it ran (``attribution``: a compute set several ops share), and each op's cycles
are its share of its steps over every run, the figure Operations shows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.attribution import step_pieces
from profiler_core.analysis.checks import (
    check_debug_ids,
    checked_graph,
    checked_programs,
    checked_runs,
    debug_of,
)
from profiler_core.analysis.debug_groups import operation_contexts
from profiler_core.analysis.operation_groups import phase_names


@dataclass(frozen=True)
class OperationMembers:
    """One row per operation context that owns a step or a variable, by first step (operations
    without steps last), then by context id."""

    context: np.ndarray  # int64 debug context id of the op call
    step_offsets: np.ndarray  # int64 (ops + 1,): op i's steps are steps[o[i]:o[i+1]]
    steps: np.ndarray  # int64 program steps, ascending
    var_offsets: np.ndarray  # int64 (ops + 1,)
    vars: np.ndarray  # int64 variables, ascending
    #: int64 (ops,) its cycles over every run: its share of each step it ran
    cycles: np.ndarray | None = None
    #: its cycles per phase it ran in: int64 (ops, phases), and the phases' labels
    phase_cycles: np.ndarray | None = None
    phase_labels: tuple[str, ...] = ()

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
    if graph.vc_debug is not None:
        check_debug_ids(report, "graph", "vc_debug", graph.vc_debug, debug)
    pieces = step_pieces(programs, graph, checked_runs(report), debug)
    owner = np.append(operation_contexts(debug), -1)  # id -1 (no context) has no operation
    piece_op = owner[pieces.context]
    var_op = owner[graph.var_debug.astype(np.int64)]
    contexts = np.union1d(piece_op[piece_op >= 0], var_op[var_op >= 0])
    first = np.full(len(owner), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, piece_op[piece_op >= 0], pieces.step[piece_op >= 0])
    contexts = contexts[np.lexsort((contexts, first[contexts]))]
    order_of = np.full(len(owner), -1, dtype=np.int64)
    order_of[contexts] = np.arange(len(contexts))
    piece_owner = np.where(piece_op >= 0, order_of[piece_op], -1)
    pairs = np.unique(np.stack((piece_owner, pieces.step)), axis=1)  # a step once per op
    step_offsets, step_rows = _cut(pairs[0], pairs[1], len(contexts))
    var_owner = np.where(var_op >= 0, order_of[var_op], -1)
    var_offsets, var_rows = _cut(var_owner, np.arange(graph.num_variables), len(contexts))
    mine = piece_owner >= 0
    cycles = np.bincount(piece_owner[mine], pieces.cycles[mine], len(contexts))
    phases, phase_of = np.unique(pieces.phase, return_inverse=True)
    names = phase_names(debug, phases)  # one label for a phase's many time steps
    labels = sorted(set(names))
    label_of = np.array([labels.index(n) for n in names], dtype=np.int64)
    phase_of = label_of[phase_of.reshape(-1)] if len(label_of) else phase_of.reshape(-1)
    width = len(labels)
    flat = np.bincount(
        piece_owner[mine] * width + phase_of[mine],
        pieces.cycles[mine],
        len(contexts) * width,
    )
    return OperationMembers(
        contexts.astype(np.int64),
        step_offsets,
        step_rows,
        var_offsets,
        var_rows,
        cycles.astype(np.int64),
        flat.reshape(len(contexts), width).astype(np.int64),
        tuple(labels),
    )
