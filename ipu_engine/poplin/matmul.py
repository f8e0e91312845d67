"""``poplin.mat_mul(graph, A, B, prog)``: a planned, tiled matrix product.

The plan (see ``planner``) gives each tile one block product in a ``Convolve`` compute
set; when the shared dimension is split, a ``Reduce`` compute set sums the partials
on the tiles of the output blocks. The ``partialsType`` option ("float", the default as
in Poplar, or "half") is what half products accumulate in, and the partials' type. A
serial plan does this for each slice of the rows in turn, each slice with its own
partials, live only until that slice is reduced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.arguments import mapping_arg
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
from ipu_engine.types import FLOAT, HALF, Type
from ipu_engine.vertices import EdgeColumn

_OPTIONS = {"availableMemoryProportion", "partialsType", "fullyConnectedPass"}


def _memory_proportion(options: Mapping[str, Any] | None, api: str = "poplin::matMul") -> float:
    """The option ``availableMemoryProportion`` (default 0.6): the share of a tile's memory
    the plan may use for temporaries, in (0, 1]."""
    options = dict(mapping_arg(options, f"{api}: the options"))
    unknown = set(options) - _OPTIONS
    if unknown:
        raise GraphError(f"{api}: unknown option {sorted(unknown)[0]!r}; known: {sorted(_OPTIONS)}")
    given = options.get("availableMemoryProportion", 0.6)
    try:  # Poplar's options are strings ("0.3") or numbers; True is no proportion
        value = -1.0 if isinstance(given, bool) else float(given)
    except (TypeError, ValueError):
        value = -1.0
    if not 0 < value <= 1:
        raise GraphError(
            f"{api}: option availableMemoryProportion must be a number in (0, 1] (the share "
            f"of a tile's memory for the plan's temporaries), got {given!r}"
        )
    return value


def partials_type(options: Mapping[str, Any] | None, input_type: Type) -> Type:
    """The type products accumulate in: the ``partialsType`` option ("float" or "half",
    Poplar's names) for half inputs; float inputs always accumulate in float."""
    value = (options or {}).get("partialsType", "float")
    name = value.name if isinstance(value, Type) else str(value).lower()
    if name not in ("float", "half"):
        raise GraphError(f"poplin::matMul: partialsType must be 'float' or 'half', got {value!r}")
    return HALF if name == "half" and input_type == HALF else FLOAT


def mat_mul_plan(
    graph: Graph, a: Tensor, b: Tensor, options: Mapping[str, Any] | None = None
) -> MatMulPlan:
    """The plan ``mat_mul`` would use for ``a @ b``."""
    api = "poplin::matMulPlan"
    check_tensors(graph, api, a, b)
    if a.rank != 2 or b.rank != 2 or a.shape[1] != b.shape[0]:
        raise ShapeError(f"{api}: cannot multiply {a.name!r} {a.shape} by {b.name!r} {b.shape}")
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
    proportion = _memory_proportion(options)
    plan = mat_mul_plan(graph, a, b, options)
    partials = partials_type(options, a.type)
    m, n = a.shape[0], b.shape[1]
    args = {"A": list(a.shape), "B": list(b.shape), "plan": [plan.sm, plan.sn, plan.sk]}
    args["partialsType"] = partials.name
    args |= {"serialSplit": plan.serial, "availableMemoryProportion": proportion}
    args["tempBytesPerTile"] = plan.temp_bytes
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(a.type, [m, n], debug_prefix or "matmul")
        if plan.serial == 1:
            _build(graph, plan, a, b, out, prog, debug_id, partials)
            return out
        # serial slices of the rows, one after the other: each slice's operand buffers
        # and partials are freed before the next, so the slices share one tile budget
        for i, first in enumerate(range(0, m, plan.slice_rows)):
            last = min(first + plan.slice_rows, m)
            cs_name = f"Conv_1/Serial_{i}/Convolve"
            rows_out = out[first:last]
            _build(graph, plan, a[first:last], b, rows_out, prog, debug_id, partials, cs_name)
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
    partials_type: Type = FLOAT,
    cs_name: str = "Conv_1/Convolve",
) -> None:
    m, k = a.shape
    n = b.shape[1]
    rows, cols, depth = _blocks(m, plan.bm), _blocks(n, plan.bn), _blocks(k, plan.bk)
    tiles_avail = graph.tile_range
    count = len(rows) * len(cols) * len(depth)
    # spread the partial products evenly over the available tiles
    tile_of = tiles_avail.start + (np.arange(count) * len(tiles_avail)) // count
    split_k = len(depth) > 1
    # every vertex's block bounds, in (row block, column block, depth block) order
    grid = np.stack(
        np.meshgrid(
            np.arange(len(rows)), np.arange(len(cols)), np.arange(len(depth)), indexing="ij"
        ),
        axis=-1,
    ).reshape(-1, 3)
    r0, r1 = (np.asarray(rows, dtype=np.int64)[grid[:, 0], j] for j in (0, 1))
    c0, c1 = (np.asarray(cols, dtype=np.int64)[grid[:, 1], j] for j in (0, 1))
    k0, k1 = (np.asarray(depth, dtype=np.int64)[grid[:, 2], j] for j in (0, 1))
    d = grid[:, 2].astype(np.int64)
    tiles = tile_of.astype(np.int32)
    out_tiles = np.zeros((m, n), dtype=np.int32)
    partials_apart = True  # the partials of every output on distinct tiles
    for i in range(0, count, len(depth)):
        block_tiles = tiles[i : i + len(depth)]
        partials_apart &= np.unique(block_tiles).size == block_tiles.size
        # the output block is spread over the tiles of its partials, so that each
        # reduces a share of it (as PopLibs spreads the reduction)
        br0, br1, bc0, bc1 = int(r0[i]), int(r1[i]), int(c0[i]), int(c1[i])
        size = (br1 - br0) * (bc1 - bc0)
        share = np.arange(size) * len(block_tiles) // size
        out_tiles[br0:br1, bc0:bc1] = block_tiles[share].reshape(br1 - br0, bc1 - bc0)
    graph.set_tile_mapping_array(out, out_tiles)
    in_col = EdgeColumn.from_blocks(a, r0, r1, k0, k1)
    weights_col = EdgeColumn.from_blocks(b, k0, k1, c0, c1)
    if split_k:
        partials = graph.add_variable(partials_type, [len(depth), m, n], "partials")
        as_rows = partials.reshape([len(depth) * m, n])
        out_col = EdgeColumn.from_blocks(as_rows, d * m + r0, d * m + r1, c0, c1)
        runs, run_edge = out_col.edge_runs()
        graph.map_runs(partials, [runs], [0], run_tiles=tiles[run_edge])
    else:
        out_col = EdgeColumn.from_blocks(out, r0, r1, c0, c1)
    cs = graph.add_compute_set(cs_name)
    block = graph.add_vertex_block(
        cs,
        matmul_partial(a.type, partials_type, partials_type if split_k else out.type),
        tiles,
        {"in": in_col, "weights": weights_col, "out": out_col},
    )
    for name, (lo, hi) in (("m", (r0, r1)), ("k", (k0, k1)), ("n", (c0, c1))):
        block.state[name][:] = (hi - lo).astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
    if split_k and partials_apart:
        _reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif split_k:
        reduce_to(graph, partials, [1, 2], [0], out, "ADD", 1.0, prog, debug_id)


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
    span = out.pool_range()
    if span is None:  # a view (a serial slice's channels): runs end where addresses jump
        breaks |= np.diff(out.flat_addr()[order]) != 1
    first = np.concatenate(([0], np.flatnonzero(breaks) + 1))
    length = np.diff(np.append(first, size)).astype(np.int64)
    pos = order[first].astype(np.int64)
    out_start = pos + span[0] if span is not None else out.flat_addr()[pos]
    run_tile = tiles_sorted[first]
    del order, tiles_sorted, breaks
    vstart = np.flatnonzero(np.r_[True, run_tile[1:] != run_tile[:-1]])
    runs_per_vertex = np.diff(np.append(vstart, pos.size))
    partials_base = partials.pool_range()[0]  # type: ignore[index]
    elements = np.add.reduceat(length, vstart)
    out_col = EdgeColumn(
        None,
        np.concatenate(([0], np.cumsum(elements))).astype(np.int64),
        runs=Runs(out_start, length),
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
        reduce_codelet("ADD", partials.type, partials_major=True, out_type=out.type),
        run_tile[vstart],
        {"in": in_col, "out": out_col},
    )
    block.state["numPartials"][:] = depth
    block.state["scale"][:] = 1.0
    add_program(prog, Execute(cs), debug_id)
