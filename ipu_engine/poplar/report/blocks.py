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

from array import array

import numpy as np

from ipu_engine.common.errors import OptionError
from ipu_engine.poplar.compiler.block_marks import BlockMarks
from ipu_engine.poplar.compiler.executable import Executable
from ipu_engine.poplar.compiler.one_path import OnePath
from ipu_engine.poplar.cost_model.compile_model import CompileModel
from ipu_engine.poplar.executor import Runner
from ipu_engine.poplar.options import EngineOptions
from ipu_engine.poplar.target import Target
from profiler_core.model.growing import GrowingColumns
from profiler_core.model.kinds import BlockKind, StepKind
from profiler_core.model.profile import BlocksData, RunData
from profiler_core.model.strings import StringInterner, Strings

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


_EXECUTION = dict(
    block=np.int32, ipu=np.int32, tile=np.int32, depth=np.int32, start=np.int64, end=np.int64
)  # an execution's columns (the template's and the kept runs')
_RUN = 5  # numbers noted per kept run until it is decoded
_EXPECT_AT_MOST = 1 << 22  # rows reserved ahead at most (36 bytes each, untouched till used)

FLUSH_ENTRIES = 1 << 22
"""Logs of kept runs are decoded together, when the report asks or past this many entries:
one numpy pass over many small runs costs what one pass over one does."""


