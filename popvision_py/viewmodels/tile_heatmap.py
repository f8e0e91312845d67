"""The per-tile strip under an expanded IPU of the Execution Trace: for every pixel column, the
compute step drawn there and, for every pixel row of tiles, the largest of those tiles'
cycles over the step's slowest tile (1.0 = as slow as the slowest tile, 0 = idle).

One array of (rows, width) per paint, from programs.cst_cs / cst_tile / cst_cycles; a step's
row vector is computed once per strip height and cached.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.analysis.trace_window import MERGED, trace_window
from profiler_core.model.kinds import StepKind

MERGED_VALUE = -1.0
"""A pixel column of several compute steps merged below a pixel (zoom in to see tiles)."""


class TileHeatMap:
    """Cycles per tile of compute steps, as pixel images of one IPU's tiles."""

    def __init__(self, report: Any) -> None:
        self.report = report
        programs = report.programs
        self.tiles_per_ipu = int(report.target.tiles_per_ipu)
        order = np.argsort(programs.cst_cs, kind="stable")
        # Compact copies sorted by compute set: 12 bytes a (compute set, tile) row.
        self._cs = programs.cst_cs[order].astype(np.int32)
        self._tile = programs.cst_tile[order].astype(np.int32)
        self._cycles = programs.cst_cycles[order].astype(np.float32)
        self._rows: dict[tuple[int, int, int], np.ndarray] = {}

    def step_rows(self, step: int, ipu: int, rows: int) -> np.ndarray:
        """(rows,) float32: per pixel row of IPU ``ipu``'s tiles, the max over its tiles of
        cycles / the step's slowest tile (over every IPU)."""
        key = (step, ipu, rows)
        cached = self._rows.get(key)
        if cached is not None:
            return cached
        cs = int(self.report.programs.step_cs[step])
        lo, hi = np.searchsorted(self._cs, [cs, cs + 1]) if cs >= 0 else (0, 0)
        tiles, cycles = self._tile[lo:hi].astype(np.int64), self._cycles[lo:hi]
        slowest = cycles.max(initial=0.0)
        local = tiles - ipu * self.tiles_per_ipu
        mine = (local >= 0) & (local < self.tiles_per_ipu)
        values = np.zeros(rows, np.float32)
        if slowest > 0 and mine.any():
            row = local[mine] * rows // self.tiles_per_ipu
            np.maximum.at(values, row, (cycles[mine] / slowest).astype(np.float32))
        if len(self._rows) > 4096:  # a bound on what zooming through many steps keeps
            self._rows.clear()
        self._rows[key] = values
        return values

    def image(
        self, run: int, ipu: int, x0: float, x1: float, width: int, rows: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(rows, width) float32 values (NaN where no compute step is drawn, MERGED_VALUE in
        columns of merged steps) and the (width,) step drawn in each column (-1 for none)."""
        values = np.full((rows, width), np.nan, np.float32)
        column_step = np.full(width, -1, np.int64)
        t0, t1 = int(np.floor(x0)), int(np.ceil(x1))
        if t1 <= t0 or width < 1 or rows < 1:
            return values, column_step
        compute = [int(StepKind.ON_TILE_EXECUTE)]
        spans = trace_window(self.report, run, ipu, t0, t1, width, compute)
        if len(spans) == 0:
            return values, column_step
        scale = width / (x1 - x0)
        first = np.clip(np.floor((spans.start - x0) * scale), 0, width - 1).astype(np.int64)
        stop = np.clip(np.ceil((spans.end - x0) * scale), 0, width).astype(np.int64)
        stop = np.maximum(stop, first + 1)
        marks = np.full(width, -1, np.int64)
        marks[first] = np.arange(len(spans))  # spans are in time order: a later one wins
        owner = np.maximum.accumulate(marks)
        shown = owner >= 0
        shown[shown] = np.arange(width)[shown] < stop[owner[shown]]
        cols = np.flatnonzero(shown)
        steps = spans.step[owner[cols]].astype(np.int64)
        merged = steps == MERGED
        values[:, cols[merged]] = MERGED_VALUE
        single = cols[~merged]
        unique, inverse = np.unique(steps[~merged], return_inverse=True)
        if unique.size:
            table = np.stack([self.step_rows(int(s), ipu, rows) for s in unique.tolist()])
            values[:, single] = table[inverse].T
            column_step[single] = steps[~merged]
        return values, column_step
