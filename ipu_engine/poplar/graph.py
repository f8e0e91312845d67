"""The graph: variables and constants, their tile mapping, host streams and read/write
handles -- everything an engine compiles (codelets, compute sets and vertices are in
``graph_compute``).

Names and behaviour follow Poplar's ``poplar::Graph`` in snake_case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ipu_engine.common.arguments import (
    address_array_arg,
    count_arg,
    host_values,
    kind_error,
    name_arg,
    sequence_arg,
    shape_arg,
)
from ipu_engine.common.errors import (
    GraphError,
    HandleError,
    ShapeError,
    StreamError,
    TileMappingError,
)
from ipu_engine.common.types import Type, as_type
from ipu_engine.poplar.debug import DebugContexts, scoped_name
from ipu_engine.poplar.graph_compute import ComputeSetsMixin
from ipu_engine.poplar.host_memory import check_fits
from ipu_engine.poplar.journal import Journal, recorded
from ipu_engine.poplar.pool import UNMAPPED, ElementPool
from ipu_engine.poplar.runs import Runs, runs_of
from ipu_engine.poplar.streams import DataStream, StreamDirection
from ipu_engine.poplar.target import Device, Target, tile_arg, tile_array_arg
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.tile_intervals import check_disjoint, is_interval_lists, tile_intervals
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import ComputeSet, VertexBlock, VertexRef

if TYPE_CHECKING:
    from ipu_engine.poplar.program import Program


@dataclass(frozen=True)
class VariableInfo:
    """One variable or constant: its place in its pool and who made it."""

    id: int
    name: str
    type: Type
    shape: tuple[int, ...]
    base: int
    size: int
    is_constant: bool
    debug_id: int


@dataclass(frozen=True, eq=False)
class Function:
    """A program compiled once and run wherever a ``Call`` names it."""

    id: int
    program: Program
    name: str


class Graph(ComputeSetsMixin):
    """A Poplar graph for one target."""

    def __init__(self, target: Target | Device) -> None:
        if not isinstance(target, Target | Device):
            raise GraphError(kind_error("Graph: the target", "a Target or Device", target))
        self.target: Target = target.target if isinstance(target, Device) else target
        self.debug = DebugContexts()
        self.variables: list[VariableInfo] = []
        self.constant_values: dict[int, np.ndarray] = {}
        self.compute_sets: list[ComputeSet] = []
        self.vertex_blocks: list[VertexBlock] = []
        self.host_writes: dict[str, Tensor] = {}
        self.host_reads: dict[str, Tensor] = {}
        self.streams: dict[str, DataStream] = {}
        self.functions: list[Function] = []
        self._pools: dict[Type, ElementPool] = {}
        self._codelets: dict[str, type[Vertex]] = {}
        self._num_vertices = 0
        self._host_bytes = 0  # host memory the variables will need (values + mapping)
        self._tile_ranges: list[range] = []  # pushed by virtual_graph.on_tiles / on_ipu
        # the user's calls that built it (autoReport.outputSerializedGraph); None: not kept
        self.journal: Journal | None = Journal()

    @property
    def tile_range(self) -> range:
        """The tiles library ops spread their work over: every tile of the target, or the
        IPU or tile range chosen with ``ipu_engine.poplar.virtual_graph.on_ipu`` / ``on_tiles``."""
        return self._tile_ranges[-1] if self._tile_ranges else range(self.target.num_tiles)

    # -- variables and constants ------------------------------------------------------
    def pool(self, elem_type: Type) -> ElementPool:
        if elem_type not in self._pools:
            self._pools[elem_type] = ElementPool(elem_type)
        return self._pools[elem_type]

    @property
    def pools(self) -> Mapping[Type, ElementPool]:
        return self._pools

    @recorded("Graph.add_variable")
    def add_variable(self, dtype: Any, shape: Sequence[int] | int, name: str = "") -> Tensor:
        """A new variable of ``dtype`` and ``shape``; map it to tiles before compiling."""
        return self._add_storage(dtype, shape, name, None, "Graph.add_variable")

    @recorded("Graph.add_constant")
    def add_constant(
        self, dtype: Any, shape: Sequence[int] | int, values: Any, name: str = ""
    ) -> Tensor:
        """A constant initialised from ``values`` (broadcast to ``shape``)."""
        name = name_arg(name, "Graph.add_constant: the name")
        elem_type = as_type(dtype)
        shape_t = _shape(shape, name or "constant")
        what = f"constant {name or '(unnamed)'!r}"
        converted = host_values(values, elem_type, f"{what}: values", GraphError)
        try:
            data = np.broadcast_to(converted, shape_t)
        except ValueError:
            got = np.shape(values)
            raise ShapeError(
                f"constant {name or '(unnamed)'!r}: {len(np.ravel(values))} values of shape "
                f"{got} do not fit its shape {shape_t}"
            ) from None
        return self._add_storage(elem_type, shape_t, name, data.copy(), "Graph.add_constant")

    def _add_storage(
        self, dtype: Any, shape: Sequence[int] | int, name: str, values: np.ndarray | None, api: str
    ) -> Tensor:
        elem_type = as_type(dtype)
        name = name_arg(name, f"{api}: the name")
        var_id = len(self.variables)
        name = scoped_name(name or f"{'constant' if values is not None else 'var'}{var_id}")
        shape_t = _shape(shape, name)
        size = int(np.prod(shape_t, dtype=np.int64))  # no overflow: shape_arg bounds it
        need = check_fits(name, shape_t, size, elem_type.size, self._host_bytes)
        self._check_target_bound(name, shape_t, size * elem_type.size)
        self._host_bytes += need
        base = self.pool(elem_type).allocate(size, var_id)
        debug_id = self.debug.add(name.rsplit("/", 1)[-1], api, {"shape": list(shape_t)})
        self.variables.append(
            VariableInfo(var_id, name, elem_type, shape_t, base, size, values is not None, debug_id)
        )
        if values is not None:
            self.constant_values[var_id] = values
        return Tensor(self, elem_type, None, name, interval=(base, shape_t))

    def _check_target_bound(self, name: str, shape: tuple[int, ...], nbytes: int) -> None:
        # debug.allowOutOfMemory reports graphs that do not quite fit; a variable larger
        # than this bound can never be placed, and numpy would fail to hold it at load.
        limit = TARGET_MEMORY_FACTOR * self.target.num_tiles * self.target.bytes_per_tile
        if nbytes > limit:
            raise ShapeError(
                f"tensor {name!r} of shape {list(shape)} needs {nbytes} bytes, more than "
                f"{TARGET_MEMORY_FACTOR} times all the tile memory of "
                f"{self.target.describe()} ({limit} bytes); use a smaller shape"
            )

    @recorded("Graph.clone")
    def clone(self, tensor: Tensor, name: str = "") -> Tensor:
        """A new variable like ``tensor``: same type, shape and tile mapping."""
        self._own(tensor, "clone")
        name = name_arg(name, "clone: the name")
        out = self.add_variable(tensor.type, tensor.shape, name or f"{tensor.name}_clone")
        tiles = self.tile_array(tensor)
        self.pool(out.type).tiles.paint_elements(out.flat_index(), tiles)
        return out

    # -- tile mapping -----------------------------------------------------------------
    @recorded("Graph.set_tile_mapping")
    def set_tile_mapping(
        self, target: Tensor | VertexRef, tile: int | Sequence[Sequence[tuple[int, int]]]
    ) -> None:
        """Map a tensor (all of it, or Poplar's per-tile interval lists) or a vertex."""
        if isinstance(target, VertexRef):
            target.block.tiles[target.index] = tile_arg(tile, self.target, target.describe())
            return
        self._own(target, "set_tile_mapping")
        tile_map = self.pool(target.type).tiles
        what = f"tensor {target.name!r}"
        if not is_interval_lists(tile):  # one tile for all of it (checked as a tile)
            tile_map.paint_elements(target.flat_index(), tile_arg(tile, self.target, what))
            return
        size = target.num_elements
        begins, ends, tiles = [], [], []
        for tile_id, intervals in enumerate(tile):
            for begin, end in tile_intervals(intervals, tile_id, what):
                if not 0 <= begin <= end <= size:
                    raise TileMappingError(
                        f"tile mapping of {target.name!r}: interval [{begin}, {end}) on tile "
                        f"{tile_id} is outside its {size} elements"
                    )
                self.target.check_tile(tile_id, f"tensor {target.name!r}")
                begins.append(begin)
                ends.append(end)
                tiles.append(tile_id)
        if not begins:
            return
        begin_a, end_a = np.asarray(begins, np.int64), np.asarray(ends, np.int64)
        check_disjoint(begin_a, end_a, np.asarray(tiles), target.name)
        span = target.pool_range()
        if span is not None:  # a whole variable: the intervals are pool intervals
            tile_map.paint(span[0] + begin_a, end_a - begin_a, np.asarray(tiles, np.int32))
            return
        flat = target.flat_addr()
        element_tiles = np.repeat(np.asarray(tiles, np.int32), end_a - begin_a)
        index = np.concatenate([flat[b:e] for b, e in zip(begins, ends, strict=True)])
        tile_map.paint_elements(index, element_tiles)

    @recorded("Graph.set_tile_mapping_array")
    def set_tile_mapping_array(self, tensor: Tensor, tiles: np.ndarray) -> None:
        """Map every element of ``tensor`` to its own tile in one call (library ops use it)."""
        self._own(tensor, "set_tile_mapping_array")
        tiles = tile_array_arg(tiles, self.target, f"tensor {tensor.name!r}")
        if tiles.size != tensor.num_elements:
            raise ShapeError(
                f"tile mapping of {tensor.name!r}: {tiles.size} tiles given for "
                f"{tensor.num_elements} elements"
            )
        self.pool(tensor.type).tiles.paint_elements(tensor.flat_index(), tiles)

    @recorded("Graph.map_runs")
    def map_runs(
        self,
        tensor: Tensor,
        runs: Sequence[Runs | np.ndarray],
        tiles: Sequence[int],
        run_tiles: np.ndarray | None = None,
    ) -> None:
        """Map each part of ``tensor`` (runs of its addresses, or an address view) to its
        tile in one call (or each run to its own of ``run_tiles``): library ops map
        thousands of blocks this way."""
        self._own(tensor, "map_runs")
        parts = [
            r if isinstance(r, Runs) else runs_of(address_array_arg(r, f"map_runs: run {i}"))
            for i, r in enumerate(sequence_arg(runs, "map_runs: the runs", TileMappingError))
        ]
        if not parts:
            return
        counts = np.array([len(p) for p in parts], dtype=np.int64)
        if run_tiles is None:
            tiles = tile_array_arg(tiles, self.target, f"tensor {tensor.name!r}")
            if len(tiles) != len(parts):
                raise TileMappingError(
                    f"map_runs: {len(parts)} runs but {len(tiles)} tiles for {tensor.name!r}"
                )
            run_tiles = np.repeat(tiles, counts)
        run_tiles = tile_array_arg(run_tiles, self.target, f"tensor {tensor.name!r}")
        if len(run_tiles) != int(counts.sum()):
            raise TileMappingError(
                f"map_runs: {int(counts.sum())} runs but {len(run_tiles)} run tiles for "
                f"{tensor.name!r}"
            )
        self.pool(tensor.type).tiles.paint(
            np.concatenate([p.start for p in parts]),
            np.concatenate([p.length for p in parts]),
            run_tiles,
        )

    def tile_array(self, tensor: Tensor) -> np.ndarray:
        """The tile of every element of ``tensor`` (row-major), -1 where unmapped."""
        self._own(tensor, "tile_array")
        return self.pool(tensor.type).tiles.element_tiles(tensor.flat_index())

    def get_tile_mapping(self, tensor: Tensor) -> list[list[tuple[int, int]]]:
        """Poplar's mapping: for each tile, the [begin, end) intervals of the flat tensor."""
        tiles = self.tile_array(tensor)
        mapping: list[list[tuple[int, int]]] = [[] for _ in range(self.target.num_tiles)]
        if tiles.size == 0:
            return mapping
        cuts = np.flatnonzero(np.diff(tiles)) + 1
        starts = np.concatenate(([0], cuts))
        ends = np.concatenate((cuts, [tiles.size]))
        for begin, end in zip(starts.tolist(), ends.tolist(), strict=True):
            if tiles[begin] != UNMAPPED:
                mapping[int(tiles[begin])].append((begin, end))
        return mapping

    # -- host handles, streams and functions -----------------------------------------
    @recorded("Graph.create_host_write")
    def create_host_write(self, handle: str, tensor: Tensor) -> None:
        self._own(tensor, "create_host_write")
        name_arg(handle, "create_host_write: the handle", HandleError)
        if handle in self.host_writes:
            raise HandleError(f"host write handle {handle!r} already exists")
        constants = [v for v in variables_of(self, tensor).tolist() if v in self.constant_values]
        if constants:
            raise HandleError(
                f"create_host_write({handle!r}): tensor {tensor.name!r} holds constant "
                f"{self.variables[constants[0]].name!r}; constants are read-only, as in "
                "Poplar: write into a variable instead"
            )
        self.host_writes[handle] = tensor

    @recorded("Graph.create_host_read")
    def create_host_read(self, handle: str, tensor: Tensor) -> None:
        self._own(tensor, "create_host_read")
        name_arg(handle, "create_host_read: the handle", HandleError)
        if handle in self.host_reads:
            raise HandleError(f"host read handle {handle!r} already exists")
        self.host_reads[handle] = tensor

    @recorded("Graph.add_host_to_device_fifo")
    def add_host_to_device_fifo(self, name: str, dtype: Any, num_elements: int) -> DataStream:
        return self._add_stream(name, dtype, num_elements, StreamDirection.HOST_TO_DEVICE)

    @recorded("Graph.add_device_to_host_fifo")
    def add_device_to_host_fifo(self, name: str, dtype: Any, num_elements: int) -> DataStream:
        return self._add_stream(name, dtype, num_elements, StreamDirection.DEVICE_TO_HOST)

    def _add_stream(
        self, name: str, dtype: Any, num_elements: int, direction: StreamDirection
    ) -> DataStream:
        if name_arg(name, "a stream's name", StreamError) in self.streams:
            raise StreamError(f"a stream named {name!r} already exists in this graph")
        count = count_arg(num_elements, f"stream {name!r}: num_elements", ShapeError)
        elem_type = as_type(dtype)
        debug_id = self.debug.add(name, f"Graph.add_{direction.name.lower()}_fifo")
        stream = DataStream(name, elem_type, count, direction, debug_id)
        self.streams[name] = stream
        return stream

    @recorded("Graph.add_function")
    def add_function(self, program: Program, name: str = "") -> Function:
        name = name_arg(name, "add_function: the name")
        function = Function(len(self.functions), program, name or f"function{len(self.functions)}")
        self.functions.append(function)
        return function

    # -- checks -----------------------------------------------------------------------
    def _own(self, tensor: Tensor, what: str) -> None:
        if not isinstance(tensor, Tensor):
            raise GraphError(f"{what}: expected a Tensor, got {type(tensor).__name__}")
        if tensor.graph is not self:
            raise GraphError(f"{what}: tensor {tensor.name!r} belongs to another graph")


#: A variable may need at most this many times all the target's tile memory.
TARGET_MEMORY_FACTOR = 16


def _shape(shape: Sequence[int] | int, name: str) -> tuple[int, ...]:
    return shape_arg(shape, f"tensor {name!r}")


def graph_arg(value: Any, what: str) -> Any:
    """A ``Graph`` (library ops and helpers take one first)."""
    if not isinstance(value, Graph):
        raise GraphError(kind_error(f"{what}: the graph", "a Graph", value))
    return value


def variables_of(graph: Graph, tensor: Tensor) -> np.ndarray:
    """The variables whose elements ``tensor`` views (ascending ids)."""
    pool = graph.pool(tensor.type)
    span = tensor.pool_range()
    if span is not None:
        return pool.variables_in_runs(np.array([span[0]]), np.array([span[1] - span[0]]))
    return pool.variables_touched(tensor.flat_addr())
