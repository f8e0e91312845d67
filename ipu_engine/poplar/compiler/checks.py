"""Checks made when an engine compiles: every tensor and vertex mapped, every field connected.

Each failure names the tensor or vertex and says how to fix it, before anything runs.
"""

from __future__ import annotations

import numpy as np

from ipu_engine.common.errors import (
    ProgramError,
    ShapeError,
    TileMappingError,
    TypeMismatchError,
    VertexConnectionError,
)
from ipu_engine.poplar.compiler.steps import Step
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.pool import UNMAPPED
from ipu_engine.poplar.streams import DataStream, StreamDirection
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn, VertexBlock, VertexRef

_MAX_NAMED = 5


def check_tile_mapping(graph: Graph) -> None:
    """Every element of every variable and constant must live on a tile."""
    problems: list[str] = []
    for elem_type, pool in graph.pools.items():
        var, start, elements, tile = pool.tiles.variable_intervals()
        unmapped = np.flatnonzero(tile == UNMAPPED)
        if unmapped.size == 0:
            continue
        var_ids = np.asarray(pool.var_id, dtype=np.int64)[var[unmapped]]
        counts = np.bincount(var[unmapped], weights=elements[unmapped]).astype(np.int64)
        seen: set[int] = set()
        for k, var_id, first in zip(
            var[unmapped].tolist(), var_ids.tolist(), start[unmapped].tolist(), strict=True
        ):
            if var_id in seen:
                continue
            seen.add(var_id)
            info = graph.variables[var_id]
            kind = "constant" if info.is_constant else "tensor"
            problems.append(
                f"{kind} {info.name!r} ({elem_type!r} {list(info.shape)}) has {counts[k]} of "
                f"{info.size} elements with no tile mapping (first: flat element {first})"
            )
    if problems:
        shown = problems[:_MAX_NAMED]
        more = (
            f"\n  ... and {len(problems) - _MAX_NAMED} more" if len(problems) > _MAX_NAMED else ""
        )
        raise TileMappingError(
            "every variable and constant needs a tile mapping before the engine compiles:\n  "
            + "\n  ".join(shown)
            + more
            + "\nmap them with graph.set_tile_mapping(tensor, tile) or "
            "poputil.map_tensor_linearly(graph, tensor)"
        )


def check_constants_unwritten(graph: Graph, steps: list[Step]) -> None:
    """No step writes a constant: constants are read-only, as in Poplar (a Copy into one,
    a stream copied into one or a vertex output connected to one would change it)."""
    if not graph.constant_values:
        return
    constant = np.zeros(len(graph.variables), dtype=bool)
    constant[list(graph.constant_values)] = True
    for step in steps:
        writes = step.facts.get("writes")
        if writes is None or len(writes) == 0:
            continue
        written = np.asarray(writes, dtype=np.int64)
        hit = written[constant[written]]
        if hit.size:
            info = graph.variables[int(hit[0])]
            raise ProgramError(
                f"{step.name!r} writes constant {info.name!r} ({info.type!r} "
                f"{list(info.shape)}); constants are read-only, as in Poplar: write into a "
                "variable (graph.add_variable) instead"
            )


def check_vertices(graph: Graph) -> None:
    """Every vertex is on a tile and every one of its fields is connected."""
    for block in graph.vertex_blocks:
        finalize_pending_edges(block)
        unmapped = np.flatnonzero(block.tiles == UNMAPPED)
        if unmapped.size:
            vertex = VertexRef(graph, block, int(unmapped[0]))
            raise TileMappingError(
                f"{vertex.describe()} has no tile; call graph.set_tile_mapping(vertex, tile)"
            )
        missing = [name for name in block.codelet.fields if name not in block.edges]
        if missing:
            vertex = VertexRef(graph, block, 0)
            raise VertexConnectionError(
                f"{vertex.describe()}: field {missing[0]!r} is not connected; connect it with "
                f"graph.connect(vertex[{missing[0]!r}], tensor) (the codelet is "
                f"{block.codelet.describe()})"
            )


def finalize_pending_edges(block: VertexBlock) -> None:
    """Turn vector-of-edges fields connected one edge at a time into an EdgeColumn."""
    for name, edges in list(block.pending.items()):
        indices = sorted(edges)
        if indices != list(range(len(indices))):
            gap = next(i for i in range(len(indices) + 1) if i not in edges)
            raise VertexConnectionError(
                f"vertex {block.first_id} ({block.codelet.type_name}): edge {gap} of vector "
                f"field {name!r} is not connected (connected: {indices})"
            )
        arrays = [edges[i] for i in indices]
        sizes = np.array([a.size for a in arrays], dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        addr = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
        block.edges[name] = EdgeColumn(addr, offsets, np.array([0, len(arrays)], dtype=np.int64))
        del block.pending[name]


def check_stream_copy(graph: Graph, stream: DataStream, tensor: Tensor, to_device: bool) -> None:
    """A stream copy between ``stream`` and ``tensor`` of ``graph``: the graph's own stream,
    in the copy's direction, of the tensor's type and element count."""
    if graph.streams.get(stream.name) is not stream:
        raise ProgramError(f"stream {stream.name!r} is not in this engine's graph")
    wanted = StreamDirection.HOST_TO_DEVICE if to_device else StreamDirection.DEVICE_TO_HOST
    if stream.direction is not wanted:
        raise ProgramError(
            f"stream {stream.name!r} is {stream.direction.value}; it cannot be copied "
            f"{'to' if to_device else 'from'} tensor {tensor.name!r}"
        )
    if stream.type != tensor.type:
        raise TypeMismatchError(
            f"stream {stream.name!r} carries {stream.type!r} but tensor {tensor.name!r} "
            f"is {tensor.type!r}"
        )
    if stream.num_elements != tensor.num_elements:
        raise ShapeError(
            f"stream {stream.name!r} moves {stream.num_elements} elements per copy but "
            f"tensor {tensor.name!r} has {tensor.num_elements}"
        )
