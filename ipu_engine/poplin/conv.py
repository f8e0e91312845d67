"""``poplin.convolution(graph, in, weights, prog)``: a planned 2-D convolution (NHWC input,
[KH, KW, C/groups, F] weights) as PopLibs builds it: an implicit GEMM split over tiles.

The plan (``conv_plan.plan_convolution``) cuts the groups, each image's output rows, and
each group's output and input channels into blocks, one ``ConvPartial`` vertex per block;
when the input channels are split, the partials are summed on the output's tiles as
``mat_mul`` does. Edges are runs of the input rows each vertex sees (its halo included),
of its weights and of its output block. Grouped and depthwise convolutions are one op: the
group is a dimension of the plan, not a loop of ops. A bias is added by the vertices that
compute the first input-channel block of each output. ``partialsType`` chooses what half
products accumulate in, and the partials' type, as for ``mat_mul``. When no parallel split
fits ``availableMemoryProportion``, the plan computes serial slices of each group's output
channels one after the other (the same channels of every group in one slice), each with
its own partials, live only until that slice is reduced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.codelets.conv import channel_major_variant, conv_partial
from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.common.types import Type
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Execute
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.poplar.vertices import EdgeColumn
from ipu_engine.poplin.conv_plan import ConvPlan, ConvShape, _pair, plan_convolution
from ipu_engine.poplin.matmul import _memory_proportion, partials_type
from ipu_engine.popops.reduce import reduce_partials, reduce_to
from ipu_engine.poputil.library_op import add_program, check_tensors, op_context

__all__ = ["ConvPlan", "ConvShape", "convolution", "plan_convolution"]

API = "poplin::convolution"


def _check(inp: Tensor, weights: Tensor, bias: Tensor | None, groups: int) -> None:
    if inp.rank != 4 or weights.rank != 4 or inp.shape[3] != weights.shape[2] * groups:
        raise ShapeError(
            f"{API}: cannot convolve {inp.name!r} {inp.shape} (N,H,W,C) with {weights.name!r} "
            f"{weights.shape} (KH,KW,C/groups,F) in {groups} group(s)"
        )
    if weights.shape[3] % groups:
        raise ShapeError(
            f"{API}: groups {groups} must divide the output channels of {weights.name!r} "
            f"{weights.shape}"
        )
    if inp.type != weights.type or inp.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(
            f"{API}: needs float or half tensors of one type, got {inp.type!r} and {weights.type!r}"
        )
    if bias is not None and bias.shape != (weights.shape[3],):
        raise ShapeError(
            f"{API}: bias {bias.name!r} {bias.shape} must be [F] = [{weights.shape[3]}], one per "
            f"output channel of {weights.name!r}"
        )
    if bias is not None and bias.type != inp.type:
        raise TypeMismatchError(f"{API}: bias {bias.name!r} is {bias.type!r}, not {inp.type!r}")


def convolution(
    graph: Graph,
    inp: Tensor,
    weights: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    stride: int | tuple[int, int] = 1,
    padding: int | tuple | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    groups: int = 1,
    dilation: int | tuple[int, int] = 1,
    bias: Tensor | None = None,
) -> Tensor:
    """Convolve ``inp`` [N, H, W, C] with ``weights`` [KH, KW, C/groups, F]: a new tensor
    [N, OH, OW, F] spread over the tiles. ``stride`` and ``dilation`` are an int or
    (h, w); ``padding`` is p, (ph, pw) or ((top, bottom), (left, right)) and defaults to
    "same" for odd kernels. Output channels split into ``groups`` groups, each seeing its
    C/groups input channels. ``bias`` [F] is added to the output."""
    check_tensors(graph, API, inp, weights, *([] if bias is None else [bias]))
    groups = integer_arg(groups, f"{API}: groups", ShapeError)
    if groups < 1:
        raise ShapeError(f"{API}: groups must be at least 1, got {groups}")
    _check(inp, weights, bias, groups)
    n, h, w, c = inp.shape
    kh, kw, _, f = weights.shape
    if padding is None:
        dh, dw = _pair(dilation, "dilation", 1)
        padding = ((dh * (kh - 1)) // 2, (dw * (kw - 1)) // 2)
    shape = ConvShape(n, h, w, c, f, kh, kw, stride, padding, dilation, groups)
    if shape.out_height < 1 or shape.out_width < 1:
        raise ShapeError(
            f"{API}: stride {shape.stride}, padding {shape.padding} and dilation "
            f"{shape.dilation} leave no output for {inp.name!r} {inp.shape} and "
            f"{weights.name!r} {weights.shape}"
        )
    proportion = _memory_proportion(options, API)
    partials = partials_type(options, inp.type, API)
    plan = plan_convolution(
        shape, inp.type.size, inp.type.name, len(graph.tile_range),
        graph.target.bytes_per_tile, proportion,
    )  # fmt: skip
    args = {
        "in": list(inp.shape), "weights": list(weights.shape), "stride": list(shape.stride),
        "padding": [list(p) for p in shape.padding], "dilation": list(shape.dilation),
        "groups": groups, "bias": bias is not None,
        "plan": [plan.group_blocks, plan.row_blocks, plan.out_chan_blocks, plan.in_chan_blocks],
        "partialsType": partials.name, "serialSplit": plan.serial,
        "availableMemoryProportion": proportion, "tempBytesPerTile": plan.temp_bytes,
    }  # fmt: skip
    with op_context(graph, API, debug_prefix, args) as debug_id:
        out = graph.add_variable(
            inp.type, [n, shape.out_height, shape.out_width, f], debug_prefix or "conv"
        )
        if plan.serial == 1:
            _build(graph, plan, shape, inp, weights, bias, out, prog, debug_id, partials)
            return out
        # serial slices of the output channels, one after the other: each slice's
        # received operands and partials are freed before the next
        for i, first in enumerate(range(0, shape.group_out_chans, plan.slice_chans)):
            last = min(first + plan.slice_chans, shape.group_out_chans)
            part = dataclasses.replace(shape, out_chans=groups * (last - first))
            w_part, b_part, out_part = _channel_slice(weights, bias, out, groups, first, last)
            name = f"Conv/Serial_{i}/Convolve"
            _build(graph, plan, part, inp, w_part, b_part, out_part, prog, debug_id, partials, name)
    return out


def _channel_slice(
    weights: Tensor, bias: Tensor | None, out: Tensor, groups: int, first: int, last: int
) -> tuple[Tensor, Tensor | None, Tensor]:
    """Views of the weights, bias and output of output channels ``first:last`` of every
    group: a grouped convolution of the same input and groups, fewer channels per group."""

    def part(t: Tensor) -> Tensor:
        *lead, f = t.shape
        grouped = t.reshape([*lead, groups, f // groups])[..., first:last]
        return grouped.reshape([*lead, groups * (last - first)])

    return part(weights), None if bias is None else part(bias), part(out)


def _bounds(size: int, block: int) -> np.ndarray:
    starts = np.arange(0, size, block, dtype=np.int64)
    return np.stack([starts, np.minimum(starts + block, size)], axis=1)


def _weight_blocks(
    weights: Tensor, c0: np.ndarray, c1: np.ndarray, f0: np.ndarray, f1: np.ndarray
) -> EdgeColumn:
    """Each vertex's weights ``[:, :, c0:c1, f0:f1]``, in bulk: one block of the weights'
    [KH*KW*C, F] rows per kernel position, the vertex's blocks joined into one edge."""
    kh, kw, c, f = weights.shape
    taps = kh * kw
    rows = np.arange(taps, dtype=np.int64) * c
    blocks = EdgeColumn.from_blocks(
        weights.reshape([taps * c, f]),
        (c0[:, None] + rows).reshape(-1), (c1[:, None] + rows).reshape(-1),
        np.repeat(f0, taps), np.repeat(f1, taps),
    )  # fmt: skip
    if blocks.runs is None:
        return EdgeColumn(blocks.addr, blocks.offsets[::taps])
    return EdgeColumn(
        None, blocks.offsets[::taps], runs=blocks.runs, run_offsets=blocks.run_offsets[::taps]
    )


