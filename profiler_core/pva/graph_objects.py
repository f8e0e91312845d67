"""libpva's compute sets and their vertices: ``computeSet.name``, ``computeSet.vertices[i]``
with ``.type.{name,size}``, ``.count`` (vertices of that type over every tile),
``.countByTile`` and ``.codeBytes``; ``cyclesByTile`` and ``estimatedCyclesByTile``."""

from __future__ import annotations

from typing import Any

import numpy as np

from profiler_core.pva.unmodelled import PvaObject, not_modelled


class VertexType(PvaObject):
    """A codelet: ``name``, ``codeSize`` (bytes of code on each tile that runs it) and
    ``size`` (instance state of one vertex, when the report records it)."""

    __slots__ = ("_size", "codeSize", "id", "name")

    def __init__(self, index: int, name: str, code_size: int, size: int | None) -> None:
        self.id, self.name, self.codeSize, self._size = index, name, code_size, size

    @property
    def size(self) -> int:
        if self._size is None:
            not_modelled(
                "VertexType",
                "size",
                "the report neither records the state bytes of one vertex nor determines them "
                "(its types share tiles in the same proportions)",
                "tile.memory.category.vertexInstanceState.total",
            )
        return self._size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VertexType) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("VertexType", self.id))

    def __repr__(self) -> str:
        return f"VertexType({self.name!r})"


class Vertex(PvaObject):
    """The vertices of one type in a compute set."""

    __slots__ = ("_cs", "count", "flops", "type")

    def __init__(
        self, compute_set: ComputeSet, vertex_type: VertexType, count: int, flops: int
    ) -> None:
        self._cs = compute_set
        self.type = vertex_type
        self.count = count
        self.flops = flops

    @property
    def countByTile(self) -> np.ndarray:
        """Vertices of this type on every tile (0 where there are none)."""
        columns = self._cs._columns
        graph = columns.report.graph
        rows = self._cs._rows()
        rows = rows[graph.vc_type[rows] == self.type.id]
        out = np.zeros(columns.report.target.num_tiles, dtype=np.int64)
        np.add.at(out, graph.vc_tile[rows], graph.vc_count[rows].astype(np.int64))
        return out

    @property
    def codeBytes(self) -> int:
        """Code of the type, paid once on each tile that runs it."""
        return self.type.codeSize

    def __repr__(self) -> str:
        return f"Vertex({self.type.name!r}, count={self.count})"


class ComputeSet(PvaObject):
    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, index: int) -> None:
        self._columns = columns
        self.id = index

    def _rows(self) -> np.ndarray:
        order, offsets = self._columns.compute_set_vertices
        return order[offsets[self.id] : offsets[self.id + 1]]

    @property
    def name(self) -> str:
        graph = self._columns.report.graph
        return graph.strings[int(graph.cs_name[self.id])]

    @property
    def vertices(self) -> list[Vertex]:
        """One entry per vertex type used, in vertex type order."""
        graph = self._columns.report.graph
        rows = self._rows()
        types = graph.vc_type[rows].astype(np.int64)
        used = np.unique(types)
        counts = np.zeros(len(graph.vt_name), dtype=np.int64)
        flops = np.zeros(len(graph.vt_name), dtype=np.int64)
        np.add.at(counts, types, graph.vc_count[rows])
        np.add.at(flops, types, graph.vc_flops[rows])
        return [
            Vertex(self, self._columns.vertex_type(t), int(counts[t]), int(flops[t]))
            for t in used.tolist()
        ]

    @property
    def cyclesByTile(self) -> np.ndarray:
        """Compute cycles of every tile in one execution (0 where it has no vertices)."""
        p = self._columns.programs
        order, offsets = self._columns.compute_set_tiles
        rows = order[offsets[self.id] : offsets[self.id + 1]]
        out = np.zeros(self._columns.report.target.num_tiles, dtype=np.int64)
        out[p.cst_tile[rows]] = p.cst_cycles[rows]
        return out

    @property
    def estimatedCyclesByTile(self) -> np.ndarray:
        """The model's cycles are its estimate: the same as ``cyclesByTile``."""
        return self.cyclesByTile

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ComputeSet) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("ComputeSet", self.id))

    def __repr__(self) -> str:
        return f"ComputeSet({self.name!r})"
