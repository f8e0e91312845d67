"""``poplin.conv_transpose``: a transposed convolution (ONNX ConvTranspose, a deconvolution),
as PopLibs computes one -- ``poplin::convolution`` with the input dilated by the stride and
the kernel flipped -- without multiplying the zeros the dilation inserts.

Each output position along a dimension of stride ``s`` takes the kernel taps of one phase
(``o + pad`` modulo ``s``); a phase is an ordinary convolution of the undilated input with
its taps, flipped, at stride 1. So the op is one ``poplin.convolution`` per phase (``sh x
sw`` of them; a stride-2 decoder layer is four quarter-size convolutions), whose outputs
interleave into the result as a view. A phase without taps (a kernel smaller than the
stride) is the bias alone, a view of it. Groups, dilations, padding (negative too) and
output padding keep their ONNX meaning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.common.arguments import integer_arg, integers_arg, pair_arg, sequence_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor, concat
from ipu_engine.poplin.conv import convolution
from ipu_engine.poputil.library_op import broadcast_to, check_tensors, op_context

API = "poplin::convolution (transposed)"
Pair = tuple[int, int]


def transposed_size(
    size: int, kernel: int, stride: int, pads: Pair, dilation: int, output_padding: int
) -> int:
    """ONNX ConvTranspose's output length along one dimension."""
    return stride * (size - 1) + output_padding + (kernel - 1) * dilation + 1 - sum(pads)


def _phase(
    size: int, kernel: int, stride: int, dilation: int, begin: int, out: int, phase: int
) -> tuple[slice, int, Pair, int, int] | None:
    """One phase of one dimension as an ordinary convolution: (the kernel taps, as a
    slice, the dilation between them, the (begin, end) padding of the input -- negative
    crops it -- and the count of outputs), or None when no tap and input meet it.
    Every phase computes the same outputs q = floor(begin / s) ... so they interleave."""
    first_q = begin // stride
    count = (begin + out - 1) // stride - first_q + 1
    taps = [k for k in range(kernel) if (k * dilation - phase) % stride == 0]
    if not taps:
        return None
    step = stride // math.gcd(stride, dilation)
    gap = dilation // math.gcd(stride, dilation)
    shift = (taps[0] * dilation - phase) // stride  # input offset of the first tap
    span = (len(taps) - 1) * gap
    pad_begin = shift + span - first_q
    pad_end = count - size - pad_begin + span
    if size - max(0, -pad_begin) - max(0, -pad_end) < 1:
        return None  # every tap of this phase falls outside the input
    return slice(taps[0], taps[-1] + 1, step), gap, (pad_begin, pad_end), count, first_q


