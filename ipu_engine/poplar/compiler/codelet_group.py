"""Every vertex of one codelet in one compute set (``CodeletGroup``): its fields' edges
merged over the compute set's vertex blocks, its state and tiles -- what a compute set's
runners (``vertex_plans``, ``vertex_runner``) and the cost model read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ipu_engine.common.types import Type
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.vertex import Field, Vertex, VertexSizes
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn, VertexBlock


@dataclass(eq=False)
class MergedField:
    """One field over every vertex of a codelet group, with its element type."""

    spec: Field
    type: Type
    column: EdgeColumn


class CodeletGroup:
    """Every vertex of one codelet in one compute set."""

    def __init__(self, graph: Graph, cs: ComputeSet, blocks: Sequence[VertexBlock]) -> None:
        self.codelet: type[Vertex] = blocks[0].codelet
        self.compute_set = cs
        self.graph = graph
        self.first_ids = np.concatenate([np.arange(b.count) + b.first_id for b in blocks])
        self.tiles = np.concatenate([b.tiles for b in blocks])
        self.count = int(self.tiles.size)
        self.fields = {
            name: _merge(graph, blocks, name, spec) for name, spec in self.codelet.fields.items()
        }
        self.state = {
            name: np.concatenate([b.state[name] for b in blocks]) for name in self.codelet.state
        }
        perf = [
            b.perf_estimate if b.perf_estimate is not None else np.full(b.count, -1, np.int64)
            for b in blocks
        ]
        self.perf_estimate = np.concatenate(perf)

    def edge_vertex(self, name: str) -> np.ndarray:
        """Index (within the group) of the vertex owning each edge of field ``name``."""
        col = self.fields[name].column
        if col.edges_of_vertex is None:
            return np.arange(self.count)
        return np.repeat(np.arange(self.count), np.diff(col.edges_of_vertex))

    def sizes(self) -> VertexSizes:
        elements, edges = {}, {}
        for name, f in self.fields.items():
            col = f.column
            if col.edges_of_vertex is None:
                elements[name] = np.diff(col.offsets)
                edges[name] = np.ones(self.count, dtype=np.int64)
            else:
                bounds = col.offsets[col.edges_of_vertex]
                elements[name] = np.diff(bounds)
                edges[name] = np.diff(col.edges_of_vertex)
        return VertexSizes(self.count, elements, edges, self.state)


def _merge(graph: Graph, blocks: Sequence[VertexBlock], name: str, spec: Field) -> MergedField:
    columns = [b.edges[name] for b in blocks]
    elem_type = _edge_type(graph, blocks[0], name, spec)
    if len(columns) == 1:
        return MergedField(spec, elem_type, columns[0])
    sizes = [c.size for c in columns]
    starts = np.cumsum([0] + sizes[:-1])
    total = int(sum(sizes))
    offsets = np.concatenate(
        [c.offsets[:-1] + s for c, s in zip(columns, starts, strict=True)] + [[total]]
    ).astype(np.int64)
    edges_of_vertex = None
    if spec.vector_of_edges:
        edge_starts = np.cumsum([0] + [len(c.offsets) - 1 for c in columns[:-1]])
        parts = [c.edges_of_vertex[:-1] + s for c, s in zip(columns, edge_starts, strict=True)]
        edges_of_vertex = np.concatenate([*parts, [len(offsets) - 1]]).astype(np.int64)
    if all(c.runs is not None for c in columns):
        run_starts = np.cumsum([0] + [len(c.runs) for c in columns[:-1]])
        run_offsets = np.concatenate(
            [c.run_offsets[:-1] + s for c, s in zip(columns, run_starts, strict=True)]
            + [[sum(len(c.runs) for c in columns)]]
        ).astype(np.int64)
        runs = Runs(
            np.concatenate([c.runs.start for c in columns]),
            np.concatenate([c.runs.length for c in columns]),
        )
        column = EdgeColumn(None, offsets, edges_of_vertex, runs=runs, run_offsets=run_offsets)
        return MergedField(spec, elem_type, column)
    addr = np.concatenate([c.addr for c in columns])
    return MergedField(spec, elem_type, EdgeColumn(addr, offsets, edges_of_vertex))


def _edge_type(graph: Graph, block: VertexBlock, name: str, spec: Field) -> Type:
    """Templated fields take the type of what they are connected to."""
    return spec.type or block.edge_types[name]
