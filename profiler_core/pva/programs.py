"""libpva's programs and ``ProgramVisitor``. A program is one program step (the lowered
programs Poplar runs: OnTileExecute, DoExchange, Sync, ...), ``_id`` its step index, so
``livenessProgramSteps[i].program._id == i``. Its name, type (``pva.Program.Type``), compute
set (OnTileExecute), children (the body of a Repeat, RepeatWhile or If, the function of a
Call), code per tile, and, when it comes from an execution step, the cycles it ran within
that step; ``accept`` calls the visitor method of its type."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from profiler_core.analysis.checks import fail
from profiler_core.analysis.step_code import control_code_of_step
from profiler_core.model.kinds import ProgramKind, StepKind
from profiler_core.pva.graph_objects import ComputeSet
from profiler_core.pva.lazy import LazyList
from profiler_core.pva.unmodelled import PvaObject, not_modelled
from profiler_core.pva.variables import Variable, variables

ProgramType = enum.Enum("ProgramType", [(k.poplar_name, int(k)) for k in StepKind])
"""Program types by Poplar's names: ``ProgramType.OnTileExecute``; ``.name``, ``.value``."""


class ProgramVisitor:
    """Subclass and override the ``visit<Type>`` methods you need; the others do nothing."""

    def __init__(self) -> None:
        pass

    def visitProgram(self, program: Program) -> None:
        """Called for every type whose own method is not overridden."""

    def visitOnTileExecute(self, program: Program) -> None:
        self.visitProgram(program)

    def visitDoExchange(self, program: Program) -> None:
        self.visitProgram(program)

    def visitGlobalExchange(self, program: Program) -> None:
        self.visitProgram(program)

    def visitStreamCopyBegin(self, program: Program) -> None:
        self.visitProgram(program)

    def visitStreamCopyMid(self, program: Program) -> None:
        self.visitProgram(program)

    def visitStreamCopyEnd(self, program: Program) -> None:
        self.visitProgram(program)

    def visitSync(self, program: Program) -> None:
        self.visitProgram(program)

    def visitRepeat(self, program: Program) -> None:
        self.visitProgram(program)

    def visitRepeatWhile(self, program: Program) -> None:
        self.visitProgram(program)

    def visitIf(self, program: Program) -> None:
        self.visitProgram(program)

    def visitCall(self, program: Program) -> None:
        self.visitProgram(program)

    def visitPrintTensor(self, program: Program) -> None:
        self.visitProgram(program)

    def visitWriteUndef(self, program: Program) -> None:
        self.visitProgram(program)


class CycleCount:
    """Cycles over the tiles of a range's end or start: ``min``, ``max``, ``mean``."""

    __slots__ = ("max", "mean", "min")

    def __init__(self, low: int, high: int, mean: float) -> None:
        self.min, self.max, self.mean = int(low), int(high), float(mean)

    def __repr__(self) -> str:
        return f"CycleCount(min={self.min}, max={self.max})"


_HOST_CODE = (StepKind.STREAM_COPY_MID, StepKind.PRINT_TENSOR)


