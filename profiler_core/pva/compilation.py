"""libpva's ``report.compilation``: target, graph counts, compute sets, programs, tiles with
their memory, IPUs with their tiles, liveness of each program step, always-live and lowered
variables. Lists are lazy: an item is made when indexed."""

from __future__ import annotations

import enum
from functools import cached_property
from typing import Any

from profiler_core.analysis.checks import fail
from profiler_core.analysis.liveness import liveness_table
from profiler_core.pva.graph_objects import ComputeSet
from profiler_core.pva.lazy import LazyList
from profiler_core.pva.liveness import (
    LivenessProgramStep,
    LoweredVariables,
    always_live_variables,
)
from profiler_core.pva.memory import TileMemory
from profiler_core.pva.programs import Program, make_program
from profiler_core.pva.unmodelled import PvaObject, not_modelled
from profiler_core.pva.variables import Variable


class IPU:
    """``pva.IPU.Architecture``: the IPU generations, by libpva's names."""

    class Architecture(enum.Enum):
        Ipu1 = "ipu1"
        Ipu2 = "ipu2"
        Ipu21 = "bow"  # Bow is IPU 2.1


class Target(PvaObject):
    """The device: IPUs, tiles, memory, clock; ``numReplicas`` from the report when it
    records replication, else 1; ``type`` "IPU_MODEL" (the engine simulates an IPU) unless
    the report says otherwise."""

    def __init__(self, columns: Any) -> None:
        t = columns.report.target
        self._report = columns.report
        recorded = getattr(t, "type", "")
        self.type = "IPU" if recorded == "IPU" else "IPU_MODEL"
        self.numIPUs = t.num_ipus
        self.tilesPerIpu = self.tilesPerIPU = t.tiles_per_ipu
        self.numTiles = t.num_tiles
        self.bytesPerTile = t.bytes_per_tile
        self.bytesPerIPU = t.bytes_per_tile * t.tiles_per_ipu
        self.totalMemory = t.bytes_per_tile * t.num_tiles
        self.clockFrequency = t.clock_hz
        self.numReplicas = max(int(getattr(t, "replicas", 0) or 0), 1)

    @property
    def architecture(self) -> IPU.Architecture:
        version = self._report.target.version
        try:
            return IPU.Architecture(version)
        except ValueError:
            fail(self._report, "target", f"unknown IPU version {version!r}")


class Graph(PvaObject):
    """Counts of the graph: compute sets, vertices, variables, vertex types; ``numEdges``
    when the report records it."""

    def __init__(self, columns: Any) -> None:
        g = columns.report.graph
        self._edges = int(getattr(g, "num_edges", -1))
        self.numComputeSets = len(g.cs_name)
        self.numVertices = int(g.vc_count.sum())
        self.numVariables = g.num_variables
        self.numVertexTypes = len(g.vt_name)

    @property
    def numEdges(self) -> int:
        if self._edges < 0:
            not_modelled(
                "Graph", "numEdges", "this report (format 1.0) does not record edges", "numVertices"
            )
        return self._edges


class Tile(PvaObject):
    __slots__ = ("_columns", "number")

    def __init__(self, columns: Any, number: int) -> None:
        self._columns = columns
        self.number = number

    @property
    def id(self) -> int:
        return self.number

    @property
    def ipu(self) -> int:
        return self.number // self._columns.report.target.tiles_per_ipu

    @property
    def memory(self) -> TileMemory:
        return TileMemory(self._columns, self.number)

    def __repr__(self) -> str:
        return f"Tile({self.number})"


class Ipu(PvaObject):
    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, index: int) -> None:
        self._columns = columns
        self.id = index

    @property
    def tiles(self) -> LazyList[Tile]:
        per_ipu = self._columns.report.target.tiles_per_ipu
        first = self.id * per_ipu
        return LazyList(per_ipu, lambda i: Tile(self._columns, first + i))


class Compilation(PvaObject):
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
    def programs(self) -> LazyList[Program]:
        """Every program step's program, in step order (``programs[i]._id == i``)."""
        columns = self._columns
        return LazyList(columns.programs.num_steps, lambda i: make_program(columns, i))

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
        return LazyList(len(live), lambda i: LivenessProgramStep(self._columns, i, live))

    @property
    def alwaysLiveMemory(self) -> int:
        """Bytes of always-live variables (libpva's ``alwaysLiveMemory.bytes`` as an int)."""
        return int(self._columns.report.liveness.always_live_bytes)

    @property
    def alwaysLiveVariables(self) -> LazyList[Variable]:
        """Always-live variables and constants, then the always-live memory that is not a
        variable, one entry per category (code, state, stacks, ...) over every tile."""
        return always_live_variables(self._columns, None)

    def alwaysLiveVariablesForTile(self, tile: int) -> LazyList[Variable]:
        """As ``alwaysLiveVariables`` on one tile: their sizes add up to the tile's
        ``memory.alwaysLiveBytes``."""
        num_tiles = self._columns.report.target.num_tiles
        if not 0 <= tile < num_tiles:
            raise IndexError(f"tile {tile}: tiles go from 0 to {num_tiles - 1}")
        return always_live_variables(self._columns, int(tile))

    @cached_property
    def loweredVariables(self) -> LoweredVariables:
        return LoweredVariables(self._columns)
