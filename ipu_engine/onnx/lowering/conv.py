"""Conv, pools and LRN: ONNX's NCHW tensors seen as NHWC views (no copies) for poplin's
convolution and popnn's pools; 1-D ones as images one row high; weights laid out
[KH, KW, C/groups, F] on the host before they become variables.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.frontend.cnn_ops import conv2d, conv_transpose2d, global_avg_pool, lrn, pool2d
from ipu_engine.onnx.lowering.common import traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering

Pads = tuple[tuple[int, int], tuple[int, int]]


def _spatial(ctx: NodeContext, x: Any) -> int:
    rank = len(x.shape) - 2
    if rank not in (1, 2):
        raise ctx.error(f"only 1-D and 2-D {ctx.op_type} are supported, got {rank}-D input")
    if not traced(x):
        raise ctx.error("its input must be computed on the IPU (constant folding is not done)")
    return rank


def _as_nhwc(x: Any, rank: int) -> Any:
    if rank == 1:
        x = x.reshape(x.shape[0], x.shape[1], 1, x.shape[2])
    return x.transpose((0, 2, 3, 1))


def _as_nchw(y: Any, rank: int) -> Any:
    y = y.transpose((0, 3, 1, 2))
    return y.reshape(y.shape[0], y.shape[1], y.shape[3]) if rank == 1 else y


def _two(values: list[int], rank: int, fill: int) -> tuple[int, int]:
    """A per-dimension attribute as (height, width); 1-D ones are one row high."""
    return (fill, int(values[0])) if rank == 1 else (int(values[0]), int(values[1]))


def _pads(
    ctx: NodeContext,
    sizes: tuple[int, ...],
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
) -> Pads:
    """((top, bottom), (left, right)) from ``pads`` or ``auto_pad``."""
    rank = len(sizes)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", "VALID"):
        pads = (
            [int(p) for p in ctx.attr("pads", [0] * 2 * rank)]
            if auto == "NOTSET"
            else [0] * 2 * rank
        )
        begin, end = pads[:rank], pads[rank:]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
            total = max(0, (-(-size // s) - 1) * s + (k - 1) * d + 1 - size)
            small, large = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else large)
            end.append(large if auto == "SAME_UPPER" else small)
    else:
        raise ctx.unsupported("auto_pad", auto)
    if rank == 1:
        return (0, 0), (begin[0], end[0])
    return (begin[0], end[0]), (begin[1], end[1])


@lowering("Conv", since=1, host_weights=True)
def conv(ctx: NodeContext, x: Any, w: Any, b: Any = None) -> Any:
    rank = _spatial(ctx, x)
    kernel = list(ctx.attr("kernel_shape", w.shape[2:]))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    pads = _pads(ctx, tuple(x.shape[2:]), kernel, strides, dilations)
    if rank == 1:
        w = w.reshape(w.shape[0], w.shape[1], 1, w.shape[2])
    # [F, C/g, KH, KW] -> [KH, KW, C/g, F]
    if traced(w):
        w = w.transpose((2, 3, 1, 0))
    else:
        # a view of the model's array: written to the device as it is read, never copied
        w = ctx.weight(ctx.node.input[1], np.transpose(w, (2, 3, 1, 0)))
    if b is not None:
        b = ctx.weight(ctx.node.input[2], b)
    y = conv2d(
        _as_nhwc(x, rank), w, b, stride=_two(strides, rank, 1), padding=pads,
        dilation=_two(dilations, rank, 1), groups=int(ctx.attr("group", 1)),
    )  # fmt: skip
    return _as_nchw(y, rank)


@lowering("MaxPool", "AveragePool", since=1)
def pool(ctx: NodeContext, x: Any) -> Any:
    rank = _spatial(ctx, x)
    if len([o for o in ctx.node.output if o]) > 1:
        raise ctx.error("the Indices output of MaxPool is not supported")
    if ctx.attr("storage_order", 0):
        raise ctx.unsupported("storage_order", ctx.attr("storage_order"))
    kernel = list(ctx.attr("kernel_shape"))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    if any(d != 1 for d in dilations):
        raise ctx.unsupported("dilations", dilations)
    pads = _pads(ctx, tuple(x.shape[2:]), kernel, strides, dilations)
    y = pool2d(
        "max" if ctx.op_type == "MaxPool" else "avg", _as_nhwc(x, rank), _two(kernel, rank, 1),
        stride=_two(strides, rank, 1), padding=pads, ceil_mode=bool(ctx.attr("ceil_mode", 0)),
        count_include_pad=bool(ctx.attr("count_include_pad", 0)),
    )  # fmt: skip
    return _as_nchw(y, rank)


@lowering("GlobalAveragePool", "GlobalMaxPool", since=1)
def global_pool(ctx: NodeContext, x: Any) -> Any:
    axes = tuple(range(2, len(x.shape)))
    if ctx.op_type == "GlobalMaxPool" or not traced(x) or len(axes) != 2:
        method = "max" if ctx.op_type == "GlobalMaxPool" else "mean"
        return getattr(x, method)(axis=axes, keepdims=True)
    return _as_nchw(global_avg_pool(_as_nhwc(x, 2)), 2)


@lowering("LRN", since=1)
def local_response_norm(ctx: NodeContext, x: Any) -> Any:
    """popnn's LRN across channels on the NHWC view (2-D images; others one row high)."""
    if not traced(x):
        raise ctx.error("its input must be computed on the IPU (constant folding is not done)")
    shape = x.shape
    image = x.reshape(shape[0], shape[1], 1, -1) if len(shape) != 4 else x
    y = lrn(
        _as_nhwc(image, 2), int(ctx.attr("size")), alpha=float(ctx.attr("alpha", 1e-4)),
        beta=float(ctx.attr("beta", 0.75)), bias=float(ctx.attr("bias", 1.0)),
    )  # fmt: skip
    return _as_nchw(y, 2).reshape(shape)