class Program(PvaObject):
    """The program of one program step, as run in one execution step (when it was run)."""

    __slots__ = ("_columns", "cyclesFrom", "cyclesTo", "id")
    Type = ProgramType

    def __init__(
        self, columns: Any, step: int, start: int | None = None, end: int | None = None
    ) -> None:
        self._columns = columns
        self.id = step
        self.cyclesFrom = None if start is None else CycleCount(start, start, start)
        self.cyclesTo = None if end is None else CycleCount(end, end, end)

    @property
    def _id(self) -> int:
        return self.id

    @property
    def type(self) -> Any:
        return ProgramType(int(self._columns.programs.step_kind[self.id]))

    @property
    def name(self) -> str:
        return self._columns.report.graph.strings[int(self._columns.programs.step_name[self.id])]

    @property
    def children(self) -> list[Program]:
        """The body of a Repeat, RepeatWhile or If step, the function of a Call: the program
        steps below it in the program tree, in step order; [] for other programs."""
        return [make_program(self._columns, int(s)) for s in child_steps(self._columns, self.id)]

    @property
    def controlCodeByTile(self) -> np.ndarray:
        """Control code of this step on every tile (each tile's control code shared evenly
        over the steps: see analysis/step_code.py)."""
        return control_code_of_step(self._columns.report, self.id)

    @property
    def codeBytesByTile(self) -> np.ndarray:
        """Exchange code of a DoExchange (internal) or GlobalExchange (global) step on every
        tile; 0 for programs without exchange code (control code is controlCodeByTile,
        vertex code belongs to vertex types)."""
        kind = int(self._columns.programs.step_kind[self.id])
        if kind in _HOST_CODE:
            not_modelled(
                type(self).__name__,
                "codeBytesByTile",
                "host exchange code is kept per tile, not per stream copy",
                "tile.memory.category.hostExchangeCode.total",
            )
        code = self._columns.exchange_code
        order, offsets = self._columns.exchange_code_rows
        rows = order[offsets[self.id] : offsets[self.id + 1]]
        out = np.zeros(self._columns.report.target.num_tiles, dtype=np.int64)
        np.add.at(out, code.tile[rows], code.code_bytes[rows])
        return out

    @property
    def estimatedCyclesByTile(self) -> np.ndarray:
        """The model's cycles of the step on every tile (they are estimates): the same as
        ``cyclesByTile`` of any execution step of this program."""
        return self._columns.cycles_by_tile(self.id)

    @property
    def vars(self) -> LazyList[Variable]:
        """Variables whose live range starts (first written) or ends (last read) at this
        step; the report does not record the uses in between."""
        c = self._columns
        first_order, first_off, last_order, last_off = c.interval_rows
        rows = np.concatenate(
            (
                first_order[first_off[self.id] : first_off[self.id + 1]],
                last_order[last_off[self.id] : last_off[self.id + 1]],
            )
        )
        var = np.unique(c.report.liveness.interval_var[rows].astype(np.int64))
        return variables(c.report, var, c.report.graph.var_bytes[var])

    def accept(self, visitor: ProgramVisitor) -> None:
        getattr(visitor, f"visit{self.type.name}")(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Program) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("Program", self.id))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class OnTileExecuteProgram(Program):
    __slots__ = ()

    @property
    def computeset(self) -> ComputeSet:
        return ComputeSet(self._columns, int(self._columns.programs.step_cs[self.id]))


def make_program(
    columns: Any, step: int, start: int | None = None, end: int | None = None
) -> Program:
    """The program of ``step``: an ``OnTileExecuteProgram`` when it runs a compute set."""
    p = columns.programs
    if int(p.step_kind[step]) == StepKind.ON_TILE_EXECUTE and int(p.step_cs[step]) >= 0:
        return OnTileExecuteProgram(columns, step, start, end)
    return Program(columns, step, start, end)


_PARENT_KINDS = (StepKind.REPEAT, StepKind.REPEAT_WHILE, StepKind.IF)


def child_steps(columns: Any, step: int) -> np.ndarray:
    """Steps below a control step in the program tree (see ``Program.children``)."""
    p = columns.programs
    kind = int(p.step_kind[step])
    node = int(p.step_node[step])
    if node < 0 or kind not in (*_PARENT_KINDS, StepKind.CALL):
        return np.zeros(0, dtype=np.int64)
    if node >= len(p.node_kind):
        fail(columns.report, "programs", f"step {step} belongs to node {node}, past the tree")
    if kind == StepKind.CALL:
        roots = np.flatnonzero(
            (p.node_kind == ProgramKind.FUNCTION)
            & (p.node_function == p.node_function[node])
            & (p.node_parent < 0)
        )
        if roots.size == 0:
            return np.zeros(0, dtype=np.int64)
        node = int(roots[0])
    end = int(columns.subtree_end[node])
    inside = (p.step_node >= node) & (p.step_node < end)
    inside[step] = False
    return np.flatnonzero(inside).astype(np.int64)