class BlockRecorder:
    """The timed blocks of one engine and the executions of its kept runs."""

    def __init__(
        self, marks: BlockMarks, exe: Executable, model: CompileModel, tile: int, keep: int
    ) -> None:
        target: Target = exe.graph.target
        self.tile = tile
        self.keep = keep  # runs kept of each program (autoReport.executionProfileProgramRunCount)
        self.counter = 0  # the engine's cycle counter: runs follow one another
        # the kept runs, in the order they ran, and their executions once decoded: columns
        # that grow by doubling, so a report's data after each run costs the new rows only
        self._runs = GrowingColumns(
            program=np.int32, name=np.int32, start=np.int64, cycles=np.int64
        )
        self._rows = GrowingColumns(run=np.int32, **_EXECUTION)
        # Runs of a program mostly repeat one path through it: each distinct log is a
        # template, timed once from its own start; a kept run is its template moved to its
        # start. (program -> the last log and its template), the templates' logs not timed
        # yet, and every template's executions once timed.
        self._new_runs = array("q")  # kept runs not decoded yet: program, name, start,
        # cycles, template -- _RUN numbers each
        self._last: dict[int, tuple[array, int]] = {}
        self._run_names: dict[int, tuple[str, int]] = {}  # program -> its runs' name, id
        self._last_program = -1
        self._interleaved = False  # a run of a program after one of a later program
        self._one_path = OnePath(exe.function_nodes)
        self._roots, self._unmarked = exe.roots, exe.unmarked_runners
        self._fixed: dict[int, array | None] = {}  # program -> its one path's log
        self._last_steps: dict[int, tuple[array, np.ndarray]] = {}  # program -> log, steps
        self._new_templates: list[np.ndarray] = []
        self._templates = GrowingColumns(**_EXECUTION)  # every template's rows, one after another
        self._template_first = array("q")  # where each template's rows start there
        self._template_count = array("q")
        self._pending = 0  # entries of the templates not timed yet
        self._data: tuple[int, BlocksData] | None = None  # the last data() and its kept runs
        self._strings: Strings | None = None  # the names' table as the last data() had it
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
        keep = int(options["autoReport.executionProfileProgramRunCount"])
        return cls(marks, exe, model, tile, keep)

    def runner(self, program: int, marked: Runner) -> tuple[Runner, array | None]:
        """What runs ``program`` (its ``marked`` runner), and the log of marks and steps
        when it has one path: then the runner without the marks, which logs steps only."""
        fixed = self.fixed_log(program)
        return (marked, None) if fixed is None else (self._unmarked[program], fixed)

    def fixed_log(self, program: int) -> array | None:
        """The log (step ids and marks) every run of ``program`` writes, when it has one
        path (``compiler/one_path.py``), else None; the same array object every time."""
        if program not in self._fixed:
            self._fixed[program] = self._one_path.log(self._roots[program])
        return self._fixed[program]

    def steps_of(self, program: int, executed: array) -> np.ndarray:
        """The step ids of a run's log (``executed``: step ids and the blocks' negative
        marks), read-only; a log equal to the program's last gives the same array again."""
        last = self._last_steps.get(program)
        if last is not None and (last[0] is executed or last[0] == executed):
            return last[1]  # (== is a C comparison of the two buffers)
        log = np.frombuffer(executed, dtype=np.int32)
        steps = log[log >= 0]
        steps.flags.writeable = False
        self._last_steps[program] = (executed, steps)
        return steps

    def record(self, program: int, executed: array, run: RunData, keep: bool) -> None:
        """Advance the counter by ``run``; when it is kept, note its log (``executed``, the
        run's step ids and marks): a template, or the same as the program's last one."""
        start, self.counter = self.counter, self.counter + int(run.total_cycles)
        if not keep:
            return
        last = self._last.get(program)
        if last is not None and (last[0] is executed or last[0] == executed):
            template = last[1]  # (== is a C comparison of the two buffers)
        else:
            template = len(self._template_first) + len(self._new_templates)
            self._new_templates.append(np.frombuffer(executed, dtype=np.int32))
            self._last[program] = (executed, template)
            self._pending += len(executed)
        named = self._run_names.get(program)
        if named is None or named[0] != run.name:
            named = self._run_names[program] = (run.name, self.names(run.name))
        if program < self._last_program:
            self._interleaved = True
        self._last_program = program
        self._new_runs.extend((program, named[1], start, run.total_cycles, template))
        if self._pending > FLUSH_ENTRIES:
            self._decode_pending()

    def _decode_pending(self) -> None:
        """Time the new templates, then lay each new kept run's template at its start: one
        gather of the templates' rows into the executions' columns."""
        self._time_templates()
        if not self._new_runs:
            return
        runs = np.frombuffer(self._new_runs, dtype=np.int64).reshape(-1, _RUN)
        self._new_runs = array("q")
        program, name, start, cycles, template = runs.T
        first_run = len(self._runs)
        self._runs.append(program=program, name=name, start=start, cycles=cycles)
        count = np.frombuffer(self._template_count, dtype=np.int64)[template]
        first = np.frombuffer(self._template_first, dtype=np.int64)[template]
        rows = int(count.sum())
        # room for the runs still to be kept, as long as these: the columns are not copied
        # into fresh memory as they grow (what is never written is never touched)
        expect = rows // len(template) * self.keep * len(self._last)
        out = self._rows.grow(rows, min(expect, _EXPECT_AT_MOST))
        if (template == template[0]).all():  # one path: its rows once per run, moved
            k, n, at = len(template), int(count[0]), int(first[0])
            out["run"].reshape(k, n)[:] = np.arange(first_run, first_run + k)[:, None]
            for column in _EXECUTION:
                rows_of = self._templates.view(column)[at : at + n]
                if column in ("start", "end"):
                    np.add(rows_of, start[:, None], out=out[column].reshape(k, n))
                else:
                    out[column].reshape(k, n)[:] = rows_of
            return
        ends = np.cumsum(count)
        run = np.repeat(np.arange(len(template)), count)
        source = np.arange(rows) + np.repeat(first - (ends - count), count)
        np.add(run, first_run, out=out["run"], casting="unsafe")
        shift = start[run]
        for column in _EXECUTION:
            if column in ("start", "end"):
                np.add(self._templates.view(column)[source], shift, out=out[column])
            else:
                np.take(self._templates.view(column), source, out=out[column])

    def _time_templates(self) -> None:
        """Every new template's executions, cycles from its own start: one numpy pass over
        their logs laid end to end (no sort but a radix sort of nesting levels)."""
        logs, self._new_templates, self._pending = self._new_templates, [], 0
        if not logs:
            return
        log = np.concatenate(logs)
        lengths = np.array([len(part) for part in logs], dtype=np.int64)
        is_mark = log < 0
        step = np.where(is_mark, 0, log)
        durations = np.where(is_mark, 0, self.duration[step])
        before = np.cumsum(durations) - durations
        firsts = np.cumsum(lengths) - lengths
        base = np.where(lengths > 0, before[np.minimum(firsts, max(log.size - 1, 0))], 0)
        at = before - np.repeat(base, lengths)  # cycles from each template's start
        code = np.where(is_mark, -log.astype(np.int64) - 1, 0)
        is_start, is_end = is_mark & (code & 1 == 0), is_mark & (code & 1 == 1)
        opened = is_start.astype(np.int64) - is_end
        open_before = np.cumsum(opened) - opened  # blocks open when each entry begins
        # Marks at one nesting level never overlap: taken level by level in log order, they
        # alternate start, end, start, end (each log's marks balance, so logs laid end to
        # end do too); a stable sort of small integers is numpy's radix sort.
        marks = np.flatnonzero(is_mark)
        level = (open_before[marks] - is_end[marks]).astype(np.int16)
        marks = marks[np.argsort(level, kind="stable")]
        ends_at = np.zeros(log.size, dtype=np.int64)
        ends_at[marks[is_start[marks]]] = at[marks[is_end[marks]]]
        # what each execution is, in log order (time order, outer blocks first)
        source = np.where(is_mark, code >> 1, self.step_source[step])
        entry = np.flatnonzero(is_start | (~is_mark & (source >= 0)))
        source = source[entry]
        end = np.where(is_mark[entry], ends_at[entry], at[entry] + durations[entry])
        row, where = self._sources.expand(source)  # one row per IPU a block runs on
        entry = entry[row]
        columns = {
            "block": self._sources.block[source[row]].astype(np.int32),
            "ipu": self._sources.ipus[where],
            "tile": self._sources.tiles[where],
            "depth": open_before[entry].astype(np.int32),
            "start": at[entry],
            "end": end[row],
        }
        cuts = np.searchsorted(entry, np.cumsum(lengths))  # where each template's rows end
        self._template_first.extend(
            (len(self._templates) + cuts - np.diff(cuts, prepend=0)).tolist()
        )
        self._template_count.extend(np.diff(cuts, prepend=0).tolist())
        self._templates.append(**columns)

    def data(self) -> BlocksData:
        """The kept runs' blocks, runs in the execution section's order (by program), each
        run's executions in time order (outer blocks first). Made again only after new runs;
        its columns are views of what is recorded, copied only when runs of several programs
        interleave."""
        kept = len(self._runs) + len(self._new_runs) // _RUN  # (the pending ones decode below)
        if self._data is not None and self._data[0] == kept:
            return self._data[1]
        self._decode_pending()
        runs, rows = self._runs.view, self._rows.view
        programs = runs("program")
        order, run, pick = slice(None), rows("run"), slice(None)
        if self._interleaved:  # runs of programs interleaved: by program first
            order = np.argsort(programs, kind="stable")
            position = np.empty(len(order), dtype=np.int64)
            position[order] = np.arange(len(order))
            pick = np.argsort(position[run], kind="stable")  # each run's rows keep their order
            run = position[run][pick]
        if self._strings is None or len(self._strings) != len(self.names):
            self._strings = self.names.table()  # (a new name only with a new block or run)
        data = BlocksData(
            strings=self._strings,
            tile=self.tile,
            block_name=self.block_name,
            block_kind=self.block_kind,
            block_node=self.block_node,
            run_program=programs[order],
            run_name=runs("name")[order],
            run_start=runs("start")[order],
            run_cycles=runs("cycles")[order],
            exec_block=rows("block")[pick],
            exec_run=run,
            exec_ipu=rows("ipu")[pick],
            exec_tile=rows("tile")[pick],
            exec_depth=rows("depth")[pick],
            exec_start=rows("start")[pick],
            exec_end=rows("end")[pick],
        )
        self._data = (kept, data)
        return data


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


def _first_tile_per_ipu(
    sorted_tiles: np.ndarray, tiles_per_ipu: int
) -> tuple[np.ndarray, np.ndarray]:
    """(IPUs, the first tile on each) of sorted tiles."""
    ipu = sorted_tiles // tiles_per_ipu
    first = np.flatnonzero(np.concatenate(([True], ipu[1:] != ipu[:-1]))) if len(ipu) else ipu
    return ipu[first], sorted_tiles[first]
