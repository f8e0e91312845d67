"""Compute sets and their vertices, stored as columns so a graph can hold millions.

``add_vertex`` makes a block of one vertex; library ops add a whole block of vertices
of one codelet at once. A vertex handle (``VertexRef``) is a block and a position.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar.runs import Runs, block_runs, narrow, narrowed, worth_runs
from ipu_engine.poplar.vertex import Vertex

if TYPE_CHECKING:
    from ipu_engine.poplar.graph import Graph
    from ipu_engine.poplar.tensor import Tensor


class EdgeColumn:
    """The tensors connected to one field for every vertex of a block.

    ``offsets`` gives the start of each edge among the elements (num_edges + 1). The
    elements are kept either as ``runs`` of contiguous pool addresses (``run_offsets``
    says where each edge's runs start; runs never cross edges) or, where a view is
    irregular, as per-element addresses. ``addr`` gives per-element addresses either way
    (made on demand from runs: use them and let them go). For a vector-of-edges field
    ``edges_of_vertex`` says where each vertex's edges start (count + 1); otherwise edge
    i is vertex i's. Addresses and runs are kept in int32 when they fit (a graph's pools
    hold fewer than 2**31 elements of a type unless it is huge): edges are most of what a
    compiled graph holds, ResNet-50's 600 MB in int64.
    """

    __slots__ = ("_addr", "edges_of_vertex", "offsets", "run_offsets", "runs")

    def __init__(
        self,
        addr: np.ndarray | None,
        offsets: np.ndarray,
        edges_of_vertex: np.ndarray | None = None,
        *,
        runs: Runs | None = None,
        run_offsets: np.ndarray | None = None,
    ) -> None:
        self._addr = None if addr is None else narrow(addr)
        self.offsets = offsets
        self.edges_of_vertex = edges_of_vertex
        self.runs = None if runs is None else narrowed(runs)
        self.run_offsets = run_offsets

    @classmethod
    def from_parts(cls, parts: Sequence[np.ndarray | Runs]) -> EdgeColumn:
        """One edge per address view (or runs) in ``parts``: as runs when the views are
        blocks of contiguous rows, else as concatenated addresses."""
        runs = [p if isinstance(p, Runs) else block_runs(p) for p in parts]
        sizes = np.array([r.size for r in runs], dtype=np.int64)
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        counts = np.array([len(r) for r in runs], dtype=np.int64)
        if not worth_runs(int(counts.sum()), int(offsets[-1])):
            addr = np.concatenate([r.addresses() for r in runs])
            return cls(addr, offsets)
        run_offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(counts, out=run_offsets[1:])
        joined = Runs(
            np.concatenate([r.start for r in runs]), np.concatenate([r.length for r in runs])
        )
        return cls(None, offsets, runs=joined, run_offsets=run_offsets)

    @classmethod
    def from_blocks(
        cls,
        matrix: Tensor,
        r0: np.ndarray,
        r1: np.ndarray,
        c0: np.ndarray,
        c1: np.ndarray,
    ) -> EdgeColumn:
        """One edge per block ``matrix[r0:r1, c0:c1]`` (arrays of bounds), in bulk: one
        run per block row when the matrix's rows are contiguous (a whole variable, or a
        slice of one), else the blocks' addresses."""
        cols = matrix.shape[1]
        row_first = matrix.row_starts()  # a strided view with contiguous rows
        if row_first is None:
            addr = matrix.addr
            contiguous = cols <= 1 or bool((np.diff(addr, axis=1) == 1).all())
            row_first = addr[:, 0].astype(np.int64) if contiguous and cols else None
        r0, r1, c0, c1 = (np.asarray(x, dtype=np.int64) for x in (r0, r1, c0, c1))
        height, width = r1 - r0, c1 - c0
        offsets = np.zeros(r0.size + 1, dtype=np.int64)
        np.cumsum(height * width, out=offsets[1:])
        if row_first is None or not worth_runs(int(height.sum()), int(offsets[-1])):
            bounds = zip(r0.tolist(), r1.tolist(), c0.tolist(), c1.tolist(), strict=True)
            return cls.from_parts([matrix.addr[a:b, c:e] for a, b, c, e in bounds])
        run_offsets = np.zeros(r0.size + 1, dtype=np.int64)
        np.cumsum(height, out=run_offsets[1:])
        edge = np.repeat(np.arange(r0.size), height)
        row = r0[edge] + np.arange(int(run_offsets[-1])) - run_offsets[:-1][edge]
        runs = Runs(row_first[row] + c0[edge], width[edge])
        return cls(None, offsets, runs=runs, run_offsets=run_offsets)

    def compressed(self) -> EdgeColumn:
        """This column as runs when runs are worth keeping instead of its addresses."""
        if self.runs is not None or self.edges_of_vertex is not None:
            return self
        addr = self.addr
        if addr.size == 0:
            runs, _ = self.edge_runs()
            run_offsets = np.zeros(len(self.offsets), dtype=np.int64)
            return EdgeColumn(None, self.offsets, runs=runs, run_offsets=run_offsets)
        first = self._run_firsts(addr)
        if not worth_runs(first.size, self.size):  # known before the runs are made
            return self
        length = np.diff(np.concatenate((first, [addr.size])))
        runs = Runs(addr[first].astype(np.int64), length.astype(np.int64))
        # an edge's runs start at the first run starting at or after its first element
        run_offsets = np.searchsorted(first, self.offsets, side="left").astype(np.int64)
        return EdgeColumn(None, self.offsets, runs=runs, run_offsets=run_offsets)

    def _run_firsts(self, addr: np.ndarray) -> np.ndarray:
        """Where each run of contiguous addresses starts among the elements (runs never
        cross an edge)."""
        breaks = np.diff(addr) != 1
        inner = self.offsets[1:-1]
        breaks[inner[(inner > 0) & (inner < addr.size)] - 1] = True
        return np.concatenate(([0], np.flatnonzero(breaks) + 1))

    @property
    def addr(self) -> np.ndarray:
        if self._addr is not None:
            return self._addr
        assert self.runs is not None
        return self.runs.addresses()

    @property
    def size(self) -> int:
        return int(self.offsets[-1])

    def edge_runs(self) -> tuple[Runs, np.ndarray]:
        """All elements as runs that never cross an edge, and the edge of each run; made
        from the addresses when the column keeps those."""
        if self.runs is not None:
            edge = np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.run_offsets))
            return self.runs, edge
        addr = self.addr
        if addr.size == 0:
            z = np.zeros(0, dtype=np.int64)
            return Runs(z, z), z
        first = self._run_firsts(addr)
        length = np.diff(np.concatenate((first, [addr.size])))
        edge = np.searchsorted(self.offsets, first, side="right") - 1
        return Runs(addr[first].astype(np.int64), length.astype(np.int64)), edge


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
    # The debug context of the op that added these vertices when it is not the compute
    # set's own (a compute set shared by several ops: a pipeline's time step); -1: the
    # compute set's. Reports attribute the vertices' cycles, FLOPs and code to it.
    debug_id: int = -1

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
