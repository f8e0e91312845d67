"""Traced resampling along one dimension: each output row a weighted sum of input rows
(taps) plus a fill, the step a resize is made of, built by ``frontend/builder.py`` with
``popops.resample``. With a numpy array it computes the same with numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.common.errors import ShapeError
from ipu_engine.frontend.traced import TracedTensor, user_line


def resample(x: Any, axis: int, rows: np.ndarray, weights: np.ndarray, fill: Any = None) -> Any:
    """Row ``j`` along ``axis``: ``sum_k weights[j, k] * x[rows[j, k]] + fill[j]``."""
    rows = np.asarray(rows, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    shape = x.shape if isinstance(x, TracedTensor) else np.shape(x)
    axis %= max(len(shape), 1)
    fill = np.zeros(rows.shape[0]) if fill is None else np.asarray(fill, dtype=np.float64)
    if rows.ndim != 2 or weights.shape != rows.shape or fill.shape != rows.shape[:1]:
        raise ShapeError(
            f"{user_line()}: resample rows {rows.shape}, weights {weights.shape} "
            f"and fill {fill.shape} do not fit together"
        )
    if not isinstance(x, TracedTensor):
        array = np.asarray(x)
        picked = np.take(array.astype(np.float64), rows, axis=axis)  # [..., J, taps, ...]
        expand = (1,) * axis + rows.shape + (1,) * (array.ndim - axis - 1)
        out = (picked * weights.reshape(expand)).sum(axis=axis + 1)
        out += fill.reshape((1,) * axis + (-1,) + (1,) * (array.ndim - axis - 1))
        return (
            out.astype(array.dtype) if array.dtype.kind == "f" else np.rint(out).astype(array.dtype)
        )
    out_shape = (*shape[:axis], rows.shape[0], *shape[axis + 1 :])
    attrs = {"axis": axis, "rows": rows, "weights": weights, "fill": fill}
    return x._new("resample", (x.node,), out_shape, x.dtype, attrs)
