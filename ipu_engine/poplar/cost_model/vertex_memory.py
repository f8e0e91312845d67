"""Vertex-related memory per tile: code, instance state, descriptors and stacks, plus the
vertex counts per (compute set, vertex type, tile, debug context) that reports show."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.poplar.arrays import unique
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.cost_model.memory import per_tile
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import VertexBlock


@dataclass(frozen=True)
class VertexCounts:
    types: list[type[Vertex]]
    cs: np.ndarray  # int32
    type: np.ndarray  # int32 index into types
    tile: np.ndarray  # int32
    count: np.ndarray  # int32
    debug: np.ndarray  # int32 debug context of the op that added them (see VertexBlock)


@dataclass(frozen=True)
class VertexMemory:
    code: np.ndarray
    state: np.ndarray
    descriptors: np.ndarray
    stack: np.ndarray
    counts: VertexCounts


def block_owner(graph: Graph, block: VertexBlock) -> int:
    """The debug context a block's vertices are reported under: its own, else its compute
    set's."""
    return block.debug_id if block.debug_id >= 0 else graph.compute_sets[block.compute_set].debug_id


def vertex_memory(graph: Graph) -> VertexMemory:
    num_tiles = graph.target.num_tiles
    types: list[type[Vertex]] = []
    # codelets are one vertex type per name (variants the engine runs differently share it)
    type_index: dict[str, int] = {}
    cs_parts, type_parts, tile_parts, edge_parts, debug_parts = [], [], [], [], []
    for block in graph.vertex_blocks:
        t = type_index.setdefault(block.codelet.type_name, len(types))
        if t == len(types):
            types.append(block.codelet)
        tiles = block.tiles.astype(np.int64)
        cs_parts.append(np.full(tiles.size, block.compute_set, dtype=np.int64))
        type_parts.append(np.full(tiles.size, t, dtype=np.int64))
        tile_parts.append(tiles)
        debug_parts.append(np.full(tiles.size, block_owner(graph, block), dtype=np.int64))
        edges = np.zeros(tiles.size, dtype=np.int64)
        for col in block.edges.values():
            if col.edges_of_vertex is not None:
                edges += np.diff(col.edges_of_vertex)
        edge_parts.append(edges)
    if not tile_parts:
        zero = np.zeros(num_tiles, dtype=np.int64)
        stack = np.full(num_tiles, C.SUPERVISOR_STACK_BYTES, dtype=np.int64)
        empty = np.zeros(0, dtype=np.int32)
        counts = VertexCounts([], empty, empty, empty, empty, empty)
        return VertexMemory(zero, zero, zero, stack, counts)
    cs, vtype, tile = (np.concatenate(p) for p in (cs_parts, type_parts, tile_parts))
    vector_edges = np.concatenate(edge_parts)
    state_size = np.array([t.state_bytes() for t in types], dtype=np.int64)
    code_size = np.array([t.code_bytes for t in types], dtype=np.int64)
    stack_size = np.array([t.stack_bytes for t in types], dtype=np.int64)

    state = per_tile(tile, state_size[vtype], num_tiles)
    # the vertex list of each compute set on each tile, its entries, and edge lists
    cs_tile = unique(cs * num_tiles + tile)
    descriptors = (
        per_tile(
            tile, C.VERTEX_DESCRIPTOR_BYTES + vector_edges * C.EDGE_DESCRIPTOR_BYTES, num_tiles
        )
        + np.bincount(cs_tile % num_tiles, minlength=num_tiles) * C.COMPUTE_SET_LIST_BYTES
    )
    type_tile = unique(vtype * num_tiles + tile)
    code = per_tile(type_tile % num_tiles, code_size[type_tile // num_tiles], num_tiles)
    worker_stack = np.zeros(num_tiles, dtype=np.int64)
    np.maximum.at(worker_stack, type_tile % num_tiles, stack_size[type_tile // num_tiles])
    stack = C.SUPERVISOR_STACK_BYTES + worker_stack * C.WORKER_CONTEXTS

    counted = count_vertices(types, cs, vtype, tile, np.concatenate(debug_parts), num_tiles)
    return VertexMemory(code, state, descriptors, stack, counted)


def count_vertices(
    types: list[type[Vertex]],
    cs: np.ndarray,
    vtype: np.ndarray,
    tile: np.ndarray,
    debug: np.ndarray,
    num_tiles: int,
) -> VertexCounts:
    """One row per distinct (compute set, vertex type, tile, debug context), in that order;
    a compute set with one debug context has one row per (compute set, type, tile). Sorted
    column by column: packed into one key, compute sets x contexts could overflow int64."""
    place = (cs * len(types) + vtype) * num_tiles + tile
    order = np.lexsort((debug, place))
    place, debug = place[order], debug[order]
    starts = np.flatnonzero(np.r_[True, (place[1:] != place[:-1]) | (debug[1:] != debug[:-1])])
    place, counts = place[starts], np.diff(np.r_[starts, place.size])
    return VertexCounts(
        types,
        (place // num_tiles // len(types)).astype(np.int32),
        (place // num_tiles % len(types)).astype(np.int32),
        (place % num_tiles).astype(np.int32),
        counts.astype(np.int32),
        debug[starts].astype(np.int32),
    )
