"""What each row of the Operations table gathers: the group of every step piece (a step's
cycles of one operation, ``attribution``), vertex-count row, variable and compute set, for a
grouping of debug contexts (``debug_groups``) or by framework phase; and the phase column
of every piece."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.attribution import PHASE_OPS, StepPieces
from profiler_core.analysis.debug_groups import debug_column, debug_groups
from profiler_core.analysis.groupings import PHASE
from profiler_core.model.profile import GraphData, ProgramData

"""The grouping by framework phase: the rows are when operations ran, not what ran."""


@dataclass(frozen=True)
class Grouped:
    """The row of each thing the table counts, into ``label_column``."""

    label_column: Sequence[str]  # sorted; "" among them
    piece: np.ndarray  # int64 per step piece
    vertex: np.ndarray  # int64 per vertex-count row
    variable: np.ndarray  # int64 per variable
    compute_set: np.ndarray  # int64 per compute set (those without vertices count by it)
    context: np.ndarray | None = None  # int64 per debug context (None by phase)

    def __len__(self) -> int:
        return len(self.label_column)


def grouped(
    group_by: str, debug: Any, graph: GraphData, programs: ProgramData, pieces: StepPieces
) -> Grouped:
    if group_by == PHASE:
        return _by_phase(debug, graph, programs, pieces)
    groups = debug_groups(debug, group_by)
    contexts = np.arange(0 if debug is None else len(debug), dtype=np.int64)
    return Grouped(
        groups.label_column,
        groups.group_of(pieces.context),
        groups.group_of(graph.vertex_contexts()),
        groups.group_of(graph.var_debug),
        groups.group_of(graph.cs_debug),
        groups.group_of(contexts),
    )


def phase_names(debug: Any, phases: np.ndarray) -> list[str]:
    """The label of each phase context: its op (``pipeline::steadyState``), "" for -1."""
    return debug_column(debug, "op", phases)


def _by_phase(debug: Any, graph: GraphData, programs: ProgramData, pieces: StepPieces) -> Grouped:
    """Rows by phase: a piece by its step's, a compute set's vertices by the phase of its
    first Execute, variables in no phase (they are made by operations, not in a phase)."""
    distinct, piece_phase = np.unique(pieces.phase, return_inverse=True)
    cs_phase = np.full(len(graph.cs_name), -1, dtype=np.int64)
    runs = np.flatnonzero(programs.step_cs >= 0)[::-1]  # the first Execute writes last
    cs_phase[programs.step_cs[runs]] = pieces.step_phase[runs]
    cs_distinct, cs_group = np.unique(cs_phase, return_inverse=True)
    names = phase_names(debug, distinct)
    cs_names = phase_names(debug, cs_distinct)
    labels = sorted(set(names) | set(cs_names) | {""})
    index = {label: i for i, label in enumerate(labels)}
    piece = np.array([index[n] for n in names], dtype=np.int64)[piece_phase]
    by_cs = np.array([index[n] for n in cs_names], dtype=np.int64)[cs_group]
    return Grouped(
        labels,
        piece.reshape(-1),
        by_cs[graph.vc_cs] if len(by_cs) else np.zeros(len(graph.vc_cs), np.int64),
        np.full(graph.num_variables, index[""], dtype=np.int64),
        by_cs.reshape(-1),
    )


def phase_columns(debug: Any, pieces: StepPieces) -> tuple[list[str], np.ndarray]:
    """The phase columns' labels -- the framework's phases in the order they run, then any
    other, then "" (outside every phase) -- and each piece's column."""
    distinct, column = np.unique(pieces.phase, return_inverse=True)
    names = phase_names(debug, distinct)
    known = {op: i for i, op in enumerate(PHASE_OPS)}
    labels = sorted(set(names) | {""}, key=lambda n: (n == "", known.get(n, len(known)), n))
    index = {label: i for i, label in enumerate(labels)}
    of_distinct = np.array([index[n] for n in names], dtype=np.int64)
    return labels, of_distinct[column.reshape(-1)] if len(of_distinct) else column