def _transposed_pads(
    ctx: NodeContext,
    sizes: tuple[int, ...],
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    extra: list[int],
) -> list:
    """[(begin, end)] per dimension: from ``output_shape`` or ``auto_pad`` SAME_* (which
    ask for an output size; SAME_* for input x stride) as ONNX defines them, else ``pads``."""
    rank = len(sizes)
    auto = ctx.attr("auto_pad", "NOTSET")
    wanted = ctx.attr("output_shape")
    if auto not in ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ctx.unsupported("auto_pad", auto)
    if wanted is None and auto in ("SAME_UPPER", "SAME_LOWER"):
        wanted = [size * s for size, s in zip(sizes, strides, strict=True)]
    if wanted is not None:
        wanted = [int(v) for v in wanted][-rank:]
        pads = []
        for size, k, s, d, e, o in zip(
            sizes, kernel, strides, dilations, extra, wanted, strict=True
        ):
            total = s * (size - 1) + e + (k - 1) * d + 1 - o
            small, large = total // 2, total - total // 2
            pads.append((small, large) if auto == "SAME_UPPER" else (large, small))
        return pads
    if auto == "VALID":
        return [(0, 0)] * rank
    given = [int(p) for p in ctx.attr("pads", [0] * 2 * rank)]
    return list(zip(given[:rank], given[rank:], strict=True))


@lowering("ConvTranspose", since=1, host_weights=True)
def conv_transpose(ctx: NodeContext, x: Any, w: Any, b: Any = None) -> Any:
    """poplin's transposed convolution on the NHWC view; ONNX's [C, F/g, KH, KW] weights laid
    out [KH, KW, C/g, F] (a view of the model's array)."""
    rank = _spatial(ctx, x)
    groups = int(ctx.attr("group", 1))
    kernel = list(ctx.attr("kernel_shape", w.shape[2:]))
    strides = list(ctx.attr("strides", [1] * rank))
    dilations = list(ctx.attr("dilations", [1] * rank))
    extra = list(ctx.attr("output_padding", [0] * rank))
    pads = _transposed_pads(ctx, tuple(x.shape[2:]), kernel, strides, dilations, extra)
    if rank == 1:
        w = w.reshape(*w.shape[:2], 1, w.shape[2])
        pads = [(0, 0), *pads]
    c, fg, kh, kw = w.shape
    if c % groups:
        raise ctx.error(f"group={groups} does not divide the {c} input channels of its weights")
    # [C, F/g, KH, KW] = [g, C/g, F/g, KH, KW] -> [KH, KW, C/g, g, F/g] -> [KH, KW, C/g, F]
    laid_out = w.reshape(groups, c // groups, fg, kh, kw).transpose((3, 4, 1, 0, 2))
    laid_out = laid_out.reshape(kh, kw, c // groups, groups * fg)
    if not traced(w):
        laid_out = ctx.weight(ctx.node.input[1], np.ascontiguousarray(laid_out))
    if b is not None:
        b = ctx.weight(ctx.node.input[2], b)
    y = conv_transpose2d(
        _as_nhwc(x, rank),
        laid_out,
        b,
        stride=_two(strides, rank, 1),
        padding=(pads[0], pads[1]),
        output_padding=_two(extra, rank, 0),
        dilation=_two(dilations, rank, 1),
        groups=groups,
    )
    return _as_nchw(y, rank)
