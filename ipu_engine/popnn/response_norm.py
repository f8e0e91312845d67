"""``popnn.lrn``: Local Response Normalization across channels (ONNX LRN, AlexNet), on
NHWC tensors. It composes from existing ops, as PopLibs has no LRN: the squares, a 1x1
``poplin.convolution`` by a constant band matrix (each output channel sums the squares
of the ``size`` channels around it) and one fused ``popops.map``."""

from __future__ import annotations

import numpy as np

from ipu_engine import poplin, popops, poputil
from ipu_engine.common.arguments import integer_arg, number_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.poplar.graph import Graph
from ipu_engine.poplar.program import Sequence as SequenceProgram
from ipu_engine.poplar.tensor import Tensor
from ipu_engine.popops.expr import _1, _2
from ipu_engine.poputil.library_op import check_tensors, op_context


def channel_window(channels: int, size: int) -> np.ndarray:
    """[C, C] band: ``band[i, c]`` is 1 when channel i is in output channel c's window,
    i in [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] (ONNX's definition)."""
    offset = np.arange(channels)[:, None] - np.arange(channels)[None, :]
    return ((offset >= -((size - 1) // 2)) & (offset <= size // 2)).astype(np.float32)


def lrn(
    graph: Graph,
    t: Tensor,
    size: int,
    prog: SequenceProgram,
    debug_prefix: str = "",
    *,
    alpha: float = 1e-4,
    beta: float = 0.75,
    bias: float = 1.0,
) -> Tensor:
    """``t / (bias + alpha / size * sum of squares over the channel window) ** beta`` for
    ``t`` [N, H, W, C] (ONNX LRN's defaults)."""
    api = "popnn::lrn"
    check_tensors(graph, api, t)
    size = integer_arg(size, f"{api}: size", ShapeError)
    alpha, beta, bias = (
        number_arg(v, f"{api}: {k}", ShapeError)
        for k, v in (("alpha", alpha), ("beta", beta), ("bias", bias))
    )
    if t.rank != 4 or size < 1:
        raise ShapeError(f"{api}: needs an [N, H, W, C] tensor and size >= 1; got {t.name!r} "
                         f"{t.shape} and size {size}")  # fmt: skip
    if t.type.numpy_dtype.kind != "f":
        raise TypeMismatchError(f"{api}: needs float or half, {t.name!r} is {t.type!r}")
    channels = t.shape[3]
    args = {"in": list(t.shape), "size": size, "alpha": alpha, "beta": beta, "bias": bias}
    with op_context(graph, api, debug_prefix, args):
        squares = popops.square(graph, t, prog, "squares")
        band = channel_window(channels, size).reshape(1, 1, channels, channels)
        window = graph.add_constant(t.type, band.shape, band, "channel_window")
        poputil.map_tensor_linearly(graph, window)
        sums = poplin.convolution(graph, squares, window, prog, "window_sums", padding=0)
        expr = _1 / (bias + alpha / size * _2) ** beta
        return popops.map(graph, expr, [t, sums], prog, debug_prefix or "lrn")
