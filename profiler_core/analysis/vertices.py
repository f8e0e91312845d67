"""Vertices of a compute set by vertex type (codelet): how many, and on how many tiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from profiler_core.analysis.checks import checked_graph, fail
from profiler_core.analysis.memory import memory_table
from profiler_core.model.kinds import MemoryCategory
from profiler_core.model.unique import sorted_unique


@dataclass(frozen=True)
class ComputeSetVertices:
    """One row per vertex type the compute set runs, most vertices first."""

    compute_set: int
    vertex_type: np.ndarray  # int64 index into graph.vt_name
    names: list[str]
    count: np.ndarray  # int64 vertices of that type
    tiles: np.ndarray  # int64 tiles running at least one of them

    def __len__(self) -> int:
        return len(self.vertex_type)


def compute_set_vertices(report: Any, compute_set: int) -> ComputeSetVertices:
    graph = checked_graph(report)
    num_cs, num_types = len(graph.cs_name), len(graph.vt_name)
    if not 0 <= compute_set < num_cs:
        raise IndexError(f"compute set {compute_set}: there are {num_cs}")
    rows = graph.vc_cs == compute_set
    types = graph.vc_type[rows].astype(np.int64)
    if types.size and (types.min() < 0 or types.max() >= num_types):
        fail(report, "graph", f"'vc_type' refers to vertex types outside 0-{num_types - 1}")
    count = np.zeros(num_types, dtype=np.int64)
    np.add.at(count, types, graph.vc_count[rows].astype(np.int64))
    pairs = sorted_unique(types * report.target.num_tiles + graph.vc_tile[rows])
    tiles = np.bincount(pairs // report.target.num_tiles, minlength=num_types)
    present = np.flatnonzero(np.bincount(types, minlength=num_types))
    present = present[np.lexsort((present, -count[present]))]
    return ComputeSetVertices(
        compute_set=compute_set,
        vertex_type=present,
        names=graph.strings.take(graph.vt_name[present]),
        count=count[present],
        tiles=tiles[present].astype(np.int64),
    )


@dataclass(frozen=True)
class TileVertexTypes:
    """The vertex types on each tile with their vertex counts over every compute set, as one
    array cut per tile: tile t's are ``types[offsets[t]:offsets[t+1]]`` (ascending)."""

    offsets: np.ndarray  # int64 (tiles + 1,)
    types: np.ndarray  # int64 vertex type
    counts: np.ndarray  # int64 vertices of that type on the tile

    def of(self, tile: int) -> tuple[np.ndarray, np.ndarray]:
        part = slice(int(self.offsets[tile]), int(self.offsets[tile + 1]))
        return self.types[part], self.counts[part]


def vertex_types_by_tile(report: Any) -> TileVertexTypes:
    """Vertex counts per (tile, vertex type) summed over compute sets: the vertex types whose
    code each tile holds (a type's code is paid once per tile that runs it)."""
    graph = checked_graph(report)
    num_tiles, num_types = report.target.num_tiles, max(len(graph.vt_name), 1)
    if graph.vc_type.size and (
        graph.vc_type.min() < 0 or graph.vc_type.max() >= len(graph.vt_name)
    ):
        fail(
            report, "graph", f"'vc_type' refers to vertex types outside 0-{len(graph.vt_name) - 1}"
        )
    keys = graph.vc_tile.astype(np.int64) * num_types + graph.vc_type
    pairs, inverse = np.unique(keys, return_inverse=True)
    counts = np.zeros(len(pairs), dtype=np.int64)
    np.add.at(counts, inverse.reshape(-1), graph.vc_count.astype(np.int64))
    tiles = pairs // num_types
    offsets = np.searchsorted(tiles, np.arange(num_tiles + 1)).astype(np.int64)
    return TileVertexTypes(offsets, pairs % num_types, counts)


def vertex_state_sizes(report: Any) -> np.ndarray:
    """int64 (vertex types,): the instance state of one vertex of each type, as recorded
    (``graph.vt_state_bytes`` of newer reports) or else as determined by the report: each
    tile's vertex-state bytes are sum(vertices of a type on it x that type's size), a linear
    system over the tiles. When it has one exact whole-byte solution, that is the sizes;
    otherwise (types that always share tiles in the same proportion, or state that is not
    a multiple of the counts) -1 for every type, as it cannot be told."""
    graph = checked_graph(report)
    num_types = len(graph.vt_name)
    recorded = getattr(graph, "vt_state_bytes", None)
    if recorded is not None:
        return np.asarray(recorded, dtype=np.int64)
    unknown = np.full(num_types, -1, dtype=np.int64)
    if num_types == 0:
        return unknown
    if graph.vc_type.size and (graph.vc_type.min() < 0 or graph.vc_type.max() >= num_types):
        fail(report, "graph", f"'vc_type' refers to vertex types outside 0-{num_types - 1}")
    state = memory_table(report).by_category[MemoryCategory.VERTEX_STATE]
    used = np.unique(graph.vc_type).astype(np.int64)
    column = np.full(num_types, -1, dtype=np.int64)
    column[used] = np.arange(used.size)
    counts = np.zeros((report.target.num_tiles, used.size), dtype=np.float64)
    np.add.at(counts, (graph.vc_tile, column[graph.vc_type]), graph.vc_count)
    if used.size == 0 or np.linalg.matrix_rank(counts) < used.size:
        return unknown
    solution, *_ = np.linalg.lstsq(counts, state.astype(np.float64), rcond=None)
    sizes = np.rint(solution).astype(np.int64)
    exact = counts.astype(np.int64) @ sizes
    if sizes.min() < 0 or not np.array_equal(exact, state):
        return unknown
    unknown[used] = sizes  # a type without vertices stays -1: nothing tells its size
    return unknown
