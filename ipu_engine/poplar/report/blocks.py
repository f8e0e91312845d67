"""Lightweight profiling's record: every execution of each timed block in a run, with its
start and end on each IPU that runs it, and every StreamCopy's phases, as numpy columns.

A run logs the ids of the steps it executes and, around each block, the codes of its marks
(``compiler/block_marks.py``). After the run, one pass of numpy over that log gives every
cycle: a mark happens at the sum of the durations of the steps before it (IPUs move from step
to step together in the model, so a block starts and ends at the same cycle on each of its
IPUs), a block's executions pair its start and end marks in order (a block never runs inside
itself), and the blocks open at a point are the marks' running count. Cycles are the
engine's cycle counter, which counts from its load and advances by each run's cycles (the
host's time between runs is not modelled).

A block is timed on the IPUs where its steps compute, exchange or copy to or from the host
(an IPU that only syncs and steers it does not run it), on tile ``profiler.blocks.tile`` of
each; a block that does no such work anywhere is timed on every IPU. A StreamCopy's phases
are timed on each IPU its tensor lies on, at its first tile there. Blocks are kept for the
runs the report keeps (``autoReport.executionProfileProgramRunCount`` of each program).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.common.errors import OptionError
from ipu_engine.poplar.compiler.block_marks import BlockMarks
from ipu_engine.poplar.compiler.executable import Executable
from ipu_engine.poplar.cost_model.compile_model import CompileModel
from ipu_engine.poplar.options import EngineOptions
from ipu_engine.poplar.target import Target
from profiler_core.model.kinds import BlockKind, StepKind
from profiler_core.model.profile import BlocksData, RunData
from profiler_core.model.strings import StringInterner

_STREAM_KIND = {
    StepKind.STREAM_COPY_BEGIN: BlockKind.STREAM_COPY_BEGIN,
    StepKind.STREAM_COPY_MID: BlockKind.STREAM_COPY_MID,
    StepKind.STREAM_COPY_END: BlockKind.STREAM_COPY_END,
}
_WORK = (
    StepKind.ON_TILE_EXECUTE,
    StepKind.DO_EXCHANGE,
    StepKind.GLOBAL_EXCHANGE,
    StepKind.STREAM_COPY_BEGIN,
    StepKind.STREAM_COPY_MID,
)


@dataclass(frozen=True)
class RunBlocks:
    """The executions of one run, one row per block execution on one IPU."""

    block: np.ndarray  # int32
    ipu: np.ndarray  # int32
    tile: np.ndarray  # int32
    depth: np.ndarray  # int32
    start: np.ndarray  # int64 cycle counter
    end: np.ndarray  # int64


@dataclass(frozen=True)
class _KeptRun:
    run: RunData
    start: int
    blocks: RunBlocks


class BlockRecorder:
    """The timed blocks of one engine and the executions of its kept runs."""

    def __init__(self, marks: BlockMarks, exe: Executable, model: CompileModel, tile: int) -> None:
        target: Target = exe.graph.target
        self.tile = tile
        self.counter = 0  # the engine's cycle counter: runs follow one another
        self.kept: dict[int, list[_KeptRun]] = {}
        self.names = StringInterner()
        self.duration = model.step_duration
        self._sources = _Sources(target)  # what a mark or StreamCopy step is: block, IPUs
        names: list[str] = [b.name for b in marks.blocks]
        kinds: list[BlockKind] = [b.kind for b in marks.blocks]
        nodes: list[int] = [-1] * len(marks.blocks)
        steps = exe.steps
        work = np.isin([int(s.kind) for s in steps], [int(k) for k in _WORK])
        works_on = (model.step_cycles > 0) & work[:, None] if steps else np.zeros((0, 1), bool)
        spans = exe.lowering.function_spans
        for site in marks.sites:  # source i is site i: its marks carry i
            ranges = [(site.first, site.stop)]
            ranges += [(spans[f][0], spans[f][1] + 1) for f in marks.called_functions(site)]
            used = np.zeros(target.num_ipus, dtype=bool)
            for first, stop in ranges:
                used |= works_on[first:stop].any(axis=0)
            on = np.flatnonzero(used) if used.any() else np.arange(target.num_ipus)
            self._sources.add(site.block, on, on * target.tiles_per_ipu + tile)
            if nodes[site.block] < 0:
                nodes[site.block] = site.node
        self.step_source = np.full(len(steps), -1, dtype=np.int64)  # StreamCopy steps' sources
        copies: dict[tuple[str, BlockKind], int] = {}  # one block per stream and phase
        for step in steps:
            if step.kind in _STREAM_KIND:
                key = (step.name, _STREAM_KIND[step.kind])
                if key not in copies:
                    copies[key] = len(names)
                    names.append(step.name)
                    kinds.append(key[1])
                    nodes.append(int(step.facts.get("node", -1)))
                data_tiles = np.sort(np.asarray(step.facts["tiles"], dtype=np.int64))
                on, first_tile = _first_tile_per_ipu(data_tiles, target.tiles_per_ipu)
                self.step_source[step.id] = self._sources.add(copies[key], on, first_tile)
        self._sources.finish()
        self.block_name = self.names.many(names)
        self.block_kind = np.array([int(k) for k in kinds], dtype=np.uint8)
        self.block_node = np.array(nodes, dtype=np.int32)

    @classmethod
    def create(
        cls, exe: Executable, model: CompileModel, options: EngineOptions
    ) -> BlockRecorder | None:
        """The recorder of an engine compiled with lightweight profiling, else None."""
        marks = exe.lowering.marks
        if marks is None:
            return None
        tile, tiles = int(options["profiler.blocks.tile"]), exe.graph.target.tiles_per_ipu
        if tile >= tiles:
            raise OptionError(
                f"engine option 'profiler.blocks.tile': tile {tile} is not on the IPU; each "
                f"IPU has tiles 0..{tiles - 1}"
            )
        return cls(marks, exe, model, tile)

    def record(self, program: int, log: np.ndarray, run: RunData, keep: bool) -> None:
        """Advance the counter by ``run``; time the blocks in its ``log`` when it is kept."""
        start, self.counter = self.counter, self.counter + int(run.total_cycles)
        if keep:
            blocks = self._executions(log, start)
            self.kept.setdefault(program, []).append(_KeptRun(run, start, blocks))

    def _executions(self, log: np.ndarray, run_start: int) -> RunBlocks:
        log = np.asarray(log, dtype=np.int64)
        is_mark = log < 0
        durations = np.where(is_mark, 0, self.duration[np.where(is_mark, 0, log)])
        at = np.cumsum(durations) - durations + run_start  # the counter when each entry begins
        marks = np.flatnonzero(is_mark)
        code = -log[marks] - 1
        site, is_end = code >> 1, (code & 1).astype(bool)
        opened = np.zeros(len(log), dtype=np.int64)
        opened[marks] = np.where(is_end, -1, 1)
        open_before = np.cumsum(opened) - opened  # blocks open when each entry begins
        starts, ends, sites = _pair(marks, site, is_end)
        copies = np.flatnonzero(~is_mark)
        copies = copies[self.step_source[log[copies]] >= 0]
        source = np.concatenate((sites, self.step_source[log[copies]]))
        start = np.concatenate((at[starts], at[copies]))
        end = np.concatenate((at[ends], at[copies] + durations[copies]))
        depth = np.concatenate((open_before[starts], open_before[copies]))
        order = np.lexsort((depth, start))  # in time order, outer blocks first
        source, start, end, depth = source[order], start[order], end[order], depth[order]
        row, where = self._sources.expand(source)  # one row per IPU a block runs on
        return RunBlocks(
            block=self._sources.block[source[row]].astype(np.int32),
            ipu=self._sources.ipus[where],
            tile=self._sources.tiles[where],
            depth=depth[row].astype(np.int32),
            start=start[row].astype(np.int64),
            end=end[row].astype(np.int64),
        )

    def data(self) -> BlocksData:
        """The kept runs' blocks, runs in the execution section's order (by program)."""
        kept = [k for program in sorted(self.kept) for k in self.kept[program]]
        run_name = self.names.many(k.run.name for k in kept)
        parts = [k.blocks for k in kept]

        def column(name: str, dtype: type) -> np.ndarray:
            values = [getattr(p, name) for p in parts]
            return np.concatenate(values).astype(dtype) if values else np.zeros(0, dtype)

        return BlocksData(
            strings=self.names.table(),
            tile=self.tile,
            block_name=self.block_name,
            block_kind=self.block_kind,
            block_node=self.block_node,
            run_program=np.array([k.run.program for k in kept], dtype=np.int32),
            run_name=run_name,
            run_start=np.array([k.start for k in kept], dtype=np.int64),
            run_cycles=np.array([k.run.total_cycles for k in kept], dtype=np.int64),
            exec_block=column("block", np.int32),
            exec_run=np.repeat(np.arange(len(kept)), [len(p.block) for p in parts]).astype(
                np.int32
            ),
            exec_ipu=column("ipu", np.int32),
            exec_tile=column("tile", np.int32),
            exec_depth=column("depth", np.int32),
            exec_start=column("start", np.int64),
            exec_end=column("end", np.int64),
        )


class _Sources:
    """What an execution comes from -- a block's site (its marks) or a StreamCopy step --
    as columns: its block, and the IPUs (with a tile on each) it is timed on."""

    def __init__(self, target: Target) -> None:
        self._block: list[int] = []
        self._ipus: list[np.ndarray] = []
        self._tiles: list[np.ndarray] = []

    def add(self, block: int, ipus: np.ndarray, tiles: np.ndarray) -> int:
        self._block.append(block)
        self._ipus.append(np.asarray(ipus))
        self._tiles.append(np.asarray(tiles))
        return len(self._block) - 1

    def finish(self) -> None:
        self.block = np.array(self._block, dtype=np.int64)
        self.counts = np.array([len(i) for i in self._ipus], dtype=np.int64)
        self.offsets = np.concatenate(([0], np.cumsum(self.counts)))
        empty = np.zeros(0, np.int32)
        self.ipus = np.concatenate(self._ipus).astype(np.int32) if self._ipus else empty
        self.tiles = np.concatenate(self._tiles).astype(np.int32) if self._tiles else empty

    def expand(self, source: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(for each output row: its input row, where its IPU and tile are): one row per
        IPU of each source."""
        counts = self.counts[source]
        row = np.repeat(np.arange(len(source)), counts)
        within = np.arange(len(row)) - np.repeat(np.cumsum(counts) - counts, counts)
        return row, self.offsets[source[row]] + within


