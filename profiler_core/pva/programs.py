"""libpva's programs and ``ProgramVisitor``: the program of an execution step, with its name,
type, compute set (OnTileExecute) and the cycles it ran within the step, and ``accept``
calling the visitor method of its type (``visitOnTileExecute``, ``visitDoExchange``, ...)."""

from __future__ import annotations

import enum
from typing import Any

from profiler_core.model.kinds import StepKind
from profiler_core.pva.graph_objects import ComputeSet

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


class Program:
    """The program of one program step, as run in one execution step (when it was run)."""

    __slots__ = ("_columns", "cyclesFrom", "cyclesTo", "id")

    def __init__(
        self, columns: Any, step: int, start: int | None = None, end: int | None = None
    ) -> None:
        self._columns = columns
        self.id = step
        self.cyclesFrom = None if start is None else CycleCount(start, start, start)
        self.cyclesTo = None if end is None else CycleCount(end, end, end)

    @property
    def type(self) -> Any:
        return ProgramType(int(self._columns.programs.step_kind[self.id]))

    @property
    def name(self) -> str:
        return self._columns.report.graph.strings[int(self._columns.programs.step_name[self.id])]

    @property
    def children(self) -> list[Program]:
        return []

    def accept(self, visitor: ProgramVisitor) -> None:
        getattr(visitor, f"visit{self.type.name}")(self)

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