def _map_output(
    graph: Graph, out: Tensor, rows: tuple, chans: tuple, tiles: np.ndarray, depth: int
) -> tuple[np.ndarray, bool]:
    """Each output block on the tiles of its partials, spread so that each reduces a
    share; returns the output's tile per element and whether partials are on distinct
    tiles."""
    m = out.num_elements // out.shape[3]
    out_tiles = np.zeros((m, out.shape[3]), dtype=np.int32)
    apart = True
    for i in range(0, tiles.size, depth):
        block_tiles = tiles[i : i + depth]
        # a set, not np.unique: a few tiles per block, tens of thousands of blocks
        apart &= len(set(block_tiles.tolist())) == block_tiles.size
        a, b, e, g = int(rows[0][i]), int(rows[1][i]), int(chans[0][i]), int(chans[1][i])
        size = (b - a) * (g - e)
        share = np.arange(size) * len(block_tiles) // size
        out_tiles[a:b, e:g] = block_tiles[share].reshape(b - a, g - e)
    graph.set_tile_mapping_array(out, out_tiles)
    return out_tiles, apart


def _build(
    graph: Graph,
    plan: ConvPlan,
    shape: ConvShape,
    inp: Tensor,
    weights: Tensor,
    bias: Tensor | None,
    out: Tensor,
    prog: SequenceProgram,
    debug_id: int,
    partials_type: Type,
    cs_name: str = "Conv/Convolve",
) -> None:
    """The vertices of ``plan`` for one serial slice (``shape`` its output channels)."""
    s = shape
    oh, ow = s.out_height, s.out_width
    (sh, sw), (dh, _), ((pt, _), (pl, _)) = s.stride, s.dilation, s.padding
    cg, fg = s.group_in_chans, s.group_out_chans
    grp, rows = _bounds(s.groups, plan.groups), _bounds(oh, plan.rows)
    fch, cch = _bounds(fg, plan.out_chans), _bounds(cg, plan.in_chans)
    grid = np.stack(
        np.meshgrid(
            np.arange(s.batch), np.arange(len(grp)), np.arange(len(rows)), np.arange(len(fch)),
            np.arange(len(cch)), indexing="ij",
        ),
        axis=-1,
    ).reshape(-1, 5)  # fmt: skip
    img, d = grid[:, 0], grid[:, 4]
    g0, g1 = grp[grid[:, 1], 0], grp[grid[:, 1], 1]
    r0, r1 = rows[grid[:, 2], 0], rows[grid[:, 2], 1]
    e0, e1 = fch[grid[:, 3], 0], fch[grid[:, 3], 1]
    c0, c1 = cch[d, 0], cch[d, 1]
    # a vertex's channels: whole groups side by side, or a part of one group
    ic0, ic1 = g0 * cg + c0, (g1 - 1) * cg + c1
    oc0, oc1 = g0 * fg + e0, (g1 - 1) * fg + e1
    count = grid.shape[0]
    tiles_avail = graph.tile_range
    tiles = (tiles_avail.start + np.arange(count) * len(tiles_avail) // count).astype(np.int32)
    # input rows each vertex sees: the kernel windows of its output rows, clipped
    first_in = r0 * sh - pt
    last_in = (r1 - 1) * sh - pt + s.field_h  # exclusive
    ih0 = np.clip(first_in, 0, s.height)
    ih1 = np.maximum(np.minimum(last_in, s.height), ih0)
    pixels = inp.reshape([s.batch * s.height * s.width, s.in_chans])
    m = s.batch * oh * ow
    out_r0, out_r1 = (img * oh + r0) * ow, (img * oh + r1) * ow
    split = len(cch) > 1
    out_tiles, apart = _map_output(graph, out, (out_r0, out_r1), (oc0, oc1), tiles, len(cch))
    if split:
        partials = graph.add_variable(partials_type, [len(cch), m, s.out_chans], "partials")
        target = partials.reshape([len(cch) * m, s.out_chans])
        out_col = EdgeColumn.from_blocks(target, d * m + out_r0, d * m + out_r1, oc0, oc1)
        runs, run_edge = out_col.edge_runs()
        graph.map_runs(partials, [runs], [0], run_tiles=tiles[run_edge])
        out_first = d * m
    else:
        target, out_first = out.reshape([m, s.out_chans]), np.zeros_like(d)

    # an input whose channels are outer in memory (NCHW seen as NHWC) is read channel by
    # channel: the same elements as runs of pixels instead of one address each
    by_channel = pixels.row_starts() is None and pixels.transpose().row_starts() is not None

    def columns(v: np.ndarray) -> dict[str, EdgeColumn]:
        """The edges of vertices ``v``: input rows with their halo, weights, output block."""
        in_rows = (img[v] * s.height + ih0[v]) * s.width, (img[v] * s.height + ih1[v]) * s.width
        first = out_first[v]
        if by_channel:
            in_col = EdgeColumn.from_blocks(pixels.transpose(), ic0[v], ic1[v], *in_rows)
        else:
            in_col = EdgeColumn.from_blocks(pixels, *in_rows, ic0[v], ic1[v])
        return {
            "in": in_col,
            "weights": _weight_blocks(weights, c0[v], c1[v], oc0[v], oc1[v]),
            "out": EdgeColumn.from_blocks(
                target, first + out_r0[v], first + out_r1[v], oc0[v], oc1[v]
            ),
        }

    state = {
        "outRows": r1 - r0, "inRows": ih1 - ih0, "padTop": np.maximum(ih0 - first_in, 0),
        "width": s.width, "outWidth": ow, "groups": g1 - g0, "inChans": c1 - c0,
        "outChans": e1 - e0, "kernelH": s.kernel_h, "kernelW": s.kernel_w,
        "strideH": sh, "strideW": sw, "dilationH": dh, "dilationW": s.dilation[1],
        "padLeft": pl,
    }  # fmt: skip
    cs = graph.add_compute_set(cs_name)
    out_type = partials_type if split else out.type
    # the bias goes into the first input-channel block's partial of each output
    with_bias = np.zeros(count, dtype=bool) if bias is None else d == 0
    for biased in (False, True):
        v = np.flatnonzero(with_bias == biased)
        if v.size == 0:
            continue
        edges = columns(v)
        if biased:
            ones = np.ones_like(v)
            edges["bias"] = EdgeColumn.from_blocks(
                bias.reshape([1, s.out_chans]), ones - 1, ones, oc0[v], oc1[v]
            )
        codelet = conv_partial(inp.type, partials_type, out_type, with_bias=biased)
        if by_channel:
            codelet = channel_major_variant(codelet)
        block = graph.add_vertex_block(cs, codelet, tiles[v], edges)
        for name, values in state.items():
            block.state[name][:] = np.broadcast_to(values, (count,))[v].astype(np.uint32)
    add_program(prog, Execute(cs), debug_id)
    if split and apart:
        reduce_partials(graph, partials, out, out_tiles, prog, debug_id)
    elif split:
        flat_out = out.reshape([m, s.out_chans])
        reduce_to(graph, partials, [1, 2], [0], flat_out, "ADD", 1.0, prog, debug_id)
