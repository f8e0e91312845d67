"""Liveness: live bytes at every program step (with and without the always-live bytes), the
peak step, and the variables live at one step, largest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import (
    checked_live_bytes,
    checked_liveness,
    checked_step_labels,
    debug_of,
)
from profiler_core.analysis.debug_groups import debug_column


@dataclass(frozen=True)
class LivenessTable:
    """Live memory per program step, in program-step order."""

    not_always_live: np.ndarray  # int64 (steps,) bytes of not-always-live variables
    always_live_bytes: int
    step_name: np.ndarray  # int32 string index of each step's name
    step_kind: np.ndarray  # uint8 kinds.StepKind

    @property
    def num_steps(self) -> int:
        return len(self.not_always_live)

    def live_bytes(self, include_always_live: bool = True) -> np.ndarray:
        """Bytes live during each step."""
        if include_always_live:
            return self.not_always_live + self.always_live_bytes
        return self.not_always_live

    @property
    def peak_step(self) -> int:
        """The first step with the most live bytes, -1 when there are no steps."""
        return int(np.argmax(self.not_always_live)) if self.num_steps else -1

    @property
    def peak_bytes(self) -> int:
        """Live bytes at the peak step, always-live bytes included."""
        step = self.peak_step
        return self.always_live_bytes + (int(self.not_always_live[step]) if step >= 0 else 0)


def liveness_table(report: Any) -> LivenessTable:
    liveness = checked_live_bytes(report)
    programs = checked_step_labels(report)
    return LivenessTable(
        not_always_live=np.asarray(liveness.step_live_bytes, dtype=np.int64),
        always_live_bytes=int(liveness.always_live_bytes),
        step_name=programs.step_name,
        step_kind=programs.step_kind,
    )


@dataclass(frozen=True)
class LiveVariables:
    """The not-always-live variables live during one step, largest first."""

    step: int
    var: np.ndarray  # int64 variable ids
    bytes: np.ndarray  # int64
    first: np.ndarray  # int64 first step of the live range that covers the step
    last: np.ndarray  # int64 last step of that range (inclusive)
    names: list[str]
    debug_names: list[str]

    def __len__(self) -> int:
        return len(self.var)


def variables_live_at(report: Any, step: int, debug: Any = None) -> LiveVariables:
    """Not-always-live variables whose live range [first, last] contains ``step``."""
    liveness = checked_liveness(report)
    graph = report.graph
    steps = len(liveness.step_live_bytes)
    if not 0 <= step < steps:
        raise IndexError(f"step {step}: steps go from 0 to {steps - 1}")
    covers = (liveness.interval_first <= step) & (step <= liveness.interval_last)
    var = liveness.interval_var[covers].astype(np.int64)
    first = liveness.interval_first[covers].astype(np.int64)
    last = liveness.interval_last[covers].astype(np.int64)
    var, unique_rows = np.unique(var, return_index=True)  # one row per variable
    first, last = first[unique_rows], last[unique_rows]
    size = graph.var_bytes[var].astype(np.int64)
    order = np.lexsort((var, -size))
    var, size, first, last = var[order], size[order], first[order], last[order]
    return LiveVariables(
        step=step,
        var=var,
        bytes=size,
        first=first,
        last=last,
        names=graph.strings.take(graph.var_name[var]),
        debug_names=debug_column(debug_of(report, debug), "name", graph.var_debug[var]),
    )
