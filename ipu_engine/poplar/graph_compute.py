"""The compute half of a graph: codelets, compute sets and their vertices.

``Graph`` inherits these methods; they keep vertices as columnar blocks (``vertices``), so
a library op adds thousands of vertices with one ``add_vertex_block`` call.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ipu_engine.common.arguments import (
    address_array_arg,
    count_arg,
    host_values,
    instance_arg,
    kind_error,
    mapping_arg,
    name_arg,
)
from ipu_engine.common.errors import (
    CodeletError,
    GraphError,
    ShapeError,
    TypeMismatchError,
    VertexConnectionError,
)
from ipu_engine.common.types import as_type
from ipu_engine.poplar.codelet_registry import builtin_codelet
from ipu_engine.poplar.debug import scoped_name
from ipu_engine.poplar.journal import not_recorded
from ipu_engine.poplar.pool import UNMAPPED
from ipu_engine.poplar.target import tile_array_arg
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertex import Field, Vertex
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn, FieldRef, VertexBlock, VertexRef

if TYPE_CHECKING:
    from ipu_engine.poplar.debug import DebugContexts
    from ipu_engine.poplar.target import Target


_VERTICES_WHY = (
    "the program builds its own compute sets and vertices, whose codelets are Python code; "
    "a record keeps data only, so this graph cannot be replayed"
)


class ComputeSetsMixin:
    """Codelets, compute sets and vertices of a ``Graph``."""

    target: Target
    debug: DebugContexts
    compute_sets: list[ComputeSet]
    vertex_blocks: list[VertexBlock]
    _codelets: dict[str, type[Vertex]]
    _num_vertices: int
    _own: Callable[[Tensor, str], None]  # Graph's check that a tensor belongs to it

    @not_recorded("Graph.add_codelets", _VERTICES_WHY)
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

    @not_recorded("Graph.add_compute_set", _VERTICES_WHY)
    def add_compute_set(self, name: str = "") -> ComputeSet:
        cs_id = len(self.compute_sets)
        base = name_arg(name, "Graph.add_compute_set: the name") or f"cs{cs_id}"
        op = self.debug.current_op()  # a library op names its compute sets under its own name
        name = f"{op.name}/{base}" if op is not None else scoped_name(base)
        debug_id = self.debug.add(name.rsplit("/", 1)[-1], "Graph.add_compute_set")
        cs = ComputeSet(cs_id, name, debug_id)
        self.compute_sets.append(cs)
        return cs

    @not_recorded("Graph.add_vertex", _VERTICES_WHY)
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
        connections = mapping_arg(connections, f"{cls.type_name}: the connections")
        for name, value in {**connections, **fields}.items():
            key = name[:-1] if name.endswith("_") else name
            if key in cls.state:
                self.set_initial_value(vertex[key], value)
            else:
                self.connect(vertex[key], value)
        return vertex

    @not_recorded("Graph.add_vertex_block", _VERTICES_WHY)
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
        tiles = np.ascontiguousarray(tile_array_arg(tiles, self.target, cls.type_name))
        edges = mapping_arg(edges, f"{cls.type_name}: the edges", VertexConnectionError)
        state = mapping_arg(state, f"{cls.type_name}: the state", VertexConnectionError)
        edge_types = mapping_arg(edge_types, f"{cls.type_name}: the edge types")
        columns = {}
        for name, column in edges.items():
            if name not in cls.fields:
                raise VertexConnectionError(f"{cls.type_name} has no field {name!r}")
            col = column if isinstance(column, EdgeColumn) else _edge_column(cls, name, column)
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
        for name, column in state.items():
            if name not in cls.state:
                raise VertexConnectionError(f"{cls.type_name} has no state field {name!r}")
            what = f"{cls.type_name}.{name}: the state values"
            values[name] = host_values(column, cls.state[name].type, what, VertexConnectionError)
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
        what = f"{vertex.describe()}: state field {name!r}"
        values = host_values(value, spec.type, what, VertexConnectionError)
        if values.size != 1:
            raise VertexConnectionError(f"{what} holds one value, got {values.size}")
        vertex.block.state[name][vertex.index] = values.reshape(-1)[0]

    def set_perf_estimate(self, vertex: VertexRef, cycles: int) -> None:
        """Cycles this vertex takes; wins over the codelet's own estimate."""
        instance_arg(vertex, VertexRef, "set_perf_estimate: the vertex", GraphError)
        cycles = count_arg(cycles, f"{vertex.describe()}: a cycle estimate", limit=2**62)
        block = vertex.block
        if block.perf_estimate is None:
            block.perf_estimate = np.full(block.count, -1, dtype=np.int64)
        block.perf_estimate[vertex.index] = int(cycles)

    def _own_compute_set(self, compute_set: ComputeSet) -> None:
        if not isinstance(compute_set, ComputeSet) or (
            compute_set.id >= len(self.compute_sets)
            or self.compute_sets[compute_set.id] is not compute_set
        ):
            raise GraphError(f"{compute_set!r} is not a compute set of this graph")


def _split_field(field: FieldRef) -> tuple[VertexRef, str, int | None]:
    if not isinstance(field, FieldRef):
        raise VertexConnectionError(f"expected a vertex field such as v['in'], got {field!r}")
    name = field.name
    if not isinstance(name, str):
        raise VertexConnectionError(
            kind_error(f"{field.vertex.describe()}: a field name", "a string", name)
        )
    if name.endswith("]") and "[" in name:
        base, index = name[:-1].split("[", 1)
        if not (index.isascii() and index.isdigit()):
            raise VertexConnectionError(
                f"{field.vertex.describe()}: field {name!r}: an edge of a vector field is "
                f"numbered 0, 1, ..., got {index!r}"
            )
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


def _edge_column(cls: type[Vertex], name: str, column: Any) -> EdgeColumn:
    """``(addresses, offsets)`` of field ``name``'s edges, both integer arrays."""
    what = f"{cls.type_name}.{name}: the edges"
    pair = column if isinstance(column, tuple | list) else None
    if pair is None or len(pair) != 2:
        raise VertexConnectionError(
            f"{what} must be an EdgeColumn or an (addresses, offsets) pair, got "
            f"{type(column).__name__}"
        )
    addresses, offsets = (address_array_arg(part, what) for part in pair)
    return EdgeColumn(addresses, offsets)
