"""libpva's liveness: ``livenessProgramSteps[i]`` with the not-always-live memory of the step
(whole device, one tile, one IPU) and the variables making it up; always-live variables;
lowered variables (each variable's part on one tile) with their liveness classes. Numbers
come from profiler_core's ``liveness_table``, ``liveness_on_tiles``, ``variables_live_at``
and ``lowered_variables``."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.analysis.liveness import variables_live_at
from profiler_core.analysis.liveness_tiles import ipu_tiles, variable_bytes_on_tiles
from profiler_core.model.kinds import MemoryCategory as M
from profiler_core.pva.lazy import LazyList
from profiler_core.pva.programs import Program, make_program
from profiler_core.pva.unmodelled import PvaObject
from profiler_core.pva.variables import Variable, variables

NOT_VARIABLE_CATEGORIES = {
    "vertexCode": M.VERTEX_CODE,
    "vertexInstanceState": M.VERTEX_STATE,
    "vectorListDescriptor": M.VERTEX_DESCRIPTORS,
    "controlCode": M.CONTROL_CODE,
    "internalExchangeCode": M.INTERNAL_EXCHANGE_CODE,
    "hostExchangeCode": M.HOST_EXCHANGE_CODE,
    "globalExchangeCode": M.GLOBAL_EXCHANGE_CODE,
    "exchangeBuffers": M.EXCHANGE_BUFFERS,
    "stack": M.STACK,
    "instrumentationResults": M.INSTRUMENTATION,
}
"""Always-live memory that is not a variable, listed among the always-live variables."""


class NotAlwaysLiveMemory(PvaObject):
    """``bytes`` live during the step (of the tiles asked about) and ``variables`` making it
    up, largest first (each with its bytes on those tiles)."""

    __slots__ = ("_columns", "_step", "_tiles", "bytes")

    def __init__(self, columns: Any, step: int, live_bytes: int, tiles: Any = None) -> None:
        self._columns, self._step, self._tiles = columns, step, tiles
        self.bytes = live_bytes

    @property
    def variables(self) -> LazyList[Variable]:
        report = self._columns.report
        live = variables_live_at(report, self._step)
        if self._tiles is None:
            return variables(report, live.var, live.bytes)
        on_tiles = variable_bytes_on_tiles(report, self._tiles)[live.var]
        keep = on_tiles > 0
        var, size = live.var[keep], on_tiles[keep]
        order = np.lexsort((var, -size))
        return variables(report, var[order], size[order])


class LivenessProgramStep(PvaObject):
    __slots__ = ("_columns", "_live", "index")

    def __init__(self, columns: Any, step: int, live: np.ndarray) -> None:
        self._columns = columns
        self.index = step
        self._live = live

    @property
    def program(self) -> Program:
        return make_program(self._columns, self.index)

    @property
    def notAlwaysLiveMemory(self) -> NotAlwaysLiveMemory:
        return NotAlwaysLiveMemory(self._columns, self.index, int(self._live[self.index]))

    def notAlwaysLiveMemoryForTile(self, tile: int) -> NotAlwaysLiveMemory:
        table = self._columns.tile_liveness(("tile", int(tile)))
        live = int(table.not_always_live[self.index])
        return NotAlwaysLiveMemory(self._columns, self.index, live, np.array([int(tile)]))

    def notAlwaysLiveMemoryForIpu(self, ipu: int) -> NotAlwaysLiveMemory:
        table = self._columns.tile_liveness(("ipu", int(ipu)))
        live = int(table.not_always_live[self.index])
        tiles = ipu_tiles(self._columns.report, int(ipu))
        return NotAlwaysLiveMemory(self._columns, self.index, live, tiles)

    def __repr__(self) -> str:
        return f"LivenessProgramStep({self.index})"


def always_live_variables(columns: Any, tile: int | None) -> LazyList[Variable]:
    """Always-live variables and constants (their bytes on ``tile``, or whole), then one
    entry per always-live category that is not a variable (see NOT_VARIABLE_CATEGORIES)."""
    report = columns.report
    graph = report.graph
    always = np.asarray(graph.var_always_live, bool) | np.asarray(graph.var_is_constant, bool)
    if tile is None:
        var = np.flatnonzero(always)
        size = graph.var_bytes[var].astype(np.int64)
        other = {
            n: int(columns.memory.by_category[c].sum()) for n, c in NOT_VARIABLE_CATEGORIES.items()
        }
    else:
        per_var = variable_bytes_on_tiles(report, np.array([tile]))
        var = np.flatnonzero(always & (per_var > 0))
        size = per_var[var]
        rows = columns.category_rows
        other = {n: int(rows[c, tile]) for n, c in NOT_VARIABLE_CATEGORIES.items()}
    return variables(report, var, size, [Variable(-1, n, s) for n, s in other.items()])


class Interval(PvaObject):
    """Program steps [start, end)."""

    __slots__ = ("end", "start")

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end

    def __repr__(self) -> str:
        return f"Interval({self.start}, {self.end})"


class EquivalenceClass(PvaObject):
    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, index: int) -> None:
        self._columns, self.id = columns, index

    @property
    def steps(self) -> list[Interval]:
        start, end = self._columns.lowered.intervals(self.id)
        return [Interval(s, e) for s, e in zip(start.tolist(), end.tolist(), strict=True)]


class LoweredVariable(PvaObject):
    """One variable's part on one tile: ``id`` / ``_id`` (its row), ``bytes``, ``tileId``,
    ``name`` (its variable's), ``equivalenceClass``, ``unloweredVar``."""

    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, row: int) -> None:
        self._columns, self.id = columns, row

    @property
    def _id(self) -> int:
        return self.id

    @property
    def bytes(self) -> int:
        return int(self._columns.lowered.bytes[self.id])

    @property
    def tileId(self) -> int:
        return int(self._columns.lowered.tile[self.id])

    @property
    def _var(self) -> int:
        return int(self._columns.lowered.var[self.id])

    @property
    def name(self) -> str:
        graph = self._columns.report.graph
        return graph.strings[int(graph.var_name[self._var])]

    @property
    def equivalenceClass(self) -> EquivalenceClass:
        return EquivalenceClass(self._columns, int(self._columns.lowered.var_class[self._var]))

    @property
    def hasUnloweredVar(self) -> bool:
        return True

    @property
    def unloweredVar(self) -> Variable:
        var = self._var
        return Variable(var, self.name, int(self._columns.report.graph.var_bytes[var]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LoweredVariable) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("LoweredVariable", self.id))

    def __repr__(self) -> str:
        return f"LoweredVariable({self.name!r}, tile={self.tileId}, bytes={self.bytes})"


class LoweredVariables(PvaObject):
    """``allBriefVars`` (every part, lazily) and ``forTile(t)``."""

    __slots__ = ("_columns",)

    def __init__(self, columns: Any) -> None:
        self._columns = columns

    @property
    def allBriefVars(self) -> LazyList[LoweredVariable]:
        columns = self._columns
        return LazyList(len(columns.lowered), lambda i: LoweredVariable(columns, i))

    def forTile(self, tile: int) -> LazyList[LoweredVariable]:
        columns = self._columns
        rows = columns.lowered.on_tile(int(tile))
        return LazyList(len(rows), lambda i: LoweredVariable(columns, int(rows[i])))
