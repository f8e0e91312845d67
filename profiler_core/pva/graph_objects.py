"""libpva's compute sets and their vertices: ``computeSet.name``, ``computeSet.vertices[i]``
with ``.type.name`` and ``.count`` (vertices of that type over every tile)."""

from __future__ import annotations

from typing import Any

import numpy as np


class VertexType:
    __slots__ = ("codeSize", "name")

    def __init__(self, name: str, code_size: int) -> None:
        self.name = name
        self.codeSize = code_size

    def __repr__(self) -> str:
        return f"VertexType({self.name!r})"


class Vertex:
    """The vertices of one type in a compute set."""

    __slots__ = ("count", "flops", "type")

    def __init__(self, vertex_type: VertexType, count: int, flops: int) -> None:
        self.type = vertex_type
        self.count = count
        self.flops = flops

    def __repr__(self) -> str:
        return f"Vertex({self.type.name!r}, count={self.count})"


class ComputeSet:
    __slots__ = ("_columns", "id")

    def __init__(self, columns: Any, index: int) -> None:
        self._columns = columns
        self.id = index

    @property
    def name(self) -> str:
        graph = self._columns.report.graph
        return graph.strings[int(graph.cs_name[self.id])]

    @property
    def vertices(self) -> list[Vertex]:
        """One entry per vertex type used, in vertex type order."""
        graph = self._columns.report.graph
        order, offsets = self._columns.compute_set_vertices
        rows = order[offsets[self.id] : offsets[self.id + 1]]
        types = graph.vc_type[rows].astype(np.int64)
        used = np.unique(types)
        counts = np.zeros(len(graph.vt_name), dtype=np.int64)
        flops = np.zeros(len(graph.vt_name), dtype=np.int64)
        np.add.at(counts, types, graph.vc_count[rows])
        np.add.at(flops, types, graph.vc_flops[rows])
        return [
            Vertex(
                VertexType(graph.strings[int(graph.vt_name[t])], int(graph.vt_code_bytes[t])),
                int(counts[t]),
                int(flops[t]),
            )
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

    def __repr__(self) -> str:
        return f"ComputeSet({self.name!r})"