def _pair(
    marks: np.ndarray, block: np.ndarray, is_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start marks, their end marks, their sites): each start paired with its end as
    brackets are, per site."""
    if marks.size == 0:
        return marks, marks, block
    order = np.argsort(block, kind="stable")  # per block, in log order
    step = np.where(is_end[order], -1, 1)
    running = np.cumsum(step)
    first = np.flatnonzero(np.concatenate(([True], block[order][1:] != block[order][:-1])))
    before = (
        running
        - step
        - np.repeat(running[first] - step[first], np.diff(np.append(first, len(order))))
    )
    level = np.where(is_end[order], before - 1, before)  # a start and its end share a level
    order = order[np.lexsort((np.arange(len(order)), level, block[order]))]
    ends = is_end[order]
    return marks[order[~ends]], marks[order[ends]], block[order[~ends]]


def _first_tile_per_ipu(
    sorted_tiles: np.ndarray, tiles_per_ipu: int
) -> tuple[np.ndarray, np.ndarray]:
    """(IPUs, the first tile on each) of sorted tiles."""
    ipu = sorted_tiles // tiles_per_ipu
    first = np.flatnonzero(np.concatenate(([True], ipu[1:] != ipu[:-1]))) if len(ipu) else ipu
    return ipu[first], sorted_tiles[first]
