"""``poplin.mat_mul(graph, A, B, prog)``: a planned, tiled matrix product.

The plan (see ``planner``) gives each tile one block product in a ``Convolve`` compute
set; when the shared dimension is split, a ``Reduce`` compute set sums the partials
on the tiles of the output blocks. The ``partialsType`` option ("float", the default as
in Poplar, or "half") is what half products accumulate in, and the partials' type. A
serial plan does this for each slice of the rows in turn, each slice with its own
partials, live only until that slice is reduced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ipu_engine.codelets.matmul import matmul_partial
from ipu_engine.common.arguments import mapping_arg, shape_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.common.types import FLOAT, HALF, Type
from ipu_engine.poplar.graph import Graph, graph_arg
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poplin.matmul_grid import vertex_grid
from ipu_engine.poplin.planner import MatMulPlan, plan_matmul
from ipu_engine.popops.reduce import reduce_partials, reduce_to
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context

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


def partials_type(
    options: Mapping[str, Any] | None, input_type: Type, api: str = "poplin::matMul"
) -> Type:
    """The type products accumulate in: the ``partialsType`` option ("float" or "half",
    Poplar's names) for half inputs; float inputs always accumulate in float."""
    value = (options or {}).get("partialsType", "float")
    name = value.name if isinstance(value, Type) else str(value).lower()
    if name not in ("float", "half"):
        raise GraphError(f"{api}: option partialsType must be 'float' or 'half', got {value!r}")
    return HALF if name == "half" and input_type == HALF else FLOAT


def _check_matrices(api: str, a: Tensor, b: Tensor) -> None:
    """[M, K] x [K, N], each of M, K and N at least 1 (the planner splits each of them)."""
    if a.rank != 2 or b.rank != 2 or a.shape[1] != b.shape[0]:
        raise ShapeError(
            f"{api}: cannot multiply {a.name!r} {a.shape} by {b.name!r} {b.shape}; "
            "needs [M,K] x [K,N]"
        )
    sizes = {"M": a.shape[0], "K": a.shape[1], "N": b.shape[1]}
    empty = [f"{name} = 0" for name, size in sizes.items() if size == 0]
    if empty:
        raise ShapeError(
            f"{api}: {a.name!r} {a.shape} x {b.name!r} {b.shape} has {', '.join(empty)}; "
            "M, K and N must each be at least 1"
        )


def _check_float_pair(api: str, a: Tensor, b: Tensor) -> None:
    """Both operands float, or both half."""
    if a.type != b.type:
        raise TypeMismatchError(f"{api}: {a.name!r} is {a.type!r} but {b.name!r} is {b.type!r}")
    if a.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half matrices, got {a.type!r}")


def mat_mul_plan(
    graph: Graph, a: Tensor, b: Tensor, options: Mapping[str, Any] | None = None
) -> MatMulPlan:
    """The plan ``mat_mul`` would use for ``a @ b``."""
    api = "poplin::matMulPlan"
    check_tensors(graph, api, a, b)
    _check_matrices(api, a, b)
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


def create_mat_mul_input_rhs(
    graph: Graph,
    elem_type: Type,
    a_shape: Sequence[int],
    b_shape: Sequence[int],
    name: str = "",
    options: Mapping[str, Any] | None = None,
) -> Tensor:
    """A new [K, N] variable to be the right operand of ``mat_mul`` with a left operand of
    ``a_shape`` [M, K] and these ``options`` (PopLibs' ``createMatMulInputRHS``): each block
    of it lives on the tile of the first vertex of the plan that reads it, so the product
    reads a weight made this way where it is, never a received copy of it. A plan of
    several row blocks or serial slices still sends each block to the others' tiles."""
    api = "poplin::createMatMulInputRHS"
    a_shape = list(shape_arg(a_shape, f"{api}: a_shape"))
    b_shape = list(shape_arg(b_shape, f"{api}: b_shape"))
    if len(a_shape) != 2 or len(b_shape) != 2 or a_shape[1] != b_shape[0] or 0 in a_shape + b_shape:
        raise ShapeError(
            f"{api}: cannot create the right operand {b_shape} of a product with a left "
            f"operand {a_shape}; needs [M,K] x [K,N], each of M, K and N at least 1"
        )
    graph_arg(graph, api)
    if not isinstance(elem_type, Type) or elem_type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs a float or half type, got {elem_type!r}")
    (m, k), n = a_shape, b_shape[1]
    proportion = _memory_proportion(options, api)
    partials_type(options, elem_type, api)  # checked as mat_mul checks it
    plan = plan_matmul(
        m, k, n, elem_type.size, elem_type.name, len(graph.tile_range),
        graph.target.bytes_per_tile, proportion,
    )  # fmt: skip
    args = {"A": a_shape, "B": b_shape, "plan": [plan.sm, plan.sn, plan.sk]}
    with op_context(graph, api, name, args):
        b = graph.add_variable(elem_type, b_shape, name or "matmul_rhs")
        # the first serial slice's first row block: every block of B once
        grid = vertex_grid(plan, min(plan.slice_rows or m, m), k, n, 1, graph.tile_range)
        first = grid.r0 == 0
        b_tiles = np.zeros((k, n), dtype=np.int32)
        for k0, k1, c0, c1, tile in zip(
            *(x[first].tolist() for x in (grid.k0, grid.k1, grid.c0, grid.c1, grid.tiles)),
            strict=True,
        ):
            b_tiles[k0:k1, c0:c1] = tile
        graph.set_tile_mapping_array(b, b_tiles)
    return b


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
    _check_matrices(api, a, b)
    _check_float_pair(api, a, b)
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


def mat_mul_grouped(
    graph: Graph,
    a: Tensor,
    b: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    options: Mapping[str, Any] | None = None,
) -> Tensor:
    """``a[g] @ b[g]`` for every group g of ``a`` [G, M, K] and ``b`` [G, K, N] (PopLibs'
    matMulGrouped, ``np.matmul``): one op whose plan splits the groups too, giving a new
    tensor [G, M, N] spread over the tiles."""
    api = "poplin::matMulGrouped"
    check_tensors(graph, api, a, b)
    if a.rank != 3 or b.rank != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ShapeError(
            f"{api}: cannot multiply {a.name!r} {a.shape} by {b.name!r} {b.shape}; "
            "needs [G,M,K] x [G,K,N]"
        )
    _check_float_pair(api, a, b)
    (groups, m, k), n = a.shape, b.shape[2]
    if 0 in (groups, m, k, n):
        raise ShapeError(f"{api}: {a.name!r} {a.shape} and {b.name!r} {b.shape} have no elements")
    proportion = _memory_proportion(options, api)
    partials = partials_type(options, a.type, api)
    plan = plan_matmul(
        m, k, n, a.type.size, a.type.name, len(graph.tile_range),
        graph.target.bytes_per_tile, proportion, groups=groups,
    )  # fmt: skip
    args = {
        "A": list(a.shape), "B": list(b.shape),
        "plan": [plan.sg, plan.sm, plan.sn, plan.sk], "partialsType": partials.name,
        "serialSplit": plan.serial, "availableMemoryProportion": proportion,
        "tempBytesPerTile": plan.temp_bytes,
    }  # fmt: skip
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(a.type, [groups, m, n], debug_prefix or "matmul")
        # serial slices cut the rows of every group alike, one slice after the other
        for i, first in enumerate(range(0, m, plan.slice_rows)):
            last = min(first + plan.slice_rows, m)
            rows = last - first
            cs_name = "Conv_1/Convolve" if plan.serial == 1 else f"Conv_1/Serial_{i}/Convolve"
            stacked = (
                a[:, first:last].reshape([groups * rows, k]),
                b.reshape([groups * k, n]),
                out[:, first:last].reshape([groups * rows, n]),
            )
            _build(graph, plan, *stacked, prog, debug_id, partials, cs_name, groups)
    return out


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
    groups: int = 1,
) -> None:
    """The vertices of ``plan``; with ``groups`` > 1, ``a``, ``b`` and ``out`` are the
    groups' matrices stacked ([G*M, K], [G*K, N], [G*M, N]) and each group's blocks go
    to the tiles of its group block."""
    m, k = a.shape[0] // groups, a.shape[1]
    n = b.shape[1]
    grid = vertex_grid(plan, m, k, n, groups, graph.tile_range)
    r0, r1, c0, c1, k0, k1, tiles = grid.r0, grid.r1, grid.c0, grid.c1, grid.k0, grid.k1, grid.tiles
    split_k = grid.depth > 1
    out_tiles = np.zeros((groups * m, n), dtype=np.int32)
    partials_apart = True  # the partials of every output on distinct tiles
    for i in range(0, tiles.size, grid.depth):
        block_tiles = tiles[i : i + grid.depth]
        partials_apart &= np.unique(block_tiles).size == block_tiles.size
        # the output block is spread over the tiles of its partials, so that each
        # reduces a share of it (as PopLibs spreads the reduction)
        br0, br1, bc0, bc1 = int(r0[i]), int(r1[i]), int(c0[i]), int(c1[i])
        size = (br1 - br0) * (bc1 - bc0)
        share = np.arange(size) * len(block_tiles) // size
        out_tiles[br0:br1, bc0:bc1] = block_tiles[share].reshape(br1 - br0, bc1 - bc0)
    graph.set_tile_mapping_array(out, out_tiles)
    in_col = EdgeColumn.from_blocks(a, r0, r1, k0, k1)
    weights_col = EdgeColumn.from_blocks(b, grid.g * k + k0, grid.g * k + k1, c0, c1)
    m = groups * m  # rows of the stacked output
    if split_k:
        partials = graph.add_variable(partials_type, [grid.depth, m, n], "partials")
        as_rows = partials.reshape([grid.depth * m, n])
        out_col = EdgeColumn.from_blocks(as_rows, grid.d * m + r0, grid.d * m + r1, c0, c1)
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
        reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif split_k:
        reduce_to(graph, partials, [1, 2], [0], out, "ADD", 1.0, prog, debug_id)
