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


@lowering("Gemm", since=6)
def gemm(ctx: NodeContext, a: Any, b: Any, c: Any = None) -> Any:
    """``alpha * A' @ B' + beta * C``, A' and B' transposed as asked (views)."""
    if ctx.attr("transA", 0):
        a = np.transpose(a) if not traced(a) else a.T
    if ctx.attr("transB", 0):
        b = np.transpose(b) if not traced(b) else b.T
    out = mat_mul(ctx, a, b)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    if alpha != 1.0:
        out = np.multiply(out, np.float32(alpha))
    if c is not None and beta != 0.0:
        if beta != 1.0:
            c = np.multiply(c, np.float32(beta))
        out = np.add(out, c)
    return out
