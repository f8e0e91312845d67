"""Lowered variables: each variable's part on one tile (a tile-mapping region), with the
equivalence class of its liveness -- the variables live over exactly the same program steps
share a class, whose steps are half-open intervals [start, end) of program steps.

Always-live variables (and constants) are live over every step; a not-always-live variable
over its live ranges [first, last] from the liveness section.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, checked_liveness
from profiler_core.analysis.liveness_tiles import _region_bytes


@dataclass(frozen=True)
class LoweredVariables:
    """One row per tile-mapping region; liveness classes as intervals cut per class."""

    var: np.ndarray  # int64 the variable the part belongs to
    tile: np.ndarray  # int64
    bytes: np.ndarray  # int64
    var_class: np.ndarray  # int64 (variables,) equivalence class of each variable
    class_offsets: np.ndarray  # int64 (classes + 1,): class c's intervals are [o[c], o[c+1])
    class_start: np.ndarray  # int64 first step of an interval
    class_end: np.ndarray  # int64 step after its last

    def __len__(self) -> int:
        return len(self.var)

    @property
    def num_classes(self) -> int:
        return len(self.class_offsets) - 1

    def intervals(self, cls: int) -> tuple[np.ndarray, np.ndarray]:
        part = slice(int(self.class_offsets[cls]), int(self.class_offsets[cls + 1]))
        return self.class_start[part], self.class_end[part]

    def on_tile(self, tile: int) -> np.ndarray:
        """The rows on ``tile``, in row order."""
        return np.flatnonzero(self.tile == tile)


def lowered_variables(report: Any) -> LoweredVariables:
    graph = checked_graph(report)
    liveness = checked_liveness(report)
    num_steps = len(liveness.step_live_bytes)
    num_vars = graph.num_variables
    live_all = np.asarray(graph.var_always_live, bool) | np.asarray(graph.var_is_constant, bool)
    # every variable's intervals as a tuple key; variables are grouped by equal keys
    order = np.lexsort((liveness.interval_first, liveness.interval_var))
    ivar = liveness.interval_var[order].astype(np.int64)
    first = liveness.interval_first[order].astype(np.int64).tolist()
    end = (liveness.interval_last[order].astype(np.int64) + 1).tolist()
    keys: list[tuple[int, ...]] = [()] * num_vars
    bounds = np.searchsorted(ivar, np.arange(num_vars + 1)).tolist()
    for v in np.unique(ivar).tolist():
        lo, hi = bounds[v], bounds[v + 1]
        keys[v] = tuple(x for pair in zip(first[lo:hi], end[lo:hi], strict=True) for x in pair)
    everything = (0, num_steps) if num_steps else ()
    for v in np.flatnonzero(live_all).tolist():
        keys[v] = everything
    class_of: dict[tuple[int, ...], int] = {}
    var_class = np.array([class_of.setdefault(k, len(class_of)) for k in keys], dtype=np.int64)
    flat = [list(k) for k in class_of]  # in class order
    counts = np.array([len(k) // 2 for k in flat], dtype=np.int64)
    pairs = np.array([x for k in flat for x in k], dtype=np.int64).reshape(-1, 2)
    return LoweredVariables(
        var=graph.region_var.astype(np.int64),
        tile=graph.region_tile.astype(np.int64),
        bytes=_region_bytes(graph),
        var_class=var_class,
        class_offsets=np.concatenate(([0], np.cumsum(counts))).astype(np.int64),
        class_start=pairs[:, 0].copy(),
        class_end=pairs[:, 1].copy(),
    )
