"""``poplin.convolution(graph, in, weights, prog)``: a planned 2-D convolution (NHWC input,
[KH, KW, C, F] weights) as PopLibs builds it: an implicit GEMM split over tiles.

The plan (``plan_convolution``) cuts each image's output rows, the output channels and
the input channels into blocks, one ``ConvPartial`` vertex per tile; when the input
channels are split, the partials are summed on the output's tiles as ``mat_mul`` does.
Edges are runs of the input rows each vertex sees (its halo included), of its weights
and of its output block. ``partialsType`` chooses what half products accumulate in, as
for ``mat_mul``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_engine.arguments import instance_arg, integer_arg, name_arg, number_arg
from ipu_engine.codelets.conv import conv_partial
from ipu_engine.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.graph import Graph
from ipu_engine.libcommon import add_program, check_tensors, op_context
from ipu_engine.model import constants as C  # noqa: N812 - reads like a formula
from ipu_engine.poplin.matmul import _memory_proportion, _reduce_partials, partials_type
from ipu_engine.poplin.planner import _counts, _splits, choose_serial_plan
from ipu_engine.popops.reduce import reduce_to
from ipu_engine.program import Execute
from ipu_engine.program import Sequence as SequenceProgram
from ipu_engine.tensor import Tensor
from ipu_engine.vertices import EdgeColumn

log = logging.getLogger("poplibs.poplin")


@dataclass(frozen=True)
class ConvPlan:
    row_blocks: int  # per image
    out_chan_blocks: int
    in_chan_blocks: int
    rows: int  # output rows per block
    out_chans: int  # output channels per block
    in_chans: int  # input channels per block
    cycles: float
    temp_bytes: int  # per tile, for one serial slice (the slices reuse it)
    fits_budget: bool
    serial: int = 1  # slices of the output channels computed one after the other
    slice_chans: int = 0  # output channels per serial slice (the last may have fewer)


@dataclass(frozen=True)
class ConvShape:
    batch: int
    height: int
    width: int
    in_chans: int
    out_chans: int
    kernel_h: int
    kernel_w: int
    stride: int
    padding: int

    @property
    def out_height(self) -> int:
        return (self.height + 2 * self.padding - self.kernel_h) // self.stride + 1

    @property
    def out_width(self) -> int:
        return (self.width + 2 * self.padding - self.kernel_w) // self.stride + 1


def _slice_plans(
    s: ConvShape, elem_size: int, dtype_name: str, num_tiles: int
) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Every parallel split of one slice of output channels: (its blocks, cycles, temporary
    bytes per tile -- the input rows and weights it receives, and its float partials)."""
    oh, ow = s.out_height, s.out_width
    sr, sf, sc = np.meshgrid(
        _splits(oh, num_tiles), _splits(s.out_chans, num_tiles), _splits(s.in_chans, num_tiles),
        indexing="ij",
    )  # fmt: skip
    sr, sf, sc = sr.reshape(-1), sf.reshape(-1), sc.reshape(-1)
    ok = s.batch * sr * sf * sc <= num_tiles
    if not ok.any():
        ok = (sr == 1) & (sf == 1) & (sc == 1)
    sr, sf, sc = sr[ok], sf[ok], sc[ok]
    br, bf, bc = -(-oh // sr), -(-s.out_chans // sf), -(-s.in_chans // sc)
    in_rows = np.minimum((br - 1) * s.stride + s.kernel_h, s.height)
    macs_per_cycle = C.MACS_PER_CYCLE.get(dtype_name, C.MACS_PER_CYCLE["float"])
    macs = br * ow * bf * s.kernel_h * s.kernel_w * bc
    compute = macs / macs_per_cycle + C.SUPERVISOR_OVERHEAD_CYCLES
    operand_bytes = (in_rows * s.width * bc + s.kernel_h * s.kernel_w * bc * bf) * elem_size
    exchange = operand_bytes / C.EXCHANGE_BYTES_PER_CYCLE + C.EXCHANGE_LATENCY_CYCLES
    out_elems = br * ow * bf
    reduction = np.where(
        sc > 1,
        out_elems * 4 / C.EXCHANGE_BYTES_PER_CYCLE + out_elems * 0.5 + C.SYNC_CYCLES,
        0,
    )
    split = {
        "row_blocks": sr, "out_chan_blocks": sf, "in_chan_blocks": sc,
        "rows": br, "out_chans": bf, "in_chans": bc,
    }  # fmt: skip
    return split, compute + exchange + reduction, operand_bytes + out_elems * 4


def plan_convolution(
    shape: ConvShape,
    elem_size: int,
    dtype_name: str,
    num_tiles: int,
    bytes_per_tile: int,
    available_memory_proportion: float = 0.6,
) -> ConvPlan:
    """The split with the fewest estimated cycles whose operands and partials per tile fit
    ``available_memory_proportion`` of a tile (else the smallest), as poplin plans: when
    no parallel split fits, the output channels are computed in serial slices."""
    shape = instance_arg(shape, ConvShape, "plan_convolution: the shape", GraphError)
    elem_size, num_tiles, bytes_per_tile = _counts(
        "plan_convolution", elem_size=elem_size, num_tiles=num_tiles, bytes_per_tile=bytes_per_tile
    )
    name_arg(dtype_name, "plan_convolution: dtype_name")
    available_memory_proportion = number_arg(
        available_memory_proportion, "plan_convolution: available_memory_proportion"
    )
    budget = available_memory_proportion * bytes_per_tile

    def candidates(chans: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
        return _slice_plans(
            dataclasses.replace(shape, out_chans=chans), elem_size, dtype_name, num_tiles
        )

    choice = choose_serial_plan(shape.out_chans, candidates, budget)
    if not choice.fits_budget:
        log.warning(
            "convolution %s: no plan keeps to the memory budget of %.0f bytes per tile "
            "(availableMemoryProportion %.2f), even in %d serial slices; using the smallest, "
            "%d bytes",
            shape, budget, available_memory_proportion, choice.serial, choice.temp_bytes,
        )  # fmt: skip
    return ConvPlan(
        **choice.split,
        cycles=choice.cycles,
        temp_bytes=choice.temp_bytes,
        fits_budget=choice.fits_budget,
        serial=choice.serial,
        slice_chans=choice.slice_size,
    )


def convolution(
    graph: Graph,
    inp: Tensor,
    weights: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    stride: int = 1,
    padding: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> Tensor:
    """Convolve ``inp`` [N, H, W, C] with ``weights`` [KH, KW, C, F]: a new tensor
    [N, OH, OW, F] spread over the tiles. ``padding`` defaults to "same" for odd kernels."""
    api = "poplin::convolution"
    check_tensors(graph, api, inp, weights)
    if inp.rank != 4 or weights.rank != 4 or inp.shape[3] != weights.shape[2]:
        raise ShapeError(
            f"{api}: cannot convolve {inp.name!r} {inp.shape} (N,H,W,C) with {weights.name!r} "
            f"{weights.shape} (KH,KW,C,F)"
        )
    if inp.type != weights.type or inp.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(
            f"{api}: needs float or half tensors of one type, got {inp.type!r} and {weights.type!r}"
        )
    n, h, w, c = inp.shape
    kh, kw, _, f = weights.shape
    pad = (kh - 1) // 2 if padding is None else integer_arg(padding, f"{api}: padding")
    stride = integer_arg(stride, f"{api}: stride")
    shape = ConvShape(n, h, w, c, f, kh, kw, stride, pad)
    if stride < 1 or shape.out_height < 1 or shape.out_width < 1:
        raise ShapeError(f"{api}: stride {stride} and padding {pad} leave no output for {shape}")
    proportion = _memory_proportion(options, api)
    plan = plan_convolution(
        shape, inp.type.size, inp.type.name, len(graph.tile_range),
        graph.target.bytes_per_tile, proportion,
    )  # fmt: skip
    args = {"in": list(inp.shape), "weights": list(weights.shape), "stride": stride, "padding": pad}
    args["plan"] = [plan.row_blocks, plan.out_chan_blocks, plan.in_chan_blocks]
    partials = partials_type(options, inp.type)
    args["partialsType"] = partials.name
    args |= {"serialSplit": plan.serial, "availableMemoryProportion": proportion}
    args["tempBytesPerTile"] = plan.temp_bytes
    with op_context(graph, api, debug_prefix, args) as debug_id:
        out = graph.add_variable(
            inp.type, [n, shape.out_height, shape.out_width, f], debug_prefix or "conv"
        )
        # serial slices of the output channels, one after the other: each slice's
        # received operands and partials are freed before the next
        for i, first in enumerate(range(0, f, plan.slice_chans)):
            last = min(first + plan.slice_chans, f)
            part = dataclasses.replace(shape, out_chans=last - first)
            name = "Conv/Convolve" if plan.serial == 1 else f"Conv/Serial_{i}/Convolve"
            w_part, out_part = weights[:, :, :, first:last], out[:, :, :, first:last]
            _build(graph, plan, part, inp, w_part, out_part, prog, debug_id, partials, name)
    return out


def _bounds(size: int, block: int) -> np.ndarray:
    starts = np.arange(0, size, block, dtype=np.int64)
    return np.stack([starts, np.minimum(starts + block, size)], axis=1)


def _build(graph, plan, shape, inp, weights, out, prog, debug_id, partials_type, cs_name) -> None:  # noqa: ANN001
    s = shape
    oh, ow = s.out_height, s.out_width
    rows, fch, cch = (
        _bounds(oh, plan.rows),
        _bounds(s.out_chans, plan.out_chans),
        _bounds(s.in_chans, plan.in_chans),
    )
    grid = np.stack(
        np.meshgrid(
            np.arange(s.batch), np.arange(len(rows)), np.arange(len(fch)), np.arange(len(cch)),
            indexing="ij",
        ),
        axis=-1,
    ).reshape(-1, 4)  # fmt: skip
    img, d = grid[:, 0], grid[:, 3]
    r0, r1 = rows[grid[:, 1], 0], rows[grid[:, 1], 1]
    f0, f1 = fch[grid[:, 2], 0], fch[grid[:, 2], 1]
    c0, c1 = cch[d, 0], cch[d, 1]
    count = grid.shape[0]
    tiles_avail = graph.tile_range
    tiles = (tiles_avail.start + np.arange(count) * len(tiles_avail) // count).astype(np.int32)
    # input rows each vertex sees: the kernel windows of its output rows, clipped
    first_in = r0 * s.stride - s.padding
    last_in = (r1 - 1) * s.stride - s.padding + s.kernel_h  # exclusive
    ih0, ih1 = np.maximum(first_in, 0), np.minimum(last_in, s.height)
    pad_top = ih0 - first_in
    pixels = inp.reshape([s.batch * s.height * s.width, s.in_chans])
    in_col = EdgeColumn.from_blocks(
        pixels, (img * s.height + ih0) * s.width, (img * s.height + ih1) * s.width, c0, c1
    )
    weights_col = EdgeColumn.from_parts(
        [weights.addr[:, :, a:b, e:g] for a, b, e, g in zip(c0, c1, f0, f1, strict=True)]
    )
    m = s.batch * oh * ow
    out_r0, out_r1 = (img * oh + r0) * ow, (img * oh + r1) * ow
    split = len(cch) > 1
    out_tiles = np.zeros((m, s.out_chans), dtype=np.int32)
    apart = True
    for i in range(0, count, len(cch)):
        block_tiles = tiles[i : i + len(cch)]
        apart &= np.unique(block_tiles).size == block_tiles.size
        a, b, e, g = int(out_r0[i]), int(out_r1[i]), int(f0[i]), int(f1[i])
        size = (b - a) * (g - e)
        share = np.arange(size) * len(block_tiles) // size
        out_tiles[a:b, e:g] = block_tiles[share].reshape(b - a, g - e)
    graph.set_tile_mapping_array(out, out_tiles)
    if split:
        partials = graph.add_variable(partials_type, [len(cch), m, s.out_chans], "partials")
        as_rows = partials.reshape([len(cch) * m, s.out_chans])
        out_col = EdgeColumn.from_blocks(as_rows, d * m + out_r0, d * m + out_r1, f0, f1)
        runs, run_edge = out_col.edge_runs()
        graph.map_runs(partials, [runs], [0], run_tiles=tiles[run_edge])
    else:
        out_col = EdgeColumn.from_blocks(out.reshape([m, s.out_chans]), out_r0, out_r1, f0, f1)
    cs = graph.add_compute_set(cs_name)
    block = graph.add_vertex_block(
        cs,
        conv_partial(inp.type, partials_type, partials_type if split else out.type),
        tiles,
        {"in": in_col, "weights": weights_col, "out": out_col},
    )
    state = {
        "outRows": r1 - r0, "inRows": ih1 - ih0, "padTop": pad_top, "width": s.width,
        "outWidth": ow, "inChans": c1 - c0, "outChans": f1 - f0, "kernelH": s.kernel_h,
        "kernelW": s.kernel_w, "stride": s.stride, "padding": s.padding,
    }  # fmt: skip
    for name, values in state.items():
        block.state[name][:] = np.broadcast_to(values, (count,)).astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
    if split and apart:
        _reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif split:
        flat_out = out.reshape([m, s.out_chans])
        reduce_to(graph, partials, [1, 2], [0], flat_out, "ADD", 1.0, prog, debug_id)
