"""``popops.scatter_nd`` and ``popops.scatter_elements``: ONNX ScatterND / ScatterElements as
PopLibs' ``multiUpdate`` (``multiUpdateAdd``, ...): the data with the rows the indices name,
known only when the program runs, replaced by (or combined with) the updates.

The data is seen as [rows, columns] -- ScatterND's indexed dimensions as rows, the rest as
columns; ScatterElements's other dimensions times its axis as rows of one column each, so
that each update's row block is known from its position alone -- and the output is cut
into blocks of rows and columns, one ``MultiUpdate`` vertex per block, each copying its
block of the data and applying the index tuples it is given. ScatterND gives every row
block all the tuples (where they land is known at run time); ScatterElements gives each
block the updates of its positions only. The output is a new tensor laid out by the plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets.scatter import REDUCTIONS, multi_update
from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.common.types import UNSIGNED_INT
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Copy, Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context
from ipu_engine.poputil.splits import split_counts

API = {
    "none": "popops::multiUpdate",
    "add": "popops::multiUpdateAdd",
    "mul": "popops::multiUpdateMul",
    "max": "popops::multiUpdateMax",
    "min": "popops::multiUpdateMin",
}


@dataclass(frozen=True)
class ScatterPlan:
    rows: int  # rows per block
    columns: int  # columns per block


def plan_scatter(
    rows: int,
    columns: int,
    tuples: int,
    depth: int,
    elem_size: int,
    num_tiles: int,
    bytes_per_tile: int,
    tuples_split: bool = False,
) -> ScatterPlan:
    """Fewest estimated cycles (checking the tuples a vertex gets, copying its block,
    receiving its block, tuples and updates) with each vertex's operands in 60% of a tile.
    With ``tuples_split`` a row block gets only its own rows' tuples."""
    ss, su = (
        g.reshape(-1)
        for g in np.meshgrid(split_counts(rows, num_tiles), split_counts(columns, num_tiles))
    )
    ok = ss * su <= num_tiles
    ss, su = ss[ok], su[ok]
    bs, bc = -(-rows // ss), -(-columns // su)
    seen = -(-tuples // ss) if tuples_split else np.full(ss.shape, tuples)
    vertex_bytes = (2 * bs * bc + seen * bc) * elem_size + seen * depth * 4
    cycles = (
        C.SUPERVISOR_OVERHEAD_CYCLES
        + seen * (4 + 2 * depth)
        + bs * bc * 0.5
        + ((bs * bc + seen * bc) * elem_size + seen * depth * 4) / C.EXCHANGE_BYTES_PER_CYCLE
    )
    fits = vertex_bytes <= 0.6 * bytes_per_tile
    pool = fits if fits.any() else np.ones(fits.shape, dtype=bool)
    choice = int(np.flatnonzero(pool)[np.argmin((cycles if fits.any() else vertex_bytes)[pool])])
    return ScatterPlan(int(bs[choice]), int(bc[choice]))


def _check(graph: Graph, api: str, data: Tensor, indices: Tensor, updates: Tensor) -> None:
    check_tensors(graph, api, data, indices, updates)
    if indices.type.numpy_dtype.kind not in "iu":
        raise TypeMismatchError(
            f"{api}: indices {indices.name!r} must be an integer type, not {indices.type!r}"
        )
    if updates.type != data.type:
        raise TypeMismatchError(
            f"{api}: updates {updates.name!r} are {updates.type!r} but data {data.name!r} is "
            f"{data.type!r}"
        )


def _reduction(reduction: str) -> str:
    if not isinstance(reduction, str) or reduction not in REDUCTIONS:
        raise ShapeError(
            f"popops::multiUpdate: reduction must be one of {sorted(REDUCTIONS)}, got {reduction!r}"
        )
    return reduction


def scatter_nd(
    graph: Graph,
    data: Tensor,
    indices: Tensor,
    updates: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    reduction: str = "none",
) -> Tensor:
    """ONNX ScatterND: a copy of ``data`` whose slices ``data[tuple(indices[i])]`` are
    ``updates[i]`` (``reduction`` "add", "mul", "max", "min": combined with them, in index
    order). ``indices`` is [..., k]; ``updates`` is indices.shape[:-1] + data.shape[k:]."""
    api = API[_reduction(reduction)]
    _check(graph, api, data, indices, updates)
    if indices.rank < 1 or indices.shape[-1] > data.rank:
        raise ShapeError(
            f"{api}: indices {indices.name!r} {indices.shape} must be [..., k] with k at most "
            f"the rank of {data.name!r} {data.shape}"
        )
    depth = indices.shape[-1]
    expected = (*indices.shape[:-1], *data.shape[depth:])
    if updates.shape != expected:
        raise ShapeError(
            f"{api}: updates {updates.name!r} {updates.shape} must be {expected} for indices "
            f"{indices.shape} into {data.shape}"
        )
    rows = int(np.prod(data.shape[:depth], dtype=np.int64))
    columns = int(np.prod(data.shape[depth:], dtype=np.int64))
    count = int(np.prod(indices.shape[:-1], dtype=np.int64))
    plan = plan_scatter(
        rows,
        columns,
        count,
        depth,
        data.type.size,
        len(graph.tile_range),
        graph.target.bytes_per_tile,
    )
    args = {
        "data": list(data.shape),
        "indices": list(indices.shape),
        "reduction": reduction,
        "plan": [-(-rows // plan.rows), -(-columns // plan.columns)],
    }
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(data.type, [rows, columns], debug_prefix or "scatter")
        if rows and columns:
            r0, c0 = (
                g.reshape(-1)
                for g in np.meshgrid(
                    np.arange(0, rows, plan.rows),
                    np.arange(0, columns, plan.columns),
                    indexing="ij",
                )
            )
            blocks = (
                r0,
                np.minimum(r0 + plan.rows, rows),
                c0,
                np.minimum(c0 + plan.columns, columns),
            )
            table = indices.reshape([count, depth])
            every = np.tile(np.arange(count), r0.size)
            starts = np.arange(r0.size + 1, dtype=np.int64) * count
            _build(
                graph,
                (data.reshape([rows, columns]), out),
                data.shape[:depth],
                table,
                updates.reshape([count, columns]),
                blocks,
                (every, starts),
                reduction,
                prog,
                debug_id,
            )
        else:
            graph.set_tile_mapping(out, graph.tile_range.start)
        return out.reshape(list(data.shape))


def scatter_elements(
    graph: Graph,
    data: Tensor,
    indices: Tensor,
    updates: Tensor,
    axis: int,
    prog: SequenceProgram,
    debug_prefix: str = "",
    reduction: str = "none",
) -> Tensor:
    """ONNX ScatterElements: a copy of ``data`` where each element of ``updates`` replaces
    (or with ``reduction``, combines with) the element at its own position, except along
    ``axis``, where ``indices`` (of updates' shape) names the place."""
    api = API[_reduction(reduction)]
    _check(graph, api, data, indices, updates)
    axis = integer_arg(axis, f"{api}: axis", ShapeError)
    if not -data.rank <= axis < data.rank:
        raise ShapeError(f"{api}: axis {axis} is outside {data.name!r} {data.shape}")
    axis %= data.rank
    others = [d for d in range(data.rank) if d != axis]
    if (
        indices.shape != updates.shape
        or indices.rank != data.rank
        or any(indices.shape[d] > data.shape[d] for d in others)
    ):
        raise ShapeError(
            f"{api}: indices {indices.name!r} {indices.shape} and updates {updates.name!r} "
            f"{updates.shape} must have one shape, of {data.name!r} {data.shape}'s rank, no "
            f"larger in any dimension but {axis}"
        )
    size = data.shape[axis]
    places = int(np.prod([data.shape[d] for d in others], dtype=np.int64))
    count = indices.num_elements
    plan = plan_scatter(
        places,
        1,
        count,
        2,
        data.type.size,
        len(graph.tile_range),
        graph.target.bytes_per_tile,
        tuples_split=True,
    )
    args = {
        "data": list(data.shape),
        "indices": list(indices.shape),
        "axis": axis,
        "reduction": reduction,
        "plan": [-(-places // plan.rows), 1],
    }
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(data.type, [places, size], debug_prefix or "scatter")
        perm = [*others, axis]
        back = list(np.argsort(perm))
        shaped = out.reshape([*(data.shape[d] for d in others), size]).dim_shuffle(back)
        if not (count and places and size):
            graph.set_tile_mapping(out, graph.tile_range.start)
            if places and size:  # nothing to scatter: the data as it is
                add_program(prog, Copy(data, shaped), debug_id)
            return shaped
        # each update's place: its position in the other dimensions, in the data's shape
        places_of = [data.shape[d] for d in others]
        place = np.zeros(1, dtype=np.int64)
        if others:
            coords = np.indices([indices.shape[d] for d in others]).reshape(len(others), -1)
            place = np.ravel_multi_index(coords, places_of)
        ordered = indices.dim_shuffle(perm).reshape([count])
        place = np.repeat(place, indices.shape[axis])
        order = np.argsort(place, kind="stable")  # index order kept within a place
        r0 = np.arange(0, places, plan.rows)
        starts = np.searchsorted(place[order], np.append(r0, places))
        places_const = graph.add_constant(indices.type, [count, 1], place[:, None], "places")
        table = concat([places_const, ordered.reshape([count, 1])], 1)
        upd = updates.dim_shuffle(perm).reshape([count, 1])
        rows = (r0 * size, np.minimum(r0 + plan.rows, places) * size)
        blocks = (*rows, np.zeros_like(r0), np.ones_like(r0))
        tiles = _build(
            graph,
            (data.dim_shuffle(perm).reshape([places * size, 1]), out.reshape([places * size, 1])),
            (places, size),
            table,
            upd,
            blocks,
            (order, starts),
            reduction,
            prog,
            debug_id,
        )
        entry_block = np.searchsorted(starts, np.arange(count), side="right") - 1
        entry_tiles = np.empty(count, dtype=np.int32)
        entry_tiles[order] = tiles[entry_block]
        graph.set_tile_mapping_array(places_const, entry_tiles)
        return shaped


def _build(
    graph: Graph,
    tensors: tuple[Tensor, Tensor],
    dims: tuple[int, ...],
    table: Tensor,
    updates: Tensor,
    blocks: tuple[np.ndarray, ...],
    entries: tuple[np.ndarray, np.ndarray],
    reduction: str,
    prog: SequenceProgram,
    debug_id: int,
) -> np.ndarray:
    """One MultiUpdate vertex per block (r0, r1, c0, c1) of ``tensors`` (data, out as
    [rows, columns]); vertex v gets the tuples ``order[starts[v]:starts[v + 1]]`` of
    ``table`` and their rows of ``updates``. Returns each vertex's tile."""
    data, out = tensors
    r0, r1, c0, c1 = (np.asarray(b, dtype=np.int64) for b in blocks)
    order, starts = entries
    vertices = r0.size
    avail = graph.tile_range
    tiles = (avail.start + np.arange(vertices) * len(avail) // vertices).astype(np.int32)
    out_tiles = np.zeros(out.shape, dtype=np.int32)
    for v in range(vertices):  # each output block on its vertex's tile
        out_tiles[r0[v] : r1[v], c0[v] : c1[v]] = tiles[v]
    graph.set_tile_mapping_array(out, out_tiles)
    depth = len(dims)
    shape = graph.add_constant(UNSIGNED_INT, [1, max(depth, 1)], [*dims, 0][: max(depth, 1)])
    graph.set_tile_mapping(shape, int(tiles[0]))
    count = np.diff(starts)
    width = c1 - c0
    if depth:
        index_addr = table.addr[order].reshape(-1)
        index_col = EdgeColumn(index_addr, np.asarray(starts, dtype=np.int64) * depth)
    else:
        index_col = EdgeColumn(np.zeros(0, np.int64), np.zeros(vertices + 1, np.int64))
    upd_addr = [
        updates.addr[order[starts[v] : starts[v + 1]], c0[v] : c1[v]].reshape(-1)
        for v in range(vertices)
    ]
    edges = {
        "data": EdgeColumn.from_blocks(data, r0, r1, c0, c1),
        "out": EdgeColumn.from_blocks(out, r0, r1, c0, c1),
        "indices": index_col.compressed(),
        "dims": EdgeColumn.from_blocks(shape, 0 * r0, 0 * r0 + 1, 0 * r0, 0 * r0 + depth),
        "updates": EdgeColumn.from_parts(upd_addr),
    }
    cs = graph.add_compute_set("MultiUpdate")
    codelet = multi_update(data.type, table.type, reduction)
    block = graph.add_vertex_block(cs, codelet, tiles, edges)
    state = {
        "rowOffset": r0,
        "rows": r1 - r0,
        "columns": width,
        "numIndices": count,
        "indexDepth": depth,
        "totalRows": data.shape[0],
    }
    for name, values in state.items():
        block.state[name][:] = np.broadcast_to(values, (vertices,)).astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
    return tiles
