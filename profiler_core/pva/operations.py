"""libpva's ``OperationAnalysis(report).operations``: each library op call with its debug
context, the programs (program steps) and variables that belong to it, and the first and
last program step it runs in. Membership is ``analysis.operation_members``: a step or
variable belongs to the nearest op call at or above its own debug context."""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any

from profiler_core.pva.lazy import LazyList
from profiler_core.pva.programs import Program, make_program
from profiler_core.pva.unmodelled import PvaObject
from profiler_core.pva.variables import Variable, variables


class Location(PvaObject):
    __slots__ = ("fileName", "lineNumber")

    def __init__(self, file_name: str, line: int) -> None:
        self.fileName, self.lineNumber = file_name, line


class DebugContext(PvaObject):
    """A debug context of debug.cbor: ``id``, ``name``, ``layer``, ``op``, ``api``,
    ``location``, ``json`` (its record as JSON text: its arguments with name, layer, op and
    api), ``parents`` (the context it was made in, as a one-item list; [] at the top)."""

    __slots__ = ("_debug", "id")

    def __init__(self, debug: Any, index: int) -> None:
        self._debug, self.id = debug, index

    @property
    def name(self) -> str:
        return self._debug.name[self.id]

    @property
    def layer(self) -> str:
        return self._debug.layer[self.id]

    @property
    def op(self) -> str:
        return self._debug.op[self.id]

    @property
    def api(self) -> str:
        return self._debug.api[self.id]

    @property
    def location(self) -> Location:
        return Location(self._debug.file[self.id], int(self._debug.line[self.id]))

    @property
    def json(self) -> str:
        record = dict(self._debug.args[self.id])
        record.update(name=self.name, layer=self.layer, op=self.op, api=self.api)
        return json.dumps(record)

    @property
    def parents(self) -> list[DebugContext]:
        up = int(self._debug.parent[self.id])
        return [DebugContext(self._debug, up)] if 0 <= up < len(self._debug) else []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DebugContext) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("DebugContext", self.id))

    def __repr__(self) -> str:
        return f"DebugContext({self.id}, {self.name!r})"


class Operation(PvaObject):
    __slots__ = ("_columns", "_row")

    def __init__(self, columns: Any, row: int) -> None:
        self._columns, self._row = columns, row

    @property
    def _members(self) -> Any:
        return self._columns.operations

    @property
    def debugContext(self) -> DebugContext:
        return DebugContext(self._columns.report.debug, int(self._members.context[self._row]))

    @property
    def name(self) -> str:
        return self.debugContext.name

    def programs(self) -> list[Program]:
        """Its program steps' programs, in step order."""
        steps = self._members.steps_of(self._row)
        return [make_program(self._columns, s) for s in steps.tolist()]

    @property
    def vars(self) -> LazyList[Variable]:
        """The variables created in it (whole variables)."""
        var = self._members.vars_of(self._row)
        return variables(self._columns.report, var, self._columns.report.graph.var_bytes[var])

    @property
    def cycles(self) -> int:
        """popvision-py's addition (libpva has no cycles per operation): its cycles over
        every run, as Operations counts them -- its share of each step it ran (a compute
        set several ops share is shared among them)."""
        return int(self._members.cycles[self._row])

    @property
    def cyclesByPhase(self) -> dict[str, int]:
        """popvision-py's addition: its cycles per framework phase they ran in (a pipeline's
        ``pipeline::steadyState``, ``host::infeed``, ...; "" outside every phase)."""
        members = self._members
        row = members.phase_cycles[self._row]
        return {label: int(c) for label, c in zip(members.phase_labels, row, strict=True) if c}

    @property
    def firstStepIndex(self) -> int | None:
        """Its first program step (= liveness step index); None when it has no steps."""
        steps = self._members.steps_of(self._row)
        return int(steps[0]) if steps.size else None

    @property
    def lastStepIndex(self) -> int | None:
        steps = self._members.steps_of(self._row)
        return int(steps[-1]) if steps.size else None

    def __repr__(self) -> str:
        return f"Operation({self.name!r})"


class OperationAnalysis(PvaObject):
    """``operations``: by first step, then debug context id (operations without steps last).
    A report without debug.cbor has none."""

    def __init__(self, report: Any) -> None:
        self._columns = report._derived

    @cached_property
    def operations(self) -> LazyList[Operation]:
        columns = self._columns
        return LazyList(len(columns.operations), lambda i: Operation(columns, i))
