"""libpva's ``report.compilation``: target, graph counts, compute sets, tiles with their
memory, IPUs with their tiles, and the liveness of each program step. Lists are lazy."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from profiler_core.analysis.liveness import liveness_table, variables_live_at
from profiler_core.model.kinds import MemoryCategory
from profiler_core.pva.graph_objects import ComputeSet
from profiler_core.pva.lazy import LazyList
from profiler_core.pva.programs import Program, make_program


class Target:
    def __init__(self, columns: Any) -> None:
        t = columns.report.target
        self.type = "IPU_MODEL"
        self.architecture = t.version
        self.numIPUs = t.num_ipus
        self.tilesPerIpu = self.tilesPerIPU = t.tiles_per_ipu
        self.numTiles = t.num_tiles
        self.bytesPerTile = t.bytes_per_tile
        self.bytesPerIPU = t.bytes_per_tile * t.tiles_per_ipu
        self.totalMemory = t.bytes_per_tile * t.num_tiles
        self.clockFrequency = t.clock_hz
        self.numReplicas = 1


class Graph:
    def __init__(self, columns: Any) -> None:
        g = columns.report.graph
        self.numComputeSets = len(g.cs_name)
        self.numVertices = int(g.vc_count.sum())
        self.numVariables = g.num_variables
        self.numVertexTypes = len(g.vt_name)


class MemoryTotal:
    __slots__ = ("excludingGaps", "includingGaps")

    def __init__(self, including: int, excluding: int) -> None:
        self.includingGaps = including
        self.excludingGaps = excluding


class TileMemory:
    """``total.includingGaps / excludingGaps``; ``alwaysLiveBytes`` (everything but the
    not-always-live variables and gaps) and ``notAlwaysLiveBytes`` (their peak)."""

    __slots__ = ("_columns", "_tile")

    def __init__(self, columns: Any, tile: int) -> None:
        self._columns = columns
        self._tile = tile

    @property
    def total(self) -> MemoryTotal:
        m = self._columns.memory
        return MemoryTotal(int(m.total(True)[self._tile]), int(m.total(False)[self._tile]))

    @property
    def alwaysLiveBytes(self) -> int:
        return int(self._columns.always_live_per_tile[self._tile])

    @property
    def notAlwaysLiveBytes(self) -> int:
        rows = self._columns.memory.by_category
        return int(rows[MemoryCategory.NOT_ALWAYS_LIVE_VARIABLES, self._tile])

    def byCategory(self) -> dict[str, int]:
        """Bytes per memory category label (an addition to libpva)."""
        m = self._columns.memory
        return {c.label: int(m.by_category[c, self._tile]) for c in m.categories()}


class Tile:
    __slots__ = ("_columns", "number")

    def __init__(self, columns: Any, number: int) -> None:
        self._columns = columns
        self.number = number

    @property
    def ipu(self) -> int:
        return self.number // self._columns.report.target.tiles_per_ipu

    @property
    def memory(self) -> TileMemory:
        return TileMemory(self._columns, self.number)

    def __repr__(self) -> str:
        return f"Tile({self.number})"


class Ipu:
    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, index: int) -> None:
        self._columns = columns
        self.id = index

    @property
    def tiles(self) -> LazyList[Tile]:
        per_ipu = self._columns.report.target.tiles_per_ipu
        first = self.id * per_ipu
        return LazyList(per_ipu, lambda i: Tile(self._columns, first + i))


class NotAlwaysLiveMemory:
    def __init__(self, columns: Any, step: int, live_bytes: int) -> None:
        self._columns = columns
        self._step = step
        self.bytes = live_bytes

    @property
    def variables(self) -> list[Variable]:
        live = variables_live_at(self._columns.report, self._step)
        return [
            Variable(name, int(size))
            for name, size in zip(live.names, live.bytes.tolist(), strict=True)
        ]


class Variable:
    __slots__ = ("bytes", "name")

    def __init__(self, name: str, size: int) -> None:
        self.name, self.bytes = name, size


class LivenessProgramStep:
    def __init__(self, columns: Any, step: int, live_bytes: int) -> None:
        self._columns = columns
        self.index = step
        self.notAlwaysLiveMemory = NotAlwaysLiveMemory(columns, step, live_bytes)

    @property
    def program(self) -> Program:
        return make_program(self._columns, self.index)


class Compilation:
    def __init__(self, columns: Any) -> None:
        self._columns = columns

    @cached_property
    def target(self) -> Target:
        return Target(self._columns)

    @cached_property
    def graph(self) -> Graph:
        return Graph(self._columns)

    @cached_property
    def computeSets(self) -> LazyList[ComputeSet]:
        count = len(self._columns.report.graph.cs_name)
        return LazyList(count, lambda i: ComputeSet(self._columns, i))

    @cached_property
    def tiles(self) -> LazyList[Tile]:
        _ = self._columns.memory  # a damaged memory section fails here, not at the n-th tile
        return LazyList(self._columns.report.target.num_tiles, lambda i: Tile(self._columns, i))

    @cached_property
    def ipus(self) -> LazyList[Ipu]:
        return LazyList(self._columns.report.target.num_ipus, lambda i: Ipu(self._columns, i))

    @cached_property
    def livenessProgramSteps(self) -> LazyList[LivenessProgramStep]:
        live = liveness_table(self._columns.report).live_bytes(False)
        return LazyList(len(live), lambda i: LivenessProgramStep(self._columns, i, int(live[i])))

    @property
    def alwaysLiveMemory(self) -> int:
        """Bytes of always-live variables (libpva's ``alwaysLiveMemory.bytes`` as an int)."""
        return int(self._columns.report.liveness.always_live_bytes)
