"""``popops.gather(graph, data, indices, axis, prog)``: ONNX Gather / an embedding lookup,
as PopLibs' ``multiSlice``: the indices are only known when the program runs.

The plan cuts the sliced dimension's rows, the other (unsliced) columns and the indices
into blocks, one ``MultiSlice`` vertex per block. A vertex sees all indices of its block
and copies the rows it holds; when the rows are split, each row block gives a partial
output and a ``Reduce`` sums them (the other blocks' partials are -0.0, so the sum is
exact). Negative indices count from the end (ONNX); an index outside [-size, size) stops
the run with an ``ExecutionError`` naming it -- never clamped, never a silent zero.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets.gather import multi_slice
from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.popops.reduce import reduce_partials, reduce_to
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context
from ipu_engine.poputil.splits import split_counts

API = "popops::gather"
_MAX_BASE_RUNS = 1_000_000  # runs of the sliced tensor's edges the engine keeps at most


@dataclass(frozen=True)
class GatherPlan:
    row_blocks: int  # of the sliced dimension
    column_blocks: int  # of the unsliced columns
    index_blocks: int
    rows: int
    columns: int
    indices: int


def plan_gather(
    rows: int, columns: int, indices: int, elem_size: int, num_tiles: int, bytes_per_tile: int
) -> GatherPlan:
    """Fewest estimated cycles (index checks and copies, receiving the vertex's rows, and
    summing row-block partials) with each vertex's operands in 60% of a tile and the
    partials in a quarter of the IPU."""
    grids = np.meshgrid(
        split_counts(rows, num_tiles),
        split_counts(columns, num_tiles),
        split_counts(indices, num_tiles),
    )
    ss, su, si = (g.reshape(-1) for g in grids)
    bs, bc, bi = -(-rows // ss), -(-columns // su), -(-indices // si)
    vertex_bytes = (bs * bc + bi * bc) * elem_size + bi * 4
    partial_bytes = np.where(ss > 1, ss * indices * columns * elem_size, 0)
    ok = (ss * su * si <= num_tiles) & (rows * np.where(su > 1, su, 1) <= _MAX_BASE_RUNS)
    fits = (
        ok
        & (vertex_bytes <= 0.6 * bytes_per_tile)
        & (partial_bytes <= 0.25 * num_tiles * bytes_per_tile)
    )
    count = ss * su * si
    reduce = np.where(
        ss > 1, ss * indices * columns / np.minimum(count, num_tiles) + C.SYNC_CYCLES, 0
    )
    cycles = (
        C.SUPERVISOR_OVERHEAD_CYCLES + bi * 4 + bi * bc * 0.5
        + bs * bc * elem_size / C.EXCHANGE_BYTES_PER_CYCLE + reduce
    )  # fmt: skip
    pool = fits if fits.any() else ok
    choice = int(np.flatnonzero(pool)[np.argmin((cycles if fits.any() else vertex_bytes)[pool])])
    return GatherPlan(
        int(ss[choice]), int(su[choice]), int(si[choice]),
        int(bs[choice]), int(bc[choice]), int(bi[choice]),
    )  # fmt: skip


def gather(
    graph: Graph,
    data: Tensor,
    indices: Tensor,
    axis: int,
    prog: SequenceProgram,
    debug_prefix: str = "",
) -> Tensor:
    """``data`` taken at ``indices`` along ``axis``: shape data.shape[:axis] +
    indices.shape + data.shape[axis + 1:] (ONNX Gather, ``numpy.take``)."""
    check_tensors(graph, API, data, indices)
    axis = integer_arg(axis, f"{API}: axis", ShapeError)
    if not -data.rank <= axis < data.rank:
        raise ShapeError(f"{API}: axis {axis} is outside {data.name!r} {data.shape}")
    axis %= data.rank
    if indices.type.numpy_dtype.kind not in "iu":
        raise TypeMismatchError(
            f"{API}: indices {indices.name!r} must be an integer type, not {indices.type!r}"
        )
    size = data.shape[axis]
    if size == 0 and indices.num_elements:
        raise ShapeError(f"{API}: {data.name!r} {data.shape} has no rows along axis {axis}")
    outer, inner = data.shape[:axis], data.shape[axis + 1 :]
    columns = int(np.prod(outer, dtype=np.int64) * np.prod(inner, dtype=np.int64))
    count = indices.num_elements
    plan = plan_gather(
        size, columns, count, data.type.size, len(graph.tile_range), graph.target.bytes_per_tile
    )
    args = {
        "data": list(data.shape), "indices": list(indices.shape), "axis": axis,
        "plan": [plan.row_blocks, plan.column_blocks, plan.index_blocks],
    }  # fmt: skip
    with op_context(graph, API, debug_prefix, args) as debug_id:
        # the sliced dimension first: rows of [size, columns] and [count, columns]
        order = [axis, *range(axis), *range(axis + 1, data.rank)]
        base = data.dim_shuffle(order).reshape([size, columns])
        out = graph.add_variable(data.type, [count, *outer, *inner], debug_prefix or "gather")
        if count and columns:
            _build(graph, plan, base, indices.reshape([count]), out.reshape([count, columns]),
                   prog, debug_id)  # fmt: skip
        else:
            graph.set_tile_mapping(out, graph.tile_range.start)
        back = [*range(1, axis + 1), 0, *range(axis + 1, data.rank)]
        shaped = out.dim_shuffle(back) if axis else out
        return shaped.reshape([*outer, *indices.shape, *inner])


def _build(graph, plan, base, indices, out, prog, debug_id) -> None:  # noqa: ANN001
    size, columns = base.shape
    count = indices.shape[0]
    rb, cb, ib = (
        np.arange(0, n, b, dtype=np.int64)
        for n, b in ((size, plan.rows), (columns, plan.columns), (count, plan.indices))
    )
    # vertex order: index block, column block, then row block (the partials of an output
    # block are consecutive)
    i0, c0, r0 = (g.reshape(-1) for g in np.meshgrid(ib, cb, rb, indexing="ij"))
    i1 = np.minimum(i0 + plan.indices, count)
    c1, r1 = np.minimum(c0 + plan.columns, columns), np.minimum(r0 + plan.rows, size)
    vertices = i0.size
    tiles_avail = graph.tile_range
    tiles = (tiles_avail.start + np.arange(vertices) * len(tiles_avail) // vertices).astype(
        np.int32
    )
    depth = rb.size
    out_tiles = np.zeros((count, columns), dtype=np.int32)
    apart = True
    for v in range(0, vertices, depth):  # each output block on the tiles of its partials
        block_tiles = tiles[v : v + depth]
        apart &= np.unique(block_tiles).size == block_tiles.size
        a, b, e, g = int(i0[v]), int(i1[v]), int(c0[v]), int(c1[v])
        share = np.arange((b - a) * (g - e)) * depth // ((b - a) * (g - e))
        out_tiles[a:b, e:g] = block_tiles[share].reshape(b - a, g - e)
    graph.set_tile_mapping_array(out, out_tiles)
    d = np.arange(vertices) % depth
    if depth > 1:
        partials = graph.add_variable(base.type, [depth, count, columns], "partials")
        target = partials.reshape([depth * count, columns])
        first = d * count
    else:
        target, first = out, np.zeros(vertices, dtype=np.int64)
    out_col = EdgeColumn.from_blocks(target, first + i0, first + i1, c0, c1)
    if depth > 1:
        runs, run_edge = out_col.edge_runs()
        graph.map_runs(partials, [runs], [0], run_tiles=tiles[run_edge])
    edges = {
        "base": EdgeColumn.from_blocks(base, r0, r1, c0, c1),
        "offsets": EdgeColumn.from_blocks(indices.reshape([1, count]), 0 * i0, 0 * i0 + 1, i0, i1),
        "out": out_col,
    }
    cs = graph.add_compute_set("MultiSlice")
    block = graph.add_vertex_block(cs, multi_slice(base.type, indices.type), tiles, edges)
    state = {
        "baseOffset": r0, "baseRows": r1 - r0, "rowLength": c1 - c0,
        "numIndices": i1 - i0, "sliceSize": size,
    }  # fmt: skip
    for name, values in state.items():
        block.state[name][:] = np.broadcast_to(values, (vertices,)).astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
    if depth > 1 and apart:
        reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif depth > 1:
        reduce_to(graph, partials, [1, 2], [0], out, "ADD", 1.0, prog, debug_id)
