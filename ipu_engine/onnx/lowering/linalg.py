"""MatMul (numpy's batch broadcasting) and Gemm, onto poplin's matrix products."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.frontend.array_ops import matmul
from ipu_engine.onnx.lowering.common import common_type, to_type, traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering


@lowering("MatMul", since=6)
def mat_mul(ctx: NodeContext, a: Any, b: Any) -> Any:
    if traced(a, b):
        a, b = to_type((a, b), common_type((a, b)))
        if not common_type((a, b)).is_float:
            raise ctx.error("integer matrix products are not supported on the IPU")
    return matmul(a, b)


@lowering("Gemm", since=6, host_weights=True)
def gemm(ctx: NodeContext, a: Any, b: Any, c: Any = None) -> Any:
    """``alpha * A' @ B' + beta * C``, A' and B' transposed as asked. A weight is transposed
    on the host (a view of the model's array) before it becomes the device's variable, so
    the product's right operand is a whole [K, N] variable laid out for its plan, as PopART
    creates it, not a transposed view of one."""
    if traced(a, b):
        a, b = _operand(ctx, 0, a, "transA"), _operand(ctx, 1, b, "transB")
    else:
        a = np.transpose(a) if ctx.attr("transA", 0) else a
        b = np.transpose(b) if ctx.attr("transB", 0) else b
    out = mat_mul(ctx, a, b)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    if alpha != 1.0:
        out = np.multiply(out, np.float32(alpha))
    if c is not None and beta != 0.0:
        if traced(out):
            c = ctx.weight(ctx.node.input[2], c)
        if beta != 1.0:
            c = np.multiply(c, np.float32(beta))
        out = np.add(out, c)
    return out


def _operand(ctx: NodeContext, index: int, value: Any, transposed: str) -> Any:
    """Input ``index`` transposed when the attribute ``transposed`` asks: a traced one as a
    view; a host one on the host, then made a weight (the model's array seen transposed,
    written to the device once)."""
    flip = bool(ctx.attr(transposed, 0))
    if traced(value):
        return value.T if flip else value
    return ctx.weight(ctx.node.input[index], np.transpose(value) if flip else value)
