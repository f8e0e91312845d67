"""ScatterND, ScatterElements and the older Scatter: the front end's scatters (PopLibs'
``multiUpdate`` family on the IPU; numpy when every input is known on the host). Indices
known on the host are checked here, so a bad one names the node before anything runs."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.frontend.scatter_ops import scatter_elements, scatter_nd
from ipu_engine.onnx.lowering.common import traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering


def _reduction(ctx: NodeContext) -> str:
    reduction = ctx.attr("reduction", "none")
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise ctx.unsupported("reduction", reduction)
    return reduction


def _checked(ctx: NodeContext, indices: Any, sizes: list[int]) -> Any:
    """Host indices as int32 after checking each part against its dimension's size."""
    if traced(indices):
        return indices
    index = np.asarray(indices).astype(np.int64)
    size = np.asarray(sizes, dtype=np.int64).reshape((1,) * (index.ndim - 1) + (-1,))
    bad = (index < -size) | (index >= size)
    if bad.any():
        raise ctx.error(
            f"index {int(index[bad][0])} is out of range for a dimension of "
            f"{int(np.broadcast_to(size, index.shape)[bad][0])}"
        )
    return index.astype(np.int32)


@lowering("ScatterND", since=11)
def scatter_nd_(ctx: NodeContext, data: Any, indices: Any, updates: Any) -> Any:
    depth = indices.shape[-1] if len(indices.shape) else 0
    index = _checked(ctx, indices, list(data.shape[:depth]) or [1])
    out = scatter_nd(data, index, updates, _reduction(ctx))
    return out if traced(out) else np.asarray(out)


@lowering("ScatterElements", "Scatter", since=9)
def scatter_elements_(ctx: NodeContext, data: Any, indices: Any, updates: Any) -> Any:
    axis = int(ctx.attr("axis", 0)) % max(len(data.shape), 1)
    index = _checked(ctx, np.expand_dims(indices, -1) if not traced(indices) else indices,
                     [data.shape[axis]])  # fmt: skip
    if not traced(index):
        index = index[..., 0]
    out = scatter_elements(data, index, updates, axis, _reduction(ctx))
    return out if traced(out) else np.asarray(out)
