"""Codelets: vertex types with typed fields and a ``compute`` method, as Poplar's C++ vertices.

A codelet is a Python class::

    class SumVertex(Vertex):
        in_ = Input(FLOAT)               # Input<Vector<float>>; addressed as "in"
        out = Output(FLOAT, scalar=True) # Output<float>

        def compute(self):
            self.out = self.in_.sum()

Inside ``compute`` every edge field is a numpy array (inputs read-only); an output may
be written in place (``self.out[:] = ...``) or rebound (``self.out = ...``). A codelet
that knows how to run many vertices at once defines ``compute_batch(batch)``, and the
engine then makes one numpy call per codelet type per compute set.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from ipu_engine.common.errors import CodeletError
from ipu_engine.common.types import Type, as_type


class Direction(enum.Enum):
    INPUT = "Input"
    OUTPUT = "Output"
    INOUT = "InOut"

    @property
    def reads(self) -> bool:
        return self is not Direction.OUTPUT

    @property
    def writes(self) -> bool:
        return self is not Direction.INPUT


@dataclass(frozen=True)
class Field:
    """An edge of a vertex: a tensor it reads, writes or both."""

    direction: Direction
    type: Type | None = None  # None: any element type (a templated field)
    scalar: bool = False  # Input<float> rather than Input<Vector<float>>
    vector_of_edges: bool = False  # Vector<Input<Vector<float>>>
    name: str = ""

    def describe(self) -> str:
        elem = "T" if self.type is None else self.type.name
        inner = elem if self.scalar else f"Vector<{elem}>"
        text = f"{self.direction.value}<{inner}>"
        return f"Vector<{text}>" if self.vector_of_edges else text


@dataclass(frozen=True)
class State:
    """A vertex state field that is not an edge (Poplar's ``unsigned n;``), set per vertex."""

    type: Type
    default: float | int | bool = 0
    name: str = ""


def Input(dtype: Any = None, *, scalar: bool = False) -> Field:
    return Field(Direction.INPUT, None if dtype is None else as_type(dtype), scalar)


def Output(dtype: Any = None, *, scalar: bool = False) -> Field:
    return Field(Direction.OUTPUT, None if dtype is None else as_type(dtype), scalar)


def InOut(dtype: Any = None, *, scalar: bool = False) -> Field:
    return Field(Direction.INOUT, None if dtype is None else as_type(dtype), scalar)


def Vector(field: Field) -> Field:
    """A vector of edges, each its own tensor: ``Vector<Input<Vector<float>>>``."""
    if field.vector_of_edges:
        raise CodeletError("Vector(Vector(...)) is not a vertex field type")
    return replace(field, vector_of_edges=True)


def field_key(attribute: str) -> str:
    """The name a field is connected by: ``in_`` is reachable as Poplar's ``in``."""
    return attribute[:-1] if attribute.endswith("_") else attribute


class Vertex:
    """Base of every codelet. Subclasses declare fields and define ``compute``."""

    type_name: ClassVar[str] = "Vertex"
    fields: ClassVar[dict[str, Field]] = {}
    state: ClassVar[dict[str, State]] = {}
    attributes: ClassVar[dict[str, str]] = {}  # connection name -> Python attribute
    builtin: ClassVar[bool] = False
    # One numpy call for all vertices of this codelet in a compute set, when defined.
    compute_batch: ClassVar[Callable[[VertexBatch], None] | None] = None
    # For the compile model (see ipu_engine/poplar/cost_model): a supervisor vertex drives all six
    # worker contexts itself; code is paid once per tile that runs the codelet.
    supervisor: ClassVar[bool] = False
    code_bytes: ClassVar[int] = 256
    stack_bytes: ClassVar[int] = 64

    @classmethod
    def estimate_cycles(cls, sizes: VertexSizes) -> np.ndarray:
        """Cycles of each vertex (worker cycles; tile cycles for a supervisor vertex).

        The default charges a fixed entry cost plus one cycle per element of every edge;
        codelets override it, and ``graph.set_perf_estimate`` wins over both.
        """
        from ipu_engine.poplar.cost_model.constants import VERTEX_OVERHEAD_CYCLES

        total = np.zeros(sizes.count, dtype=np.float64)
        for name in cls.fields:
            total += sizes.elements(name)
        return VERTEX_OVERHEAD_CYCLES + total

    @classmethod
    def flops(cls, sizes: VertexSizes) -> np.ndarray:
        """Floating-point operations of each vertex per execution (0 when unknown)."""
        return np.zeros(sizes.count, dtype=np.int64)

    @classmethod
    def state_bytes(cls) -> int:
        """Bytes of one vertex's instance state: a pointer and a count per vector edge,
        a pointer per scalar edge or vector of edges, and its state fields."""
        edges = sum(4 if f.scalar or f.vector_of_edges else 8 for f in cls.fields.values())
        state = sum(s.type.size for s in cls.state.values())
        return -(-(edges + state) // 4) * 4

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "type_name" not in cls.__dict__:
            cls.type_name = cls.__name__
        fields: dict[str, Field] = {}
        state: dict[str, State] = {}
        attributes: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            for attr, value in vars(klass).items():
                if isinstance(value, Field):
                    fields[field_key(attr)] = replace(value, name=field_key(attr))
                    attributes[field_key(attr)] = attr
                elif isinstance(value, State):
                    state[field_key(attr)] = replace(value, name=field_key(attr))
                    attributes[field_key(attr)] = attr
        cls.fields, cls.state, cls.attributes = fields, state, attributes

    def compute(self) -> bool | None:
        raise CodeletError(
            f"codelet {type(self).type_name} defines no compute method; add "
            "`def compute(self): ...`"
        )

    @classmethod
    def describe(cls) -> str:
        parts = [f"{f.describe()} {name}" for name, f in cls.fields.items()]
        parts += [f"{s.type.name} {name}" for name, s in cls.state.items()]
        return f"{cls.type_name}({'; '.join(parts)})"


class VertexSizes:
    """Per-vertex sizes of each field of a group of vertices, for cycle estimates."""

    def __init__(
        self,
        count: int,
        elements: dict[str, np.ndarray],
        edges: dict[str, np.ndarray],
        state: dict[str, np.ndarray],
    ) -> None:
        self.count = count
        self._elements = elements
        self._edges = edges
        self._state = state

    def elements(self, name: str) -> np.ndarray:
        """Elements of field ``name`` per vertex (all edges of a vector of edges)."""
        return self._elements[name]

    def edges(self, name: str) -> np.ndarray:
        """Edges per vertex of a vector-of-edges field (1 for other fields)."""
        return self._edges[name]

    def state(self, name: str) -> np.ndarray:
        return self._state[name]


REPEAT = "repeat"  # the key ``VertexBatch.repeat`` keeps its run under, for the engine


class VertexBatch:
    """Every vertex of one codelet in one compute set, as concatenated numpy columns.

    ``batch[name]`` is the concatenation of that field's data over all vertices (for
    outputs a writable array whose contents the engine stores back);
    ``batch.offsets(name)`` gives where each vertex's part starts (length count + 1).
    """

    def __init__(
        self,
        count: int,
        tiles: np.ndarray,
        data: dict[str, np.ndarray],
        offsets: dict[str, np.ndarray],
        edge_offsets: dict[str, np.ndarray],
        state: dict[str, np.ndarray],
        views: Callable[[str], list[np.ndarray] | None] | None = None,
        per_vertex: Any = None,
        cache: dict[Any, Any] | None = None,
    ) -> None:
        self._cache = {} if cache is None else cache
        self.count = count
        self.tiles = tiles
        self._views = views
        self._per_vertex = per_vertex
        self._data = data
        self._offsets = offsets
        self._edge_offsets = edge_offsets
        self._state = state

    def __getitem__(self, name: str) -> np.ndarray:
        return self._data[name]

    def output(self, name: str) -> np.ndarray:
        """Output ``name``'s array for a codelet that writes every element of it: as
        ``batch[name]`` but without reading the values it will overwrite."""
        return self._data.output(name) if hasattr(self._data, "output") else self._data[name]

    def vertex_grids(self, name: str) -> list[tuple[int, int, int, int]] | None:
        """Each vertex's elements of field ``name`` as (first address, rows, row length,
        row stride) -- equally long, equally spaced runs -- when every vertex's edge is
        such a block of memory; None otherwise (then use ``batch[name]``)."""
        return self._views(name) if self._views is not None else None

    def grid_view(self, name: str, grid: tuple[int, int, int, int]) -> np.ndarray:
        """A [rows, row length] view of engine memory for ``grid`` in field ``name``'s
        pool; writing into it writes memory."""
        return self._per_vertex.grid_view(name, grid)

    def vertex_views(self, name: str) -> list[np.ndarray] | None:
        """Each vertex's elements of field ``name`` as a 2-D view of engine memory, when
        ``vertex_grids`` has them; writing into an output's view writes memory."""
        grids = self.vertex_grids(name)
        return None if grids is None else [self.grid_view(name, g) for g in grids]

    def vertex_values(self, name: str, i: int) -> np.ndarray:
        """Vertex ``i``'s elements of field ``name``, read from memory (for codelets that
        go vertex by vertex rather than gather every vertex's data at once)."""
        return self._per_vertex.read(name, i)

    def set_vertex_values(self, name: str, i: int, values: np.ndarray) -> None:
        """Write vertex ``i``'s elements of output field ``name`` to memory."""
        self._per_vertex.write(name, i, values)

    def edge_runs(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Field ``name``'s edges as runs of memory -- (start, length, where each vertex's
        runs start: count + 1 values) -- when the engine keeps them so and each vertex has
        one edge; None otherwise (then use ``batch[name]``). With ``pool`` a codelet reads
        or writes just the runs it needs, without a gathered copy of every vertex's data."""
        return self._per_vertex.edge_runs(name)

    def addresses(self, name: str) -> np.ndarray:
        """Every element's address of field ``name`` in ``pool(name)``, in ``batch[name]``
        order (made on demand from runs: for work done once per compiled compute set)."""
        return self._per_vertex.addresses(name)

    def pool(self, name: str) -> np.ndarray:
        """The engine memory of field ``name``'s element type (writing into it writes
        memory; write an output's elements only after reading the inputs)."""
        return self._per_vertex.pool(name)

    def repeat(self, run: Callable[[], None]) -> None:
        """Say that this run's work was ``run()`` on memory as it is: while memory is the
        same arrays, the next runs of this codelet's vertices call ``run`` alone, without a
        batch made or this codelet's ``compute_batch`` called (a plan kept in ``cache``,
        made of views of memory, that reads memory's values when it runs)."""
        self._cache[REPEAT] = run

    @property
    def cache(self) -> dict[Any, Any]:
        """A dict kept with the compiled compute set from one run to the next, for what a
        codelet derives from the graph alone (groups of alike vertices, say)."""
        return self._cache

    def offsets(self, name: str) -> np.ndarray:
        """Start of each vertex's data in ``batch[name]``, plus the end (count + 1 values).

        For a vector-of-edges field these are the starts of each *edge*; see
        ``edge_offsets`` for where each vertex's edges start.
        """
        return self._offsets[name]

    def edge_offsets(self, name: str) -> np.ndarray:
        return self._edge_offsets[name]

    def sizes(self, name: str) -> np.ndarray:
        return np.diff(self._offsets[name])

    def state(self, name: str) -> np.ndarray:
        return self._state[name]
