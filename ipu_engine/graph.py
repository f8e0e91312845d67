"""The graph: variables and constants, their tile mapping, compute sets of vertices,
host streams and read/write handles -- everything an engine compiles.

Names and behaviour follow Poplar's ``poplar::Graph`` in snake_case.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ipu_engine.debug import DebugContexts, current_scopes, scoped_name
from ipu_engine.errors import (
    CodeletError,
    GraphError,
    HandleError,
    ShapeError,
    StreamError,
    TileMappingError,
    TypeMismatchError,
    VertexConnectionError,
)
from ipu_engine.pool import UNMAPPED, ElementPool
from ipu_engine.streams import DataStream, StreamDirection
from ipu_engine.target import Device, Target
from ipu_engine.tensor import Tensor
from ipu_engine.types import Type, as_type
from ipu_engine.vertex import Field, Vertex
from ipu_engine.vertices import ComputeSet, EdgeColumn, FieldRef, VertexBlock, VertexRef

if TYPE_CHECKING:
    from ipu_engine.program import Program


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


class Graph:
    """A Poplar graph for one target."""

    def __init__(self, target: Target | Device) -> None:
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
        self._tile_ranges: list[range] = []  # pushed by virtual_graph.on_tiles / on_ipu

    @property
    def tile_range(self) -> range:
        """The tiles library ops spread their work over: every tile of the target, or the
        IPU or tile range chosen with ``ipu_engine.virtual_graph.on_ipu`` / ``on_tiles``."""
        return self._tile_ranges[-1] if self._tile_ranges else range(self.target.num_tiles)

    # -- variables and constants ------------------------------------------------------
    def pool(self, elem_type: Type) -> ElementPool:
        if elem_type not in self._pools:
            self._pools[elem_type] = ElementPool(elem_type)
        return self._pools[elem_type]

    @property
    def pools(self) -> Mapping[Type, ElementPool]:
        return self._pools

    def add_variable(self, dtype: Any, shape: Sequence[int] | int, name: str = "") -> Tensor:
        """A new variable of ``dtype`` and ``shape``; map it to tiles before compiling."""
        return self._add_storage(dtype, shape, name, None, "Graph.add_variable")

    def add_constant(
        self, dtype: Any, shape: Sequence[int] | int, values: Any, name: str = ""
    ) -> Tensor:
        """A constant initialised from ``values`` (broadcast to ``shape``)."""
        elem_type = as_type(dtype)
        shape_t = _shape(shape, name or "constant")
        try:
            data = np.broadcast_to(np.asarray(values, dtype=elem_type.numpy_dtype), shape_t)
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
        var_id = len(self.variables)
        name = scoped_name(name or f"{'constant' if values is not None else 'var'}{var_id}")
        shape_t = _shape(shape, name)
        size = int(np.prod(shape_t, dtype=np.int64))
        base = self.pool(elem_type).allocate(size, var_id)
        debug_id = self.debug.add(name.rsplit("/", 1)[-1], api, {"shape": list(shape_t)})
        self.variables.append(
            VariableInfo(var_id, name, elem_type, shape_t, base, size, values is not None, debug_id)
        )
        if values is not None:
            self.constant_values[var_id] = values
        addr = np.arange(base, base + size, dtype=np.int64).reshape(shape_t)
        addr.flags.writeable = False
        return Tensor(self, elem_type, addr, name)

    def clone(self, tensor: Tensor, name: str = "") -> Tensor:
        """A new variable like ``tensor``: same type, shape and tile mapping."""
        self._own(tensor, "clone")
        out = self.add_variable(tensor.type, tensor.shape, name or f"{tensor.name}_clone")
        tiles = self.tile_array(tensor)
        self.pool(out.type).tile_of.data[out.flat_addr()] = tiles
        return out

    # -- tile mapping -----------------------------------------------------------------
    def set_tile_mapping(
        self, target: Tensor | VertexRef, tile: int | Sequence[Sequence[tuple[int, int]]]
    ) -> None:
        """Map a tensor (all of it, or Poplar's per-tile interval lists) or a vertex."""
        if isinstance(target, VertexRef):
            self.target.check_tile(int(tile), target.describe())
            target.block.tiles[target.index] = int(tile)
            return
        self._own(target, "set_tile_mapping")
        column = self.pool(target.type).tile_of.data
        if isinstance(tile, int | np.integer):
            self.target.check_tile(int(tile), f"tensor {target.name!r}")
            column[target.flat_addr()] = int(tile)
            return
        flat = target.flat_addr()
        for tile_id, intervals in enumerate(tile):
            for begin, end in intervals:
                if not 0 <= begin <= end <= len(flat):
                    raise TileMappingError(
                        f"tile mapping of {target.name!r}: interval [{begin}, {end}) on tile "
                        f"{tile_id} is outside its {len(flat)} elements"
                    )
                self.target.check_tile(tile_id, f"tensor {target.name!r}")
                column[flat[begin:end]] = tile_id

    def set_tile_mapping_array(self, tensor: Tensor, tiles: np.ndarray) -> None:
        """Map every element of ``tensor`` to its own tile in one call (library ops use it)."""
        self._own(tensor, "set_tile_mapping_array")
        tiles = np.asarray(tiles).reshape(-1)
        if tiles.size != tensor.num_elements:
            raise ShapeError(
                f"tile mapping of {tensor.name!r}: {tiles.size} tiles given for "
                f"{tensor.num_elements} elements"
            )
        if tiles.size and (tiles.min() < 0 or tiles.max() >= self.target.num_tiles):
            bad = int(tiles.max() if tiles.max() >= self.target.num_tiles else tiles.min())
            self.target.check_tile(bad, f"tensor {tensor.name!r}")
        self.pool(tensor.type).tile_of.data[tensor.flat_addr()] = tiles

    def tile_array(self, tensor: Tensor) -> np.ndarray:
        """The tile of every element of ``tensor`` (row-major), -1 where unmapped."""
        self._own(tensor, "tile_array")
        return self.pool(tensor.type).tile_of.data[tensor.flat_addr()]

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

    # -- codelets, compute sets and vertices -----------------------------------------
    def add_codelets(self, *sources: type[Vertex] | ModuleType | str | Path | Iterable) -> None:
        """Register codelet classes, every codelet in a module, or a Python file of codelets."""
        for source in sources:
            if isinstance(source, type) and issubclass(source, Vertex):
                self._codelets[source.type_name] = source
            elif isinstance(source, ModuleType):
                self.add_codelets(*_codelets_in(source))
            elif isinstance(source, str | Path):
                self.add_codelets(_load_codelet_file(Path(source)))
            elif isinstance(source, Iterable):
                self.add_codelets(*source)
            else:
                raise CodeletError(f"add_codelets: {source!r} is not a codelet, module or file")

    def codelet(self, codelet: type[Vertex] | str) -> type[Vertex]:
        from ipu_engine.codelets import builtin_codelet

        if isinstance(codelet, type) and issubclass(codelet, Vertex):
            return codelet
        if isinstance(codelet, str):
            found = self._codelets.get(codelet) or builtin_codelet(codelet)
            if found is not None:
                return found
            known = ", ".join(sorted(self._codelets)) or "none yet"
            raise CodeletError(
                f"codelet {codelet!r} is not in the graph (registered: {known}); "
                "add it with graph.add_codelets(...)"
            )
        raise CodeletError(f"{codelet!r} is not a codelet class or name")

    def add_compute_set(self, name: str = "") -> ComputeSet:
        cs_id = len(self.compute_sets)
        name = scoped_name(name or f"cs{cs_id}")
        if self.debug._op_stack:
            op_name = self.debug[self.debug._op_stack[-1]].name
            name = f"{op_name}/{name.split('/', len(current_scopes()))[-1]}"
        debug_id = self.debug.add(name.rsplit("/", 1)[-1], "Graph.add_compute_set")
        cs = ComputeSet(cs_id, name, debug_id)
        self.compute_sets.append(cs)
        return cs

    def add_vertex(
        self,
        compute_set: ComputeSet,
        codelet: type[Vertex] | str,
        connections: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> VertexRef:
        """Add one vertex; connect fields now (keywords or a dict, for names like ``in``)."""
        cls = self.codelet(codelet)
        self._own_compute_set(compute_set)
        block = VertexBlock(
            cls,
            compute_set.id,
            self._num_vertices,
            np.full(1, UNMAPPED, dtype=np.int32),
            state={
                k: np.array([s.default], dtype=s.type.numpy_dtype) for k, s in cls.state.items()
            },
        )
        self._append_block(compute_set, block)
        vertex = VertexRef(self, block, 0)
        for name, value in {**(connections or {}), **fields}.items():
            key = name[:-1] if name.endswith("_") else name
            if key in cls.state:
                self.set_initial_value(vertex[key], value)
            else:
                self.connect(vertex[key], value)
        return vertex

    def add_vertex_block(
        self,
        compute_set: ComputeSet,
        codelet: type[Vertex] | str,
        tiles: np.ndarray,
        edges: Mapping[str, EdgeColumn | tuple[np.ndarray, np.ndarray]],
        state: Mapping[str, np.ndarray] | None = None,
        edge_types: Mapping[str, Any] | None = None,
    ) -> VertexBlock:
        """Add many vertices of one codelet at once: edges as (addresses, offsets) columns.

        The fast path library ops use: no Python work per vertex. ``edge_types`` gives
        the element type of templated fields (those declared without a type).
        """
        cls = self.codelet(codelet)
        self._own_compute_set(compute_set)
        tiles = np.ascontiguousarray(tiles, dtype=np.int32)
        if tiles.size and (tiles.min() < 0 or tiles.max() >= self.target.num_tiles):
            self.target.check_tile(
                int(tiles.min() if tiles.min() < 0 else tiles.max()), cls.type_name
            )
        columns = {}
        for name, column in edges.items():
            if name not in cls.fields:
                raise VertexConnectionError(f"{cls.type_name} has no field {name!r}")
            col = column if isinstance(column, EdgeColumn) else EdgeColumn(*column)
            n_edges = len(col.offsets) - 1
            expected = tiles.size if col.edges_of_vertex is None else int(col.edges_of_vertex[-1])
            if n_edges != expected:
                raise ShapeError(
                    f"{cls.type_name}.{name}: {n_edges} edges given for {tiles.size} vertices"
                )
            columns[name] = col
        values = {
            k: np.full(tiles.size, s.default, dtype=s.type.numpy_dtype)
            for k, s in cls.state.items()
        }
        for name, column in (state or {}).items():
            values[name] = np.asarray(column, dtype=cls.state[name].type.numpy_dtype)
        types = {}
        for name, spec in cls.fields.items():
            given = (edge_types or {}).get(name)
            if spec.type is None and given is None:
                raise VertexConnectionError(
                    f"{cls.type_name}.{name} is templated ({spec.describe()}): pass its element "
                    "type in edge_types"
                )
            types[name] = spec.type or as_type(given)
        block = VertexBlock(cls, compute_set.id, self._num_vertices, tiles, columns, values)
        block.edge_types.update(types)
        self._append_block(compute_set, block)
        return block

    def _append_block(self, compute_set: ComputeSet, block: VertexBlock) -> None:
        compute_set.blocks.append(block)
        self.vertex_blocks.append(block)
        self._num_vertices += block.count

    @property
    def num_vertices(self) -> int:
        return self._num_vertices

    def connect(self, field: FieldRef, tensor: Tensor | Sequence[Tensor]) -> None:
        """Connect a vertex field to a tensor (or a list of tensors for a vector of edges)."""
        vertex, name, element = _split_field(field)
        spec = self._field_spec(vertex, name)
        block = vertex.block
        if element is not None or spec.vector_of_edges:
            if not spec.vector_of_edges:
                raise VertexConnectionError(
                    f"{vertex.describe()}: field {name!r} is {spec.describe()}, not a vector "
                    "of edges; connect it to one tensor"
                )
            tensors = [tensor] if element is not None else list(tensor)  # type: ignore[arg-type]
            pending = block.pending.setdefault(name, {})
            start = element if element is not None else 0
            for i, t in enumerate(tensors):
                self._check_edge(vertex, spec, t)
                pending[start + i] = t.flat_addr()
            return
        if name in block.edges:
            raise VertexConnectionError(
                f"{vertex.describe()}: field {name!r} is already connected; each field "
                "connects to one tensor"
            )
        if not isinstance(tensor, Tensor):
            raise VertexConnectionError(
                f"{vertex.describe()}: field {name!r} needs a Tensor, got {type(tensor).__name__}"
            )
        self._check_edge(vertex, spec, tensor)
        addr = tensor.flat_addr()
        block.edges[name] = EdgeColumn(addr, np.array([0, addr.size], dtype=np.int64))

    def _field_spec(self, vertex: VertexRef, name: str) -> Field:
        spec = vertex.codelet.fields.get(name)
        if spec is None:
            known = ", ".join(vertex.codelet.fields) or "none"
            raise VertexConnectionError(
                f"{vertex.describe()} has no field {name!r}; its fields are: {known}"
            )
        return spec

    def _check_edge(self, vertex: VertexRef, spec: Field, tensor: Tensor) -> None:
        self._own(tensor, f"connect {vertex.describe()}")
        expected = spec.type or vertex.block.edge_types.get(spec.name)
        if expected is not None and tensor.type != expected:
            raise TypeMismatchError(
                f"{vertex.describe()}: field {spec.name!r} is {spec.describe()} "
                f"({expected!r}) but tensor {tensor.name!r} is {tensor.type!r}"
            )
        vertex.block.edge_types[spec.name] = tensor.type
        if spec.scalar and tensor.num_elements != 1:
            raise ShapeError(
                f"{vertex.describe()}: field {spec.name!r} is {spec.describe()} (one element) but "
                f"tensor {tensor.name!r} has shape {tensor.shape}"
            )

    def set_initial_value(self, field: FieldRef, value: Any) -> None:
        """Set a vertex state field (a non-edge field such as a count or a scale)."""
        vertex, name, _ = _split_field(field)
        spec = vertex.codelet.state.get(name)
        if spec is None:
            raise VertexConnectionError(
                f"{vertex.describe()} has no state field {name!r}; its state fields are: "
                f"{', '.join(vertex.codelet.state) or 'none'}"
            )
        vertex.block.state[name][vertex.index] = value

    def set_perf_estimate(self, vertex: VertexRef, cycles: int) -> None:
        """Cycles this vertex takes; wins over the codelet's own estimate."""
        if cycles < 0:
            raise GraphError(f"{vertex.describe()}: a cycle estimate must be >= 0, got {cycles}")
        block = vertex.block
        if block.perf_estimate is None:
            block.perf_estimate = np.full(block.count, -1, dtype=np.int64)
        block.perf_estimate[vertex.index] = int(cycles)

    # -- host handles, streams and functions -----------------------------------------
    def create_host_write(self, handle: str, tensor: Tensor) -> None:
        self._own(tensor, "create_host_write")
        if handle in self.host_writes:
            raise HandleError(f"host write handle {handle!r} already exists")
        self.host_writes[handle] = tensor

    def create_host_read(self, handle: str, tensor: Tensor) -> None:
        self._own(tensor, "create_host_read")
        if handle in self.host_reads:
            raise HandleError(f"host read handle {handle!r} already exists")
        self.host_reads[handle] = tensor

    def add_host_to_device_fifo(self, name: str, dtype: Any, num_elements: int) -> DataStream:
        return self._add_stream(name, dtype, num_elements, StreamDirection.HOST_TO_DEVICE)

    def add_device_to_host_fifo(self, name: str, dtype: Any, num_elements: int) -> DataStream:
        return self._add_stream(name, dtype, num_elements, StreamDirection.DEVICE_TO_HOST)

    def _add_stream(
        self, name: str, dtype: Any, num_elements: int, direction: StreamDirection
    ) -> DataStream:
        if name in self.streams:
            raise StreamError(f"a stream named {name!r} already exists in this graph")
        if int(num_elements) < 0:
            raise ShapeError(f"stream {name!r}: num_elements must be >= 0, got {num_elements}")
        debug_id = self.debug.add(name, f"Graph.add_{direction.name.lower()}_fifo")
        stream = DataStream(name, as_type(dtype), int(num_elements), direction, debug_id)
        self.streams[name] = stream
        return stream

    def add_function(self, program: Program, name: str = "") -> Function:
        function = Function(len(self.functions), program, name or f"function{len(self.functions)}")
        self.functions.append(function)
        return function

    # -- checks -----------------------------------------------------------------------
    def _own(self, tensor: Tensor, what: str) -> None:
        if not isinstance(tensor, Tensor):
            raise GraphError(f"{what}: expected a Tensor, got {type(tensor).__name__}")
        if tensor.graph is not self:
            raise GraphError(f"{what}: tensor {tensor.name!r} belongs to another graph")

    def _own_compute_set(self, compute_set: ComputeSet) -> None:
        if not isinstance(compute_set, ComputeSet) or (
            compute_set.id >= len(self.compute_sets)
            or self.compute_sets[compute_set.id] is not compute_set
        ):
            raise GraphError(f"{compute_set!r} is not a compute set of this graph")

    def variable_of_address(self, elem_type: Type, addr: np.ndarray) -> np.ndarray:
        return self.pool(elem_type).variables_of(addr)


def _shape(shape: Sequence[int] | int, name: str) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape)
    if any(int(d) < 0 for d in dims):
        raise ShapeError(f"{name!r}: a shape has no negative dimensions, got {list(dims)}")
    return tuple(int(d) for d in dims)


def _split_field(field: FieldRef) -> tuple[VertexRef, str, int | None]:
    if not isinstance(field, FieldRef):
        raise VertexConnectionError(f"expected a vertex field such as v['in'], got {field!r}")
    name = field.name
    if name.endswith("]") and "[" in name:
        base, index = name[:-1].split("[", 1)
        return field.vertex, base, int(index)
    return field.vertex, name, None


def _codelets_in(module: ModuleType) -> list[type[Vertex]]:
    return [
        obj
        for obj in vars(module).values()
        if inspect.isclass(obj) and issubclass(obj, Vertex) and obj.__module__ == module.__name__
    ]


def _load_codelet_file(path: Path) -> ModuleType:
    """Poplar's ``addCodelets("file")``: the user's own codelet source, here a Python file."""
    if not path.is_file():
        raise CodeletError(f"codelet file {path} does not exist")
    spec = importlib.util.spec_from_file_location(f"_codelets_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise CodeletError(f"codelet file {path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
