"""The per-tile strip under an expanded IPU of the Execution Trace: for every pixel column, the
compute step drawn there and, for every pixel row of tiles, the largest of those tiles'
cycles over the step's slowest tile (1.0 = as slow as the slowest tile, 0 = idle).

One array of (rows, width) per paint, from programs.cst_cs / cst_tile / cst_cycles; a step's
row vector is computed once per strip height and cached.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.analysis.trace_window import MERGED, TraceSpans, trace_window
from profiler_core.model.kinds import StepKind

MERGED_VALUE = -1.0
"""A pixel column of several compute steps merged below a pixel (zoom in to see tiles)."""


class TileHeatMap:
    """Cycles per tile of compute steps, as pixel images of one IPU's tiles."""

    def __init__(self, report: Any) -> None:
        self.report = report
        programs = report.programs
        self.tiles_per_ipu = int(report.target.tiles_per_ipu)
        # The rows of each compute set: an order (4 bytes a row) and where each set starts.
        self._order = np.argsort(programs.cst_cs, kind="stable").astype(np.int32)
        num_cs = int(programs.cst_cs.max(initial=-1)) + 1
        self._offsets = np.searchsorted(programs.cst_cs[self._order], np.arange(num_cs + 1))
        self._rows: dict[tuple[int, int, int], np.ndarray] = {}

    def step_rows(self, step: int, ipu: int, rows: int) -> np.ndarray:
        """(rows,) float32: per pixel row of IPU ``ipu``'s tiles, the max over its tiles of
        cycles / the step's slowest tile (over every IPU)."""
        key = (step, ipu, rows)
        cached = self._rows.get(key)
        if cached is not None:
            return cached
        programs = self.report.programs
        cs = int(programs.step_cs[step])
        rows_of_cs = self._order[:0]
        if 0 <= cs < len(self._offsets) - 1:
            rows_of_cs = self._order[self._offsets[cs] : self._offsets[cs + 1]]
        tiles = programs.cst_tile[rows_of_cs].astype(np.int64)
        cycles = programs.cst_cycles[rows_of_cs].astype(np.float64)
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
        t0, t1 = int(np.floor(x0)), int(np.ceil(x1))
        if t1 <= t0 or width < 1 or rows < 1:
            return np.full((rows, width), np.nan, np.float32), np.full(width, -1, np.int64)
        compute = [int(StepKind.ON_TILE_EXECUTE)]
        spans = trace_window(self.report, run, ipu, t0, t1, width, compute)
        return self.image_of(spans, ipu, x0, x1, width, rows)

    def image_of(
        self, spans: TraceSpans, ipu: int, x0: float, x1: float, width: int, rows: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """``image`` from the compute-step spans of the window, found by the caller."""
        values = np.full((rows, width), np.nan, np.float32)
        column_step = np.full(width, -1, np.int64)
        if len(spans) == 0 or width < 1 or rows < 1 or x1 <= x0:
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


def compute_step_at(report: Any, run: int, ipu: int, x: float) -> int:
    """The compute step IPU ``ipu`` runs at cycle ``x`` of run ``run``, -1 for none."""
    r = report.execution.runs[run]
    i = int(np.searchsorted(r.start_cycles, x, side="right")) - 1
    if i < 0:
        return -1
    step = int(r.step_ids[i])
    programs = report.programs
    busy = x < r.start_cycles[i] + programs.step_cycles[step, ipu]
    return step if busy and programs.step_kind[step] == StepKind.ON_TILE_EXECUTE else -1


def tile_tooltip(report: Any, run: int, ipu: int, x: float, fraction: float) -> str:
    """Hover text of IPU ``ipu``'s tile strip at cycle ``x``, ``fraction`` down its tiles."""
    per_ipu = int(report.target.tiles_per_ipu)
    step = compute_step_at(report, run, ipu, x)
    tile = ipu * per_ipu + min(int(fraction * per_ipu), per_ipu - 1)
    if step < 0:
        return f"IPU {ipu}, tile {tile}: no compute step at cycle {x:,.0f}"
    programs = report.programs
    rows = np.flatnonzero(programs.cst_cs == programs.step_cs[step])
    mine = rows[programs.cst_tile[rows] == tile]
    own = int(programs.cst_cycles[mine[0]]) if mine.size else 0
    slowest = int(programs.cst_cycles[rows].max(initial=0))
    share = f"{100 * own / slowest:.0f}%" if slowest else "-"
    return (
        f"Tile {tile} (IPU {ipu}) in {report.strings[int(programs.step_name[step])]}\n"
        f"{own:,} cycles: {share} of the slowest tile ({slowest:,})"
        + ("" if mine.size else "\nno vertices on this tile: idle")
    )
