"""Lightweight profiling's executions as a user reads them: every execution of each timed
block (runs x blocks) with its execution index, the totals of each block, and the lanes a
timeline draws them in -- what falls in cycles [t0, t1) of a lane at a width, merged below a
pixel as the Execution Trace's own windows are.

Cycles are the IPU's cycle counter (from the engine's load; runs follow one another), so the
runs of a report lie one after another on one axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_target, fail
from profiler_core.model.kinds import BlockKind

MERGED = -1
"""``row`` of a span standing for several executions (merged below a pixel)."""


@dataclass(frozen=True)
class BlockExecutions:
    """One row per execution of a block on one IPU, sorted by run, IPU, start, depth."""

    block: np.ndarray  # int32 row of the section's blocks table
    run: np.ndarray  # int32
    ipu: np.ndarray  # int32
    tile: np.ndarray  # int32
    depth: np.ndarray  # int32
    start: np.ndarray  # int64 cycle counter
    end: np.ndarray  # int64
    index: np.ndarray  # int64 n-th execution of its block in its run on its IPU (from 0)
    block_names: list[str]  # per block: its name (a StreamCopy's: its stream)
    block_kinds: np.ndarray  # uint8 kinds.BlockKind per block
    run_names: list[str]
    run_program: np.ndarray  # int32
    run_start: np.ndarray  # int64
    run_cycles: np.ndarray  # int64
    tile_per_ipu: int  # profiler.blocks.tile

    def __len__(self) -> int:
        return len(self.block)

    @property
    def cycles(self) -> np.ndarray:
        return self.end - self.start

    @property
    def kind(self) -> np.ndarray:
        return self.block_kinds[self.block]

    def names(self) -> list[str]:
        """Each execution's name: the block's, or a StreamCopy phase with its stream."""
        labels = [
            _label(name, BlockKind(int(k)))
            for name, k in zip(self.block_names, self.block_kinds.tolist(), strict=True)
        ]
        return [labels[b] for b in self.block.tolist()]

    def label(self, row: int) -> str:
        block = int(self.block[row])
        return _label(self.block_names[block], BlockKind(int(self.block_kinds[block])))


def _label(name: str, kind: BlockKind) -> str:
    return f"{kind.label} {name}" if kind.is_stream_copy else name


def block_executions(report: Any) -> BlockExecutions | None:
    """The report's timed executions, checked against its target, or None when lightweight
    profiling was off. Raises ``ReportError`` naming the section when they do not fit."""
    blocks = report.blocks
    if blocks is None:
        return None
    target = checked_target(report)
    kinds = blocks.block_kind
    if kinds.size and int(kinds.max()) >= len(BlockKind):
        fail(report, "blocks", f"block kind {int(kinds.max())} is not one this reader knows")
    ipu, tile = blocks.exec_ipu, blocks.exec_tile
    if ipu.size and int(ipu.max()) >= target.num_ipus:
        fail(
            report,
            "blocks",
            f"an execution on IPU {int(ipu.max())}; the target has {target.num_ipus}",
        )
    if tile.size and int(tile.max()) >= target.num_tiles:
        fail(
            report,
            "blocks",
            f"an execution on tile {int(tile.max())}; the target has {target.num_tiles}",
        )
    if blocks.tile >= target.tiles_per_ipu:
        fail(
            report,
            "blocks",
            f"blocks timed on tile {blocks.tile} of IPUs of {target.tiles_per_ipu}",
        )
    order = np.lexsort((blocks.exec_depth, blocks.exec_start, ipu, blocks.exec_run))
    block, run, ipu = blocks.exec_block[order], blocks.exec_run[order], ipu[order]
    names = blocks.strings.tolist()
    return BlockExecutions(
        block=block,
        run=run,
        ipu=ipu,
        tile=tile[order],
        depth=blocks.exec_depth[order],
        start=blocks.exec_start[order],
        end=blocks.exec_end[order],
        index=_execution_index(run, ipu, block),
        block_names=[names[i] for i in blocks.block_name.tolist()],
        block_kinds=np.asarray(kinds, dtype=np.uint8),
        run_names=[names[i] for i in blocks.run_name.tolist()],
        run_program=blocks.run_program,
        run_start=blocks.run_start,
        run_cycles=blocks.run_cycles,
        tile_per_ipu=int(blocks.tile),
    )


def _execution_index(run: np.ndarray, ipu: np.ndarray, block: np.ndarray) -> np.ndarray:
    """The n-th time (from 0) each row's block ran in its run on its IPU, for rows in time
    order within each (run, IPU)."""
    if run.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort((np.arange(run.size), block, ipu, run))  # stable: time order kept
    key = np.stack((run[order], ipu[order], block[order]))
    new_group = np.concatenate(([True], (key[:, 1:] != key[:, :-1]).any(axis=0)))
    first = np.maximum.accumulate(np.where(new_group, np.arange(run.size), 0))
    index = np.empty(run.size, dtype=np.int64)
    index[order] = np.arange(run.size) - first
    return index


@dataclass(frozen=True)
class BlockTotals:
    """Per block and IPU: how often it ran and its cycles (every kept run)."""

    block: np.ndarray  # int64
    ipu: np.ndarray  # int64
    executions: np.ndarray  # int64
    total: np.ndarray  # int64 cycles
    shortest: np.ndarray  # int64
    longest: np.ndarray  # int64

    def __len__(self) -> int:
        return len(self.block)

    @property
    def mean(self) -> np.ndarray:
        return self.total / np.maximum(self.executions, 1)


def block_totals(executions: BlockExecutions) -> BlockTotals:
    """Each (block, IPU)'s count and cycles, by block then IPU."""
    if not len(executions):
        empty = np.zeros(0, dtype=np.int64)
        return BlockTotals(empty, empty, empty, empty, empty, empty)
    key = executions.block.astype(np.int64) * (int(executions.ipu.max()) + 1) + executions.ipu
    groups, group = np.unique(key, return_inverse=True)
    cycles = executions.cycles
    count = np.bincount(group, minlength=len(groups))
    total = np.bincount(group, weights=cycles, minlength=len(groups)).astype(np.int64)
    shortest = np.full(len(groups), np.iinfo(np.int64).max, dtype=np.int64)
    longest = np.zeros(len(groups), dtype=np.int64)
    np.minimum.at(shortest, group, cycles)
    np.maximum.at(longest, group, cycles)
    width = int(executions.ipu.max()) + 1
    return BlockTotals(groups // width, groups % width, count, total, shortest, longest)


@dataclass(frozen=True)
class BlockLane:
    """One timeline row: an IPU's blocks at one depth, or its StreamCopies."""

    ipu: int
    depth: int  # -1 for the StreamCopy lane
    name: str
    rows: np.ndarray  # int64 rows of the executions, by start (they never overlap)


def block_lanes(executions: BlockExecutions) -> list[BlockLane]:
    """Per IPU: a lane for each depth of blocks, then one for its StreamCopies."""
    copies = np.isin(executions.kind, [int(k) for k in BlockKind if k.is_stream_copy])
    lanes = []
    for ipu in np.unique(executions.ipu).tolist():
        on = executions.ipu == ipu
        for depth in np.unique(executions.depth[on & ~copies]).tolist():
            rows = np.flatnonzero(on & ~copies & (executions.depth == depth))
            name = f"IPU {ipu}" if depth == 0 else f"IPU {ipu} level {depth + 1}"
            lanes.append(BlockLane(ipu, depth, name, _by_start(executions, rows)))
        rows = np.flatnonzero(on & copies)
        if rows.size:
            lanes.append(BlockLane(ipu, -1, f"IPU {ipu} StreamCopy", _by_start(executions, rows)))
    return lanes


def _by_start(executions: BlockExecutions, rows: np.ndarray) -> np.ndarray:
    return rows[np.argsort(executions.start[rows], kind="stable")]


@dataclass(frozen=True)
class BlockSpans:
    """A lane's spans in a window, in time order; ``row`` is MERGED for merged ones."""

    start: np.ndarray  # int64
    end: np.ndarray  # int64
    row: np.ndarray  # int64 row of the executions, or MERGED
    count: np.ndarray  # int64 executions in the span

    def __len__(self) -> int:
        return len(self.start)


def lane_window(
    executions: BlockExecutions, lane: BlockLane, t0: float, t1: float, width_px: int
) -> BlockSpans:
    """The lane's executions overlapping [t0, t1), with runs of executions shorter than a
    pixel (and less than a pixel apart) merged into one span: a paint costs pixels."""
    starts, ends = executions.start[lane.rows], executions.end[lane.rows]
    first = int(np.searchsorted(ends, t0, side="right"))
    stop = int(np.searchsorted(starts, t1, side="left"))
    rows = lane.rows[first:stop]
    start, end = starts[first:stop], ends[first:stop]
    if rows.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return BlockSpans(empty, empty, empty, empty)
    pixel = (t1 - t0) / max(width_px, 1)
    small = (end - start) < pixel
    joins = small[1:] & small[:-1] & ((start[1:] - end[:-1]) < pixel)
    group = np.concatenate(([0], np.cumsum(~joins)))
    firsts = np.flatnonzero(np.concatenate(([True], ~joins)))
    lasts = np.concatenate((firsts[1:] - 1, [rows.size - 1]))
    count = lasts - firsts + 1
    merged_end = np.maximum.reduceat(end, firsts) if len(group) else end
    return BlockSpans(
        start=start[firsts],
        end=merged_end,
        row=np.where(count == 1, rows[firsts], MERGED),
        count=count,
    )
