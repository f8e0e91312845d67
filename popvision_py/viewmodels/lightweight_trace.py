"""The Execution Trace's Lightweight mode without Qt: every execution of each timed block
(runs x blocks) over the IPU's cycle counter, as Graph Analyser draws lightweight profiles --
a Runs row, then per IPU a row for each nesting level of blocks and one for its StreamCopies.

A block keeps one colour wherever it is drawn; StreamCopy phases have their own; executions
merged below a pixel are grey. ``spans`` answers the timeline's "what is in [x0, x1) at this
width" from ``profiler_core.analysis.blocks``' windows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from popvision_py.viewmodels.colors import rgba
from popvision_py.viewmodels.step_colors import MERGED_COLOR
from popvision_py.viewmodels.table import Column, ColumnTable
from popvision_py.viewmodels.timeline import NO_KEY, SpanBatch
from popvision_py.viewmodels.trace_colors import label_colors
from profiler_core.analysis.blocks import (
    MERGED,
    BlockExecutions,
    BlockLane,
    block_lanes,
    block_totals,
    lane_window,
)
from profiler_core.model.kinds import BlockKind

RUN_KEY_BASE = -(1 << 40)
"""``key`` of a run's span in the Runs row: RUN_KEY_BASE + run (execution rows are >= 0)."""
RUNS_COLOR = "#8a8f98"
STREAM_COPY_COLORS = {  # the Execution Trace's stream-copy green, darker by phase
    BlockKind.STREAM_COPY_BEGIN: "#2aa876",
    BlockKind.STREAM_COPY_MID: "#1d7a55",
    BlockKind.STREAM_COPY_END: "#5cc79c",
}


@dataclass(frozen=True)
class LightweightLane:
    name: str
    block_lane: BlockLane | None  # None for the Runs row


