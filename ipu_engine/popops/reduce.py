"""``popops.reduce``: reduce a tensor over dimensions, in two stages like PopLibs.

Stage 1 runs on the tiles that hold the input: each tile reduces its own elements of
every output to a partial. Stage 2, only when an output's inputs span several tiles,
reduces those partials on the output's tile.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ipu_engine.codelets.reduce import REDUCE_UFUNCS, reduce_codelet
from ipu_engine.common.arguments import host_values, integers_arg, name_arg, number_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.runs import Runs
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertex import Vertex
from ipu_engine.poplar.vertices import ComputeSet, EdgeColumn
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context
from ipu_engine.poputil.tile_mapping import linear_tile_array

# Below this many inputs per (output, tile), a first on-tile stage saves no exchange.
_MIN_PARTIALS_PER_TILE = 4

_ALIASES = {
    "add": "ADD",
    "sum": "ADD",
    "mul": "MUL",
    "max": "MAX",
    "min": "MIN",
    "square_add": "SQUARE_ADD",
    "logical_and": "LOGICAL_AND",
    "logical_or": "LOGICAL_OR",
}


def reduce(
    graph: Graph,
    t: Tensor,
    dims: Sequence[int],
    op: str,
    prog: SequenceProgram,
    debug_prefix: str = "",
    scale: float = 1.0,
) -> Tensor:
    """Reduce ``t`` over ``dims`` with ``op`` (add, mul, max, min, square_add, ...).

    ``scale`` multiplies the result (``scale=1/n`` gives a mean).
    """
    api = "popops::reduce"
    check_tensors(graph, api, t)
    name_arg(op, f"{api}: the operation")
    dims = integers_arg(dims, f"{api}: the dimensions")
    scale = number_arg(scale, f"{api}: the scale")
    op_name = _ALIASES.get(str(op).lower(), str(op).upper())
    if op_name not in REDUCE_UFUNCS:
        raise GraphError(f"{api}: unknown operation {op!r}; use one of {', '.join(_ALIASES)}")
    if op_name.startswith("LOGICAL") and t.type.name != "bool":
        raise TypeMismatchError(f"{api}: {op_name} needs a bool tensor; {t.name!r} is {t.type!r}")
    if len(set(dims)) != len(dims):
        raise ShapeError(f"{api}: dimensions {dims} name a dimension twice")
    if not t.type.is_float and scale != 1.0:  # an INT result cannot hold 0.5 x 11
        host_values(scale, t.type, f"{api}: the scale of a {t.type!r} reduction", GraphError)
    outside = [d for d in dims if not -t.rank <= d < t.rank]
    if outside:  # checked before negative dims count from the end: 5 is not 5 % rank
        raise ShapeError(
            f"{api}: dimensions {outside} are outside {t.name!r} {t.shape} (a tensor of "
            f"rank {t.rank} has dimensions 0..{t.rank - 1}, or -{t.rank}..-1 from the end)"
        )
    dims = sorted({d % t.rank for d in dims})
    keep = [d for d in range(t.rank) if d not in dims]
    out_shape = tuple(t.shape[d] for d in keep)
    n_out = int(np.prod(out_shape, dtype=np.int64))
    n_red = int(np.prod([t.shape[d] for d in dims], dtype=np.int64)) if dims else 1
    if n_red == 0:
        raise ShapeError(f"{api}: reducing {t.name!r} {t.shape} over {dims} reduces empty groups")
    with op_context(graph, api, debug_prefix, {"dims": dims, "op": op_name}) as debug_id:
        out = graph.add_variable(t.type, out_shape, debug_prefix or "reduced")
        graph.set_tile_mapping_array(out, linear_tile_array(n_out, graph.tile_range, grain_size=16))
        reduce_to(graph, t, keep, dims, out, op_name, scale, prog, debug_id)
    return out


def reduce_to(
    graph: Graph,
    t: Tensor,
    keep: list[int],
    dims: list[int],
    out: Tensor,
    op_name: str,
    scale: float,
    prog: SequenceProgram,
    debug_id: int,
) -> None:
    """Reduce ``t`` over ``dims`` into the existing, already mapped tensor ``out``."""
    n_out = out.num_elements
    grouped = t.dim_shuffle(keep + dims) if t.rank else t
    in_addr = grouped.flat_addr().reshape(n_out, -1)
    in_tiles = graph.pool(t.type).tiles.element_tiles(in_addr)
    _build(graph, t, out, in_addr, in_tiles, op_name, scale, prog, debug_id)


def _build(graph, t, out, in_addr, in_tiles, op_name, scale, prog, debug_id) -> None:  # noqa: ANN001
    n_out, n_red = in_addr.shape
    out_addr = out.flat_addr()
    # (output, tile) pairs: the partials of stage 1
    output_of = np.repeat(np.arange(n_out, dtype=np.int64), n_red)
    key = output_of * graph.target.num_tiles + in_tiles.reshape(-1)
    order = np.argsort(key, kind="stable")
    key_sorted = key[order]
    pair_start = np.flatnonzero(np.r_[True, key_sorted[1:] != key_sorted[:-1]])
    pair_key = key_sorted[pair_start]
    pair_output = pair_key // graph.target.num_tiles
    pair_tile = (pair_key % graph.target.num_tiles).astype(np.int32)
    pair_size = np.diff(np.r_[pair_start, key_sorted.size])
    codelet = reduce_codelet(op_name, t.type, out_type=out.type)
    if pair_key.size == n_out:
        # every output's inputs share a tile: reduce there, straight into the output
        cs = graph.add_compute_set("Reduce")
        _add_reduce_vertices(
            graph,
            cs,
            codelet,
            pair_tile,
            pair_size,
            in_addr.reshape(-1)[order],
            out_addr[pair_output],
            scale,
        )
        add_program(prog, Execute(cs), debug_id)
        return
    out_tiles = graph.tile_array(out)
    if pair_size.mean() < _MIN_PARTIALS_PER_TILE:
        # inputs scattered a few per tile: exchange them all to the output's tile
        cs = graph.add_compute_set("Reduce")
        sizes = np.full(n_out, n_red, dtype=np.int64)
        _add_reduce_vertices(
            graph, cs, codelet, out_tiles, sizes, in_addr.reshape(-1), out_addr, scale
        )
        add_program(prog, Execute(cs), debug_id)
        return
    partials = graph.add_variable(t.type, [pair_key.size], "partials")
    graph.set_tile_mapping_array(partials, pair_tile)
    partial_addr = partials.flat_addr()
    cs1 = graph.add_compute_set("Reduce/stage1")
    _add_reduce_vertices(
        graph,
        cs1,
        reduce_codelet(op_name, t.type),
        pair_tile,
        pair_size,
        in_addr.reshape(-1)[order],
        partial_addr,
        1.0,
    )
    add_program(prog, Execute(cs1), debug_id)
    # stage 2: the partials of each output, reduced on the output's tile
    counts = np.bincount(pair_output, minlength=n_out)
    codelet2 = reduce_codelet(
        "ADD" if op_name == "SQUARE_ADD" else op_name, t.type, out_type=out.type
    )
    cs2 = graph.add_compute_set("Reduce/stage2")
    _add_reduce_vertices(graph, cs2, codelet2, out_tiles, counts, partial_addr, out_addr, scale)
    add_program(prog, Execute(cs2), debug_id)


def _add_reduce_vertices(
    graph: Graph,
    cs: ComputeSet,
    codelet: type[Vertex],
    group_tile: np.ndarray,
    group_size: np.ndarray,
    in_addr: np.ndarray,
    out_addr: np.ndarray,
    scale: float,
) -> None:
    """One vertex per (tile, group size): outputs of a vertex reduce equal-sized groups."""
    n_groups = group_tile.size
    in_start = np.r_[0, np.cumsum(group_size)[:-1]].astype(np.int64)
    key = group_tile.astype(np.int64) * (int(group_size.max(initial=1)) + 1) + group_size
    order = np.argsort(key, kind="stable")
    k = key[order]
    vstart = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    v_groups = np.diff(np.r_[vstart, n_groups])
    v_size = group_size[order][vstart]
    # input element order: groups in vertex order, each group's elements in place
    g_in = in_start[order]
    g_len = group_size[order]
    idx = np.repeat(g_in, g_len) + (
        np.arange(int(g_len.sum())) - np.repeat(np.r_[0, np.cumsum(g_len)[:-1]], g_len)
    )
    in_edge = in_addr[idx]
    in_offsets = np.r_[0, np.cumsum(v_groups * v_size)].astype(np.int64)
    out_edge = out_addr[order]
    out_offsets = np.r_[0, np.cumsum(v_groups)].astype(np.int64)
    block = graph.add_vertex_block(
        cs,
        codelet,
        group_tile[order][vstart],
        {
            "in": EdgeColumn(in_edge, in_offsets).compressed(),
            "out": EdgeColumn(out_edge, out_offsets).compressed(),
        },
    )
    block.state["numPartials"][:] = v_size
    block.state["scale"][:] = scale


def reduce_partials(
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
    outputs, then the second, ...) instead of one address per element. ``out`` may be a
    view (a serial slice) and of another type than the partials (float partials of a half
    product), rounded as each sum is written.
    """
    depth, size = partials.shape[0], out.num_elements
    flat_tiles = out_tiles.reshape(-1)
    order = np.argsort(flat_tiles, kind="stable")
    tiles_sorted = flat_tiles[order]
    breaks = (np.diff(order) != 1) | (np.diff(tiles_sorted) != 0)
    span = out.pool_range()
    if span is None:  # a view (a serial slice): runs end where addresses jump
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
