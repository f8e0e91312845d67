"""``popops.resample(graph, t, axis, rows, weights, prog, fill=)``: each output row along
``axis`` a weighted sum of input rows -- one dimension of a nearest, linear or cubic resize
(ONNX Resize, as PopART builds it from slices and scaled adds), with the taps and weights
worked out on the host from the resize's geometry.

The dimension is moved first (a view) and the output cut into blocks of rows and of the
other elements (columns), one ``Resample`` vertex per block, spread over the tiles; each
reads the input rows its taps span. The taps and weights are constants mapped with the
vertices that read them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.codelets.resample import resample as resample_codelet
from ipu_engine.common.arguments import integer_arg, kind_error
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.common.types import UNSIGNED_INT
from ipu_engine.poplar.cost_model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context
from ipu_engine.poputil.splits import split_counts

API = "popops::resample"


def _plan(
    spans: np.ndarray,
    out_rows: int,
    columns: int,
    taps: int,
    elem: int,
    tiles: int,
    bytes_per_tile: int,
) -> tuple[int, int]:
    """Rows and columns per block: fewest estimated cycles (the taps' multiply-adds and the
    input rows received) with each vertex's operands in 60% of a tile."""
    sr, sc = (
        g.reshape(-1)
        for g in np.meshgrid(split_counts(out_rows, tiles), split_counts(columns, tiles))
    )
    ok = sr * sc <= tiles
    sr, sc = sr[ok], sc[ok]
    br, bc = -(-out_rows // sr), -(-columns // sc)
    # input rows a block of br output rows spans, at most (the widest such window)
    cum = np.concatenate(([0], np.cumsum(spans)))
    widest = np.array(
        [int((cum[b:] - cum[:-b]).max()) if b <= out_rows else int(cum[-1]) for b in br.tolist()]
    )
    read = np.minimum(widest, int(spans.sum())) * bc
    cycles = br * bc * (taps + 1) * 0.5 + read * elem / C.EXCHANGE_BYTES_PER_CYCLE
    memory = (read + br * bc + br * (2 * taps + 1)) * elem
    fits = memory <= 0.6 * bytes_per_tile
    pool = fits if fits.any() else np.ones(fits.shape, dtype=bool)
    best = int(np.flatnonzero(pool)[np.argmin((cycles if fits.any() else memory)[pool])])
    return int(br[best]), int(bc[best])


def _host_table(value: Any, what: str) -> np.ndarray:
    """Finite numbers known on the host (a list or numpy array), as float64."""
    if isinstance(value, str | bytes | Tensor) or value is None:
        raise ShapeError(kind_error(what, "numbers known on the host", value))
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ShapeError(kind_error(what, "numbers known on the host", value)) from None
    if not np.all(np.isfinite(array)):
        raise ShapeError(f"{what} must be finite numbers")
    return array


def resample(
    graph: Graph,
    t: Tensor,
    axis: int,
    rows: Any,
    weights: Any,
    prog: SequenceProgram,
    debug_prefix: str = "",
    fill: Any = None,
) -> Tensor:
    """A new tensor whose row ``j`` along ``axis`` is ``sum_k weights[j, k] *
    t[rows[j, k]] + fill[j]``: ``rows`` [J, taps] input rows and ``weights`` [J, taps] on
    the host; ``fill`` [J] defaults to 0. A block of output rows reads the input rows
    between its taps' least and greatest: resizes' taps move along with the output."""
    check_tensors(graph, API, t)
    axis = integer_arg(axis, f"{API}: axis", ShapeError)
    if not -t.rank <= axis < t.rank:
        raise ShapeError(f"{API}: axis {axis} is outside {t.name!r} {t.shape}")
    axis %= t.rank
    table = _host_table(rows, f"{API}: rows")
    if np.any(table != np.round(table)) or np.any(np.abs(table) > 2**62):
        raise ShapeError(f"{API}: rows must be whole numbers (input rows)")
    taps = table.astype(np.int64)
    coeffs = _host_table(weights, f"{API}: weights")
    size = t.shape[axis]
    if taps.ndim != 2 or coeffs.shape != taps.shape or taps.shape[1] < 1:
        raise ShapeError(
            f"{API}: rows and weights must be one [J, taps] shape, got "
            f"{taps.shape} and {coeffs.shape}"
        )
    if taps.size and (taps.min() < 0 or taps.max() >= size):
        raise ShapeError(f"{API}: rows must lie in 0..{size - 1} of {t.name!r} {t.shape}")
    out_rows, count = taps.shape
    fills = np.zeros(out_rows) if fill is None else _host_table(fill, f"{API}: fill")
    if fills.shape not in ((), (out_rows,)):
        raise ShapeError(f"{API}: fill must be one number or one per output row ({out_rows})")
    fills = np.broadcast_to(fills, (out_rows,))
    kind = t.type.numpy_dtype.kind
    if kind not in "fiu" or (kind != "f" and np.any(coeffs != np.round(coeffs))):
        raise TypeMismatchError(
            f"{API}: {t.name!r} is {t.type!r}: integer rows take whole weights only (nearest)"
        )
    columns = int(np.prod([d for i, d in enumerate(t.shape) if i != axis], dtype=np.int64))
    spans = taps.max(axis=1) + 1 - taps.min(axis=1)
    block_rows, block_cols = _plan(
        spans,
        out_rows,
        max(columns, 1),
        count,
        t.type.size,
        len(graph.tile_range),
        graph.target.bytes_per_tile,
    )
    args = {
        "in": list(t.shape),
        "axis": axis,
        "outRows": out_rows,
        "taps": count,
        "plan": [-(-out_rows // block_rows), -(-max(columns, 1) // block_cols)],
    }
    order = [axis, *(i for i in range(t.rank) if i != axis)]
    shape = [out_rows, *(d for i, d in enumerate(t.shape) if i != axis)]
    with op_context(graph, API, debug_prefix, args) as debug_id:
        out = graph.add_variable(t.type, shape, debug_prefix or "resample")
        if out_rows and columns:
            source = t.dim_shuffle(order).reshape([size, columns])
            table = (taps, coeffs, fills)
            _build(
                graph,
                source,
                out.reshape([out_rows, columns]),
                table,
                (block_rows, block_cols),
                prog,
                debug_id,
            )
        else:
            graph.set_tile_mapping(out, graph.tile_range.start)
        return out.dim_shuffle(list(np.argsort(order)))


def _build(
    graph: Graph,
    source: Tensor,
    out: Tensor,
    table: tuple,
    block: tuple[int, int],
    prog: SequenceProgram,
    debug_id: int,
) -> None:
    taps, coeffs, fills = table
    out_rows, columns = out.shape
    count = taps.shape[1]
    r0, c0 = (
        g.reshape(-1)
        for g in np.meshgrid(
            np.arange(0, out_rows, block[0]), np.arange(0, columns, block[1]), indexing="ij"
        )
    )
    r1, c1 = np.minimum(r0 + block[0], out_rows), np.minimum(c0 + block[1], columns)
    starts = np.arange(0, out_rows, block[0])
    low = np.minimum.reduceat(taps.min(axis=1), starts)  # each row block's input rows
    high = np.maximum.reduceat(taps.max(axis=1) + 1, starts)
    in0, in1 = low[r0 // block[0]], high[r0 // block[0]]
    vertices = r0.size
    avail = graph.tile_range
    tiles = (avail.start + np.arange(vertices) * len(avail) // vertices).astype(np.int32)
    out_tiles = np.zeros(out.shape, dtype=np.int32)
    row_tiles = np.zeros(out_rows, dtype=np.int32)
    for v in range(vertices):  # each output block on its vertex's tile
        out_tiles[r0[v] : r1[v], c0[v] : c1[v]] = tiles[v]
        if c0[v] == 0:
            row_tiles[r0[v] : r1[v]] = tiles[v]
    graph.set_tile_mapping_array(out, out_tiles)
    # each output row's taps counted from its block's first input row
    block_low = low[np.arange(out_rows) // block[0]]
    local = graph.add_constant(UNSIGNED_INT, [out_rows, count], taps - block_low[:, None], "rows")
    weights = graph.add_constant(out.type, [out_rows, count], coeffs.astype(np.float64), "weights")
    fill = graph.add_constant(out.type, [out_rows, 1], fills.reshape(-1, 1), "fill")
    for constant in (local, weights, fill):
        graph.set_tile_mapping_array(constant, np.repeat(row_tiles, constant.shape[1]))
    zero = np.zeros_like(r0)
    edges = {
        "in": EdgeColumn.from_blocks(source, in0, in1, c0, c1),
        "rows": EdgeColumn.from_blocks(local, r0, r1, zero, zero + count),
        "weights": EdgeColumn.from_blocks(weights, r0, r1, zero, zero + count),
        "fill": EdgeColumn.from_blocks(fill, r0, r1, zero, zero + 1),
        "out": EdgeColumn.from_blocks(out, r0, r1, c0, c1),
    }
    cs = graph.add_compute_set("Resample")
    vertex_block = graph.add_vertex_block(cs, resample_codelet(out.type), tiles, edges)
    state = {"outRows": r1 - r0, "inRows": in1 - in0, "columns": c1 - c0, "taps": count}
    for name, values in state.items():
        vertex_block.state[name][:] = np.broadcast_to(values, (vertices,)).astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