class LightweightTraceModel:
    """One report's lightweight profile, drawn on one cycle axis."""

    def __init__(self, executions: BlockExecutions, clock_hz: float) -> None:
        self.executions = executions
        self.clock_hz = clock_hz
        self.lanes = [LightweightLane("Runs", None)]
        self.lanes += [LightweightLane(lane.name, lane) for lane in block_lanes(executions)]
        starts, ends = executions.run_start, executions.run_start + executions.run_cycles
        self.x_limits = (
            float(starts.min()) if len(starts) else 0.0,
            float(max(ends.max() if len(ends) else 1, 1)),
        )
        kinds = executions.block_kinds
        palette = label_colors(len(kinds))
        for block, kind in enumerate(kinds.tolist()):
            if BlockKind(kind).is_stream_copy:
                palette[block] = rgba(STREAM_COPY_COLORS[BlockKind(kind)])
        self._block_colors = palette
        self._block_labels = [
            _label(name, BlockKind(k))
            for name, k in zip(executions.block_names, kinds.tolist(), strict=True)
        ]
        # on the chart a StreamCopy row says the phase and the stream: "Begin in"
        self._chart_labels = [
            f"{BlockKind(k).label.removeprefix('StreamCopy')} {name}"
            if BlockKind(k).is_stream_copy
            else name
            for name, k in zip(executions.block_names, kinds.tolist(), strict=True)
        ]
        self.last = SpanBatch.empty()
        self.last_count = np.zeros(0, dtype=np.int64)  # executions in each drawn span

    def lane_names(self) -> list[str]:
        return [lane.name for lane in self.lanes]

    @property
    def num_executions(self) -> int:
        return len(self.executions)

    # -- spans ----------------------------------------------------------------------------
    def spans(self, x0: float, x1: float, width: int) -> SpanBatch:
        """Every lane's spans in cycles [x0, x1) for ``width`` pixels, with labels."""
        runs = self._run_spans(x0, x1)
        parts, counts = [runs], [np.ones(len(runs), np.int64)]
        for index, lane in enumerate(self.lanes):
            if lane.block_lane is None:
                continue
            found = lane_window(self.executions, lane.block_lane, x0, x1, max(width, 1))
            merged = found.row == MERGED
            rows = np.where(merged, 0, found.row)
            block = self.executions.block[rows]
            # every other execution of a block a shade lighter: back to back, they read apart
            color = _shaded(self._block_colors[block], self.executions.index[rows] % 2 == 1)
            color[merged] = rgba(MERGED_COLOR)
            labels = [
                f"{int(c)} executions" if m else self._chart_labels[b]
                for m, b, c in zip(
                    merged.tolist(), block.tolist(), found.count.tolist(), strict=True
                )
            ]
            parts.append(
                SpanBatch(
                    lane=np.full(len(found), index, np.int32),
                    start=found.start.astype(np.float64),
                    end=found.end.astype(np.float64),
                    color=color,
                    key=np.where(merged, NO_KEY, found.row).astype(np.int64),
                    labels=labels,
                )
            )
            counts.append(found.count)
        self.last = SpanBatch.concat(parts)
        self.last_count = np.concatenate(counts)
        return self.last

    def _run_rows(self, x0: float, x1: float) -> np.ndarray:
        ex = self.executions
        ends = ex.run_start + ex.run_cycles
        return np.flatnonzero((ends > x0) & (ex.run_start < x1))

    def _run_spans(self, x0: float, x1: float) -> SpanBatch:
        ex = self.executions
        runs = self._run_rows(x0, x1)
        return SpanBatch(
            lane=np.zeros(len(runs), np.int32),
            start=ex.run_start[runs].astype(np.float64),
            end=(ex.run_start + ex.run_cycles)[runs].astype(np.float64),
            color=_shaded(
                np.tile(np.array(rgba(RUNS_COLOR), np.uint8), (len(runs), 1)), runs % 2 == 1
            ),
            key=RUN_KEY_BASE + runs.astype(np.int64),
            labels=[f"Run {r}: {ex.run_names[r]}" for r in runs.tolist()],
        )

    # -- what a span is -------------------------------------------------------------------
    def tooltip(self, index: int) -> str:
        """The hover text of span ``index`` of the last batch."""
        if not 0 <= index < len(self.last):
            return ""
        key = int(self.last.key[index])
        ex = self.executions
        if key <= RUN_KEY_BASE + (1 << 39):
            run = key - RUN_KEY_BASE
            cycles = int(ex.run_cycles[run])
            return (
                f"Run {run}: {ex.run_names[run]} (program {int(ex.run_program[run])})\n"
                f"{cycles:,} cycles from {int(ex.run_start[run]):,}{self._time(cycles)}"
            )
        if key == NO_KEY:
            count = int(self.last_count[index])
            return f"{count:,} executions, each shorter than a pixel: zoom in to see them"
        return self.execution_text(key)

    def execution_text(self, row: int) -> str:
        ex = self.executions
        kind = BlockKind(int(ex.kind[row]))
        start, end = int(ex.start[row]), int(ex.end[row])
        where = f"IPU {int(ex.ipu[row])}, tile {int(ex.tile[row])}"
        return (
            f"{ex.label(row)} ({kind.label}): execution {int(ex.index[row])} in run "
            f"{int(ex.run[row])}\n{end - start:,} cycles{self._time(end - start)}, "
            f"{start:,} - {end:,}\non {where}"
        )

    def _time(self, cycles: int) -> str:
        return f" ({cycles / self.clock_hz * 1e6:,.2f} µs)" if self.clock_hz > 0 else ""

    def totals_table(self) -> ColumnTable:
        """Each block on each IPU: executions and cycles (the Blocks tab)."""
        ex = self.executions
        totals = block_totals(ex)
        return ColumnTable(
            [
                Column("Block", [self._block_labels[b] for b in totals.block.tolist()]),
                Column("Kind", [BlockKind(int(ex.block_kinds[b])).label for b in totals.block]),
                Column("IPU", totals.ipu, kind="count"),
                Column("Executions", totals.executions, kind="count"),
                Column("Total cycles", totals.total, kind="count"),
                Column("Min cycles", totals.shortest, kind="count"),
                Column("Mean cycles", np.round(totals.mean).astype(np.int64), kind="count"),
                Column("Max cycles", totals.longest, kind="count"),
            ]
        )


def _shaded(colors: np.ndarray, lighter: np.ndarray) -> np.ndarray:
    """``colors`` (RGBA rows), a quarter of the way to white where ``lighter``."""
    out = colors.astype(np.float64)
    out[lighter, :3] = out[lighter, :3] * 0.72 + 255 * 0.28
    return out.astype(np.uint8)


def _label(name: str, kind: BlockKind) -> str:
    return f"{kind.label} {name}" if kind.is_stream_copy else name
