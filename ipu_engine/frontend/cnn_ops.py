"""Traced convolution, transposed convolution and pooling of NHWC tensors (PopLibs' layout):
one node each, built by ``frontend/builder.py`` with ``poplin.convolution``,
``poplin.conv_transpose`` and ``popnn``'s pools.

Shapes are checked here, as the library computes them, so a mistake names the user's line.
"""

from __future__ import annotations

from typing import Any

from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.frontend.traced import TracedTensor, active_trace, as_node, user_line
from ipu_engine.poplin.transposed_conv import transposed_size

Pair = tuple[int, int]
Pads = tuple[Pair, Pair]  # ((top, bottom), (left, right))


def _out_size(
    size: int, kernel: int, stride: int, pads: Pair, dilation: int = 1, ceil_mode: bool = False
) -> int:
    span = size + pads[0] + pads[1] - dilation * (kernel - 1) - 1
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pads[0]:
        out -= 1  # as PyTorch and ONNX: no window may start in the end padding
    return out


def conv2d(
    x: Any,
    weights: Any,
    bias: Any = None,
    *,
    stride: Pair = (1, 1),
    padding: Pads = ((0, 0), (0, 0)),
    dilation: Pair = (1, 1),
    groups: int = 1,
) -> TracedTensor:
    """``x`` [N, H, W, C] convolved with ``weights`` [KH, KW, C/groups, F] (+ ``bias`` [F])."""
    trace = active_trace(x, weights, bias)
    nodes = [as_node(trace, v) for v in (x, weights, *(() if bias is None else (bias,)))]
    nx, nw = nodes[0], nodes[1]
    if len(nx.shape) != 4 or len(nw.shape) != 4 or nx.shape[3] != nw.shape[2] * groups:
        raise ShapeError(
            f"{user_line()}: cannot convolve {nx.describe()} (N,H,W,C) with {nw.describe()} "
            f"(KH,KW,C/groups,F) in {groups} group(s)"
        )
    if any(not n.type.is_float or n.type != nx.type for n in nodes):
        raise TypeMismatchError(
            f"{user_line()}: convolution needs float tensors of one type, got "
            f"{', '.join(n.describe() for n in nodes)}"
        )
    n, h, w, _ = nx.shape
    kh, kw, _, f = nw.shape
    oh = _out_size(h, kh, stride[0], padding[0], dilation[0])
    ow = _out_size(w, kw, stride[1], padding[1], dilation[1])
    if oh < 1 or ow < 1:
        raise ShapeError(f"{user_line()}: convolution of {nx.describe()} leaves no output")
    attrs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    node = trace.add("conv", tuple(nodes), (n, oh, ow, f), nx.type, attrs, "conv")
    return TracedTensor(trace, node)


def pool2d(
    kind: str,
    x: TracedTensor,
    kernel: Pair,
    *,
    stride: Pair,
    padding: Pads,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> TracedTensor:
    """Max (``kind`` "max") or mean ("avg") of each window of ``x`` [N, H, W, C]."""
    trace = active_trace(x)
    nx = as_node(trace, x)
    if len(nx.shape) != 4 or not nx.type.is_float:
        raise ShapeError(
            f"{user_line()}: pooling needs a float [N,H,W,C] tensor, not {nx.describe()}"
        )
    n, h, w, c = nx.shape
    oh = _out_size(h, kernel[0], stride[0], padding[0], ceil_mode=ceil_mode)
    ow = _out_size(w, kernel[1], stride[1], padding[1], ceil_mode=ceil_mode)
    if oh < 1 or ow < 1:
        raise ShapeError(f"{user_line()}: pooling {nx.describe()} by {kernel} leaves no output")
    attrs = {"kind": kind, "kernel": kernel, "stride": stride, "padding": padding,
             "ceil_mode": ceil_mode, "count_include_pad": count_include_pad}  # fmt: skip
    return TracedTensor(trace, trace.add("pool", (nx,), (n, oh, ow, c), nx.type, attrs, kind))


def global_avg_pool(x: TracedTensor) -> TracedTensor:
    """The mean over H and W of ``x`` [N, H, W, C], as [N, 1, 1, C]."""
    trace = active_trace(x)
    nx = as_node(trace, x)
    if len(nx.shape) != 4 or not nx.type.is_float:
        raise ShapeError(
            f"{user_line()}: global pooling needs a float [N,H,W,C], not {nx.describe()}"
        )
    shape = (nx.shape[0], 1, 1, nx.shape[3])
    return TracedTensor(trace, trace.add("global_avg_pool", (nx,), shape, nx.type, {}, "gap"))


def lrn(x: TracedTensor, size: int, *, alpha: float, beta: float, bias: float) -> TracedTensor:
    """Local response normalisation of ``x`` [N, H, W, C] across ``size`` channels."""
    trace = active_trace(x)
    nx = as_node(trace, x)
    if len(nx.shape) != 4 or not nx.type.is_float or size < 1:
        raise ShapeError(f"{user_line()}: LRN needs a float [N,H,W,C], not {nx.describe()}")
    attrs = {"size": int(size), "alpha": float(alpha), "beta": float(beta), "bias": float(bias)}
    return TracedTensor(trace, trace.add("lrn", (nx,), nx.shape, nx.type, attrs, "lrn"))


def conv_transpose2d(
    x: Any,
    weights: Any,
    bias: Any = None,
    *,
    stride: Pair = (1, 1),
    padding: Pads = ((0, 0), (0, 0)),
    output_padding: Pair = (0, 0),
    dilation: Pair = (1, 1),
    groups: int = 1,
) -> TracedTensor:
    """``x`` [N, H, W, C] transposed-convolved with ``weights`` [KH, KW, C/groups, F]
    (+ ``bias`` [F]): ONNX ConvTranspose, built with ``poplin.conv_transpose``."""
    trace = active_trace(x, weights, bias)
    nodes = [as_node(trace, v) for v in (x, weights, *(() if bias is None else (bias,)))]
    nx, nw = nodes[0], nodes[1]
    if len(nx.shape) != 4 or len(nw.shape) != 4 or nx.shape[3] != nw.shape[2] * groups:
        raise ShapeError(
            f"{user_line()}: cannot transpose-convolve {nx.describe()} (N,H,W,C) with "
            f"{nw.describe()} (KH,KW,C/groups,F) in {groups} group(s)"
        )
    if any(not n.type.is_float or n.type != nx.type for n in nodes):
        raise TypeMismatchError(
            f"{user_line()}: convolution needs float tensors of one type, got "
            f"{', '.join(n.describe() for n in nodes)}"
        )
    sizes = [
        transposed_size(size, k, s, p, d, e)
        for size, k, s, p, d, e in zip(
            nx.shape[1:3], nw.shape[:2], stride, padding, dilation, output_padding, strict=True
        )
    ]
    if min(sizes) < 1:
        raise ShapeError(
            f"{user_line()}: transposed convolution of {nx.describe()} leaves no output"
        )
    attrs = {"stride": stride, "padding": padding, "output_padding": output_padding,
             "dilation": dilation, "groups": groups}  # fmt: skip
    shape = (nx.shape[0], *sizes, nw.shape[3])
    return TracedTensor(trace, trace.add("conv_transpose", tuple(nodes), shape, nx.type, attrs))
