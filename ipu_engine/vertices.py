"""Compute sets and their vertices, stored as columns so a graph can hold millions.

``add_vertex`` makes a block of one vertex; library ops add a whole block of vertices
of one codelet at once. A vertex handle (``VertexRef``) is a block and a position.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ipu_engine.types import Type
from ipu_engine.vertex import Vertex

if TYPE_CHECKING:
    from ipu_engine.graph import Graph


@dataclass
class EdgeColumn:
    """The tensors connected to one field for every vertex of a block.

    ``addr`` holds the element addresses of every edge, concatenated; ``offsets`` the
    start of each edge (num_edges + 1). For a vector-of-edges field ``edges_of_vertex``
    says where each vertex's edges start (count + 1); otherwise edge i is vertex i's.
    """

    addr: np.ndarray
    offsets: np.ndarray
    edges_of_vertex: np.ndarray | None = None


@dataclass
class VertexBlock:
    """Vertices of one codelet in one compute set, with consecutive vertex ids."""

    codelet: type[Vertex]
    compute_set: int
    first_id: int
    tiles: np.ndarray  # int32, -1 while unmapped
    edges: dict[str, EdgeColumn] = field(default_factory=dict)
    state: dict[str, np.ndarray] = field(default_factory=dict)
    perf_estimate: np.ndarray | None = None  # int64 cycles, -1 where not set
    # Edges of vector-of-edges fields connected one element at a time (v["in"][i]),
    # turned into an EdgeColumn when the graph is compiled.
    pending: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)
    # Element type each field is connected to (what a templated field T became).
    edge_types: dict[str, Type] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.tiles)


@dataclass(eq=False)
class ComputeSet:
    """A set of vertices that run in parallel in one BSP compute phase."""

    id: int
    name: str
    debug_id: int
    blocks: list[VertexBlock] = field(default_factory=list)

    @property
    def num_vertices(self) -> int:
        return sum(b.count for b in self.blocks)

    def __repr__(self) -> str:
        return f"ComputeSet({self.name!r}, {self.num_vertices} vertices)"


@dataclass(frozen=True, eq=False)
class VertexRef:
    """A handle on one vertex: ``v["in"]`` names one of its fields."""

    graph: Graph
    block: VertexBlock
    index: int

    @property
    def id(self) -> int:
        return self.block.first_id + self.index

    @property
    def codelet(self) -> type[Vertex]:
        return self.block.codelet

    def __getitem__(self, name: str) -> FieldRef:
        return FieldRef(self, name)

    def describe(self) -> str:
        cs = self.graph.compute_sets[self.block.compute_set].name
        return f"vertex {self.id} ({self.codelet.type_name}) in compute set {cs!r}"

    def __repr__(self) -> str:
        return f"VertexRef({self.describe()})"


@dataclass(frozen=True, eq=False)
class FieldRef:
    """One field of one vertex, as ``graph.connect(v["in"], tensor)`` takes it."""

    vertex: VertexRef
    name: str

    def __getitem__(self, index: int) -> FieldRef:
        return FieldRef(self.vertex, f"{self.name}[{index}]")