def conv_transpose(
    graph: Graph,
    inp: Tensor,
    weights: Tensor,
    prog: SequenceProgram,
    debug_prefix: str = "",
    stride: int | Pair = 1,
    padding: int | tuple = 0,
    options: Mapping[str, Any] | None = None,
    *,
    output_padding: int | Pair = 0,
    dilation: int | Pair = 1,
    groups: int = 1,
    bias: Tensor | None = None,
) -> Tensor:
    """``inp`` [N, H, W, C] transposed-convolved with ``weights`` [KH, KW, C/groups, F]
    (input channel c of a group feeds output channel f through ``weights[kh, kw, c, f]``):
    output position ``i * stride + k * dilation - pad_begin`` gets ``inp[i] * w[k]``.
    ``padding`` ((top, bottom), (left, right)) crops the output (negative: extends it),
    ``output_padding`` adds rows and columns at its end; ``bias`` [F] is added."""
    check_tensors(graph, API, inp, weights, *([] if bias is None else [bias]))
    groups = integer_arg(groups, f"{API}: groups", ShapeError)
    if (
        inp.rank != 4
        or weights.rank != 4
        or groups < 1
        or inp.shape[3] != weights.shape[2] * groups
    ):
        raise ShapeError(
            f"{API}: cannot transpose-convolve {inp.name!r} {inp.shape} (N,H,W,C) "
            f"with {weights.name!r} {weights.shape} (KH,KW,C/groups,F) in {groups} "
            "group(s)"
        )
    if inp.type != weights.type or inp.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(
            f"{API}: needs float or half tensors of one type, got {inp.type!r} and {weights.type!r}"
        )
    strides = pair_arg(stride, f"{API}: stride", 1, ShapeError)
    dilations = pair_arg(dilation, f"{API}: dilation", 1, ShapeError)
    extra = pair_arg(output_padding, f"{API}: output_padding", 0, ShapeError)
    pads = _padding(padding)
    n, h, w, _ = inp.shape
    kh, kw, _, f = weights.shape
    out = [
        transposed_size(size, k, s, p, d, e)
        for size, k, s, p, d, e in zip(
            (h, w), (kh, kw), strides, pads, dilations, extra, strict=True
        )
    ]
    if min(out) < 1:
        raise ShapeError(
            f"{API}: stride {strides}, padding {pads} and output padding {extra} "
            f"leave no output for {inp.name!r} {inp.shape}"
        )
    args = {
        "in": list(inp.shape),
        "weights": list(weights.shape),
        "stride": list(strides),
        "padding": [list(p) for p in pads],
        "dilation": list(dilations),
        "outputPadding": list(extra),
        "groups": groups,
        "bias": bias is not None,
        "phases": strides[0] * strides[1],
    }
    with op_context(graph, API, debug_prefix, args):
        rows = [
            _phase(h, kh, strides[0], dilations[0], pads[0][0], out[0], p)
            for p in range(strides[0])
        ]
        cols = [
            _phase(w, kw, strides[1], dilations[1], pads[1][0], out[1], p)
            for p in range(strides[1])
        ]
        counts = (
            _count(h, strides[0], pads[0][0], out[0]),
            _count(w, strides[1], pads[1][0], out[1]),
        )
        grid = []
        for i, row in enumerate(rows):
            line = []
            for j, col in enumerate(cols):
                name = f"phase{i}_{j}"
                phase = _phase_output(
                    graph, inp, weights, (row, col), counts, f, bias, prog, name, options, groups
                )
                line.append(phase.reshape([n, counts[0], 1, counts[1], 1, f]))
            grid.append(concat(line, 4))
        joined = concat(grid, 2).reshape([n, counts[0] * strides[0], counts[1] * strides[1], f])
        top = pads[0][0] - (pads[0][0] // strides[0]) * strides[0]
        left = pads[1][0] - (pads[1][0] // strides[1]) * strides[1]
        return joined[:, top : top + out[0], left : left + out[1], :]


def _padding(value: Any) -> list[Pair]:
    """p, (ph, pw) or ((top, bottom), (left, right)), as the last form; negative crops."""
    what = f"{API}: padding"
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return [(int(value), int(value))] * 2
    parts = sequence_arg(value, f"{what} (p, (ph, pw) or ((top, bottom), (left, right)))",
                         ShapeError)  # fmt: skip
    if len(parts) != 2:
        raise ShapeError(f"{what} must have a part for the height and one for the width")
    pads = []
    for part in parts:
        if isinstance(part, int | np.integer) and not isinstance(part, bool | np.bool_):
            pads.append((int(part), int(part)))
            continue
        ends = integers_arg(part, what, ShapeError)
        if len(ends) != 2:
            raise ShapeError(f"{what}: each dimension's padding is p or (begin, end)")
        pads.append((ends[0], ends[1]))
    return pads


def _count(size: int, stride: int, begin: int, out: int) -> int:
    return (begin + out - 1) // stride - begin // stride + 1


def _phase_output(
    graph: Graph,
    inp: Tensor,
    weights: Tensor,
    phase: tuple,
    counts: Pair,
    chans: int,
    bias: Tensor | None,
    prog: SequenceProgram,
    name: str,
    options: Mapping[str, Any] | None,
    groups: int,
) -> Tensor:
    """One phase's outputs [N, Qh, Qw, F]: an ordinary convolution, or the bias alone."""
    row, col = phase
    n = inp.shape[0]
    if row is None or col is None:
        if bias is not None:
            return broadcast_to(bias, (n, counts[0], counts[1], chans))
        zero = graph.add_constant(inp.type, [1], 0.0, f"{name}/zero")
        graph.set_tile_mapping(zero, graph.tile_range.start)
        return broadcast_to(zero, (n, counts[0], counts[1], chans))
    (taps_h, gap_h, (pt, pb), _, _), (taps_w, gap_w, (pl, pr), _, _) = row, col
    kernel = weights[taps_h, taps_w].reverse(0).reverse(1)
    h, w = inp.shape[1:3]
    cropped = inp[:, max(0, -pt) : h - max(0, -pb), max(0, -pl) : w - max(0, -pr), :]
    padding = ((max(pt, 0), max(pb, 0)), (max(pl, 0), max(pr, 0)))
    return convolution(
        graph,
        cropped,
        kernel,
        prog,
        name,
        1,
        padding,
        options,
        groups=groups,
        dilation=(gap_h, gap_w),
        bias=bias,
    )
