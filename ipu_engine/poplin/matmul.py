"""``poplin.mat_mul(graph, A, B, prog)``: a planned, tiled matrix product.

The plan (see ``planner``) gives each tile one block product in a ``Convolve`` compute
set; when the shared dimension is split, a ``Reduce`` compute set sums the partials
on the tiles of the output blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.codelets.matmul import matmul_partial
from ipu_engine.codelets.reduce import reduce_codelet
from ipu_engine.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.graph import Graph
from ipu_engine.libcommon import add_program, check_tensors, op_context
from ipu_engine.poplin.planner import MatMulPlan, plan_matmul
from ipu_engine.popops.reduce import reduce_to
from ipu_engine.program import Execute
from ipu_engine.program import Sequence as SequenceProgram
from ipu_engine.runs import Runs
from ipu_engine.tensor import Tensor
from ipu_engine.vertices import EdgeColumn

_OPTIONS = {"availableMemoryProportion", "partialsType", "fullyConnectedPass"}


def _memory_proportion(options: Mapping[str, Any] | None) -> float:
    options = dict(options or {})
    unknown = set(options) - _OPTIONS
    if unknown:
        raise GraphError(
            f"poplin::matMul: unknown option {sorted(unknown)[0]!r}; known: {sorted(_OPTIONS)}"
        )
    try:
        value = float(options.get("availableMemoryProportion", 0.6))
    except ValueError:
        value = -1.0
    if not 0 < value <= 1:
        raise GraphError(
            f"poplin::matMul: availableMemoryProportion must be in (0, 1], got "
            f"{options.get('availableMemoryProportion')!r}"
        )
    return value


def mat_mul_plan(
    graph: Graph, a: Tensor, b: Tensor, options: Mapping[str, Any] | None = None
) -> MatMulPlan:
    """The plan ``mat_mul`` would use for ``a @ b``."""
    (m, k), n = a.shape, b.shape[1]
    return plan_matmul(
        m,
        k,
        n,
        a.type.size,
        a.type.name,
        len(graph.tile_range),
        graph.target.bytes_per_tile,
        _memory_proportion(options),
    )


def mat_mul(
    graph: Graph,
    a: Tensor,
    b: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    options: Mapping[str, Any] | None = None,
) -> Tensor:
    """``a @ b`` for 2-D tensors, as a new tensor [M, N] spread over the tiles."""
    api = "poplin::matMul"
    check_tensors(graph, api, a, b)
    if a.rank != 2 or b.rank != 2 or a.shape[1] != b.shape[0]:
        raise ShapeError(
            f"{api}: cannot multiply {a.name!r} {a.shape} by {b.name!r} {b.shape}; "
            "needs [M,K] x [K,N]"
        )
    if a.type != b.type:
        raise TypeMismatchError(f"{api}: {a.name!r} is {a.type!r} but {b.name!r} is {b.type!r}")
    if a.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half matrices, got {a.type!r}")
    plan = mat_mul_plan(graph, a, b, options)
    m, n = a.shape[0], b.shape[1]
    args = {"A": list(a.shape), "B": list(b.shape), "plan": [plan.sm, plan.sn, plan.sk]}
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(a.type, [m, n], debug_prefix or "matmul")
        _build(graph, plan, a, b, out, prog, debug_id)
    return out


def _blocks(size: int, block: int) -> list[tuple[int, int]]:
    return [(s, min(s + block, size)) for s in range(0, size, block)]


def _build(
    graph: Graph,
    plan: MatMulPlan,
    a: Tensor,
    b: Tensor,
    out: Tensor,
    prog: SequenceProgram,
    debug_id: int,
) -> None:
    m, k = a.shape
    n = b.shape[1]
    rows, cols, depth = _blocks(m, plan.bm), _blocks(n, plan.bn), _blocks(k, plan.bk)
    tiles_avail = graph.tile_range
    count = len(rows) * len(cols) * len(depth)
    # spread the partial products evenly over the available tiles
    tile_of = tiles_avail.start + (np.arange(count) * len(tiles_avail)) // count
    split_k = len(depth) > 1
    if split_k:
        partials = graph.add_variable(a.type, [len(depth), m, n], "partials")
        partial_runs: list[Runs] = []  # each partial block's runs, mapped to its tile
    a_parts, b_parts, o_parts, shapes, tiles = [], [], [], [], []
    out_tiles = np.zeros((m, n), dtype=np.int32)
    partials_apart = True  # the partials of every output on distinct tiles
    i = 0
    for r0, r1 in rows:
        for c0, c1 in cols:
            block_tiles = []
            for d, (k0, k1) in enumerate(depth):
                tile = int(tile_of[i])
                i += 1
                block_tiles.append(tile)
                a_parts.append(_block(a, 0, r0, r1, k0, k1))
                b_parts.append(_block(b, 0, k0, k1, c0, c1))
                o_parts.append(_block(partials if split_k else out, d, r0, r1, c0, c1))
                if split_k:
                    partial_runs.append(o_parts[-1])
                shapes.append((r1 - r0, k1 - k0, c1 - c0))
                tiles.append(tile)
            partials_apart &= len(set(block_tiles)) == len(block_tiles)
            # the output block is spread over the tiles of its partials, so that each
            # reduces a share of it (as PopLibs spreads the reduction)
            size = (r1 - r0) * (c1 - c0)
            share = np.arange(size) * len(block_tiles) // size
            out_tiles[r0:r1, c0:c1] = np.asarray(block_tiles)[share].reshape(r1 - r0, c1 - c0)
    graph.set_tile_mapping_array(out, out_tiles)
    if split_k:
        graph.map_runs(partials, partial_runs, tiles)
    cs = graph.add_compute_set("Conv_1/Convolve")
    block = graph.add_vertex_block(
        cs,
        matmul_partial(a.type),
        np.asarray(tiles, dtype=np.int32),
        {
            "in": EdgeColumn.from_parts(a_parts),
            "weights": EdgeColumn.from_parts(b_parts),
            "out": EdgeColumn.from_parts(o_parts),
        },
    )
    shape_arr = np.asarray(shapes, dtype=np.uint32)
    for j, name in enumerate(("m", "k", "n")):
        block.state[name][:] = shape_arr[:, j]
    add_program(prog, Execute(cs), debug_id)
    if split_k and partials_apart:
        _reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif split_k:
        reduce_to(graph, partials, [1, 2], [0], out, "ADD", 1.0, prog, debug_id)


def _block(t: Tensor, d: int, r0: int, r1: int, c0: int, c1: int) -> Runs | np.ndarray:
    """Block [r0:r1, c0:c1] of ``t`` (of ``t[d]`` for a 3-D tensor): runs of its rows,
    computed from the interval of a whole variable, else its address view."""
    span = t.pool_range()
    if span is None:
        return t.addr[d, r0:r1, c0:c1] if t.rank == 3 else t.addr[r0:r1, c0:c1]
    rows, cols = t.shape[-2:]
    first = span[0] + d * rows * cols + np.arange(r0, r1, dtype=np.int64) * cols + c0
    if c0 == 0 and c1 == cols:  # whole rows: one run
        return Runs(first[:1], np.array([(r1 - r0) * cols], dtype=np.int64))
    return Runs(first, np.full(r1 - r0, c1 - c0, dtype=np.int64))


def _reduce_partials(
    graph: Graph,
    partials: Tensor,
    out: Tensor,
    out_tiles: np.ndarray,
    prog: SequenceProgram,
    debug_id: int,
) -> None:
    """Sum the partials into ``out`` on each output element's tile, built from runs.

    The vertices are those ``popops.reduce`` makes when every output's partials lie on
    distinct tiles (one vertex per output tile, reducing all its outputs): the same
    figures, but each vertex's inputs are runs of ``partials`` (first partial of all its
    outputs, then the second, ...) instead of one address per element.
    """
    depth, size = partials.shape[0], out.num_elements
    flat_tiles = out_tiles.reshape(-1)
    order = np.argsort(flat_tiles, kind="stable")
    tiles_sorted = flat_tiles[order]
    breaks = (np.diff(order) != 1) | (np.diff(tiles_sorted) != 0)
    first = np.concatenate(([0], np.flatnonzero(breaks) + 1))
    length = np.diff(np.append(first, size)).astype(np.int64)
    pos = order[first].astype(np.int64)
    run_tile = tiles_sorted[first]
    del order, tiles_sorted, breaks
    vstart = np.flatnonzero(np.r_[True, run_tile[1:] != run_tile[:-1]])
    runs_per_vertex = np.diff(np.append(vstart, pos.size))
    out_base = out.pool_range()[0]  # type: ignore[index]
    partials_base = partials.pool_range()[0]  # type: ignore[index]
    elements = np.add.reduceat(length, vstart)
    out_col = EdgeColumn(
        None,
        np.concatenate(([0], np.cumsum(elements))).astype(np.int64),
        runs=Runs(out_base + pos, length),
        run_offsets=np.append(vstart, pos.size).astype(np.int64),
    )
    in_run_offsets = np.concatenate(([0], np.cumsum(runs_per_vertex * depth))).astype(np.int64)
    vertex_of_run = np.repeat(np.arange(vstart.size), runs_per_vertex)
    local = np.arange(pos.size) - vstart[vertex_of_run]
    in_start = np.empty(pos.size * depth, dtype=np.int64)
    in_length = np.empty(pos.size * depth, dtype=np.int64)
    for d in range(depth):
        at = in_run_offsets[vertex_of_run] + d * runs_per_vertex[vertex_of_run] + local
        in_start[at] = partials_base + d * size + pos
        in_length[at] = length
    in_col = EdgeColumn(
        None,
        np.concatenate(([0], np.cumsum(elements * depth))).astype(np.int64),
        runs=Runs(in_start, in_length),
        run_offsets=in_run_offsets,
    )
    cs = graph.add_compute_set("Reduce")
    block = graph.add_vertex_block(
        cs,
        reduce_codelet("ADD", partials.type, partials_major=True),
        run_tile[vstart],
        {"in": in_col, "out": out_col},
    )
    block.state["numPartials"][:] = depth
    block.state["scale"][:] = 1.0
    add_program(prog, Execute(cs), debug_id)
