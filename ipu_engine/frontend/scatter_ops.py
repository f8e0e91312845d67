"""Traced scatters: ONNX ScatterND and ScatterElements as one node each, built by
``frontend/builder.py`` with ``popops.scatter_nd`` / ``popops.scatter_elements``
(PopLibs' ``multiUpdate`` family). Called with numpy arrays only, they compute the same
thing with numpy, so an importer folds constants on the host with the same call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.frontend.traced import TracedTensor, active_trace, as_node, user_line

#: reduction -> the numpy ufunc combining repeated updates in index order (None: replace)
REDUCTIONS = {"none": None, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _check_reduction(reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ShapeError(
            f"{user_line()}: scatter reduction must be one of {sorted(REDUCTIONS)}, got "
            f"{reduction!r}"
        )


def _host_places(indices: np.ndarray, size: int) -> np.ndarray:
    index = np.asarray(indices).astype(np.int64)
    if np.any((index < -size) | (index >= size)):
        bad = index[(index < -size) | (index >= size)][0]
        raise ShapeError(
            f"{user_line()}: scatter index {int(bad)} is out of range for a dimension of "
            f"{size} (valid: {-size} to {size - 1})"
        )
    return np.where(index < 0, index + size, index)


def _apply(out: np.ndarray, key: tuple, values: np.ndarray, reduction: str) -> np.ndarray:
    ufunc = REDUCTIONS[reduction]
    if ufunc is None:
        out[key] = values
    else:
        ufunc.at(out, key, values)
    return out


def scatter_nd(data: Any, indices: Any, updates: Any, reduction: str = "none") -> Any:
    """``data`` with ``data[tuple(indices[i])]`` replaced by (or combined with) ``updates[i]``."""
    _check_reduction(reduction)
    traced = any(isinstance(v, TracedTensor) for v in (data, indices, updates))
    shapes = [
        tuple(np.shape(v)) if not isinstance(v, TracedTensor) else v.shape
        for v in (data, indices, updates)
    ]
    dshape, ishape, ushape = shapes
    depth = ishape[-1] if ishape else -1
    if not 0 <= depth <= len(dshape) or ushape != (*ishape[:-1], *dshape[depth:]):
        raise ShapeError(
            f"{user_line()}: ScatterND of data {dshape} with indices {ishape} needs indices "
            f"[..., k] (k <= {len(dshape)}) and updates indices.shape[:-1] + data.shape[k:]; "
            f"got updates {ushape}"
        )
    if not traced:
        out = np.array(data, copy=True)
        index = np.asarray(indices).reshape(-1, depth)
        places = [_host_places(index[:, k], dshape[k]) for k in range(depth)]
        values = np.asarray(updates).reshape(index.shape[0], *dshape[depth:])
        return _apply(out, tuple(places), values.astype(out.dtype), reduction)
    return _node("scatter_nd", data, indices, updates, {"reduction": reduction})


def scatter_elements(
    data: Any, indices: Any, updates: Any, axis: int, reduction: str = "none"
) -> Any:
    """``data`` with each element of ``updates`` at its own position but along ``axis``,
    where ``indices`` names the place."""
    _check_reduction(reduction)
    traced = any(isinstance(v, TracedTensor) for v in (data, indices, updates))
    dshape = data.shape if isinstance(data, TracedTensor) else np.shape(data)
    ishape = indices.shape if isinstance(indices, TracedTensor) else np.shape(indices)
    ushape = updates.shape if isinstance(updates, TracedTensor) else np.shape(updates)
    rank = len(dshape)
    if not -rank <= axis < rank:
        raise ShapeError(f"{user_line()}: ScatterElements axis {axis} of data {dshape}")
    axis %= rank
    if (
        ishape != ushape
        or len(ishape) != rank
        or any(i > d for a, (i, d) in enumerate(zip(ishape, dshape, strict=True)) if a != axis)
    ):
        raise ShapeError(
            f"{user_line()}: ScatterElements of data {dshape} needs indices and updates of "
            f"one shape, its rank and no larger but along axis {axis}; got {ishape} and {ushape}"
        )
    if not traced:
        out = np.array(data, copy=True)
        key = list(np.indices(ishape))
        key[axis] = _host_places(indices, dshape[axis])
        values = np.asarray(updates).astype(out.dtype)
        return _apply(out, tuple(k.reshape(-1) for k in key), values.reshape(-1), reduction)
    return _node("scatter_elements", data, indices, updates, {"axis": axis, "reduction": reduction})


def _node(op: str, data: Any, indices: Any, updates: Any, attrs: dict) -> TracedTensor:
    trace = active_trace(data, indices, updates)
    like = data.dtype if isinstance(data, TracedTensor) else None
    nd = as_node(trace, data, like)
    nu = as_node(trace, updates, nd.type)
    host_index = not isinstance(indices, TracedTensor)
    ni = as_node(trace, np.asarray(indices).astype(np.int32) if host_index else indices)
    if ni.type.is_float:
        raise TypeMismatchError(f"{user_line()}: scatter indices {ni.describe()} must be integers")
    if nu.type != nd.type:
        raise TypeMismatchError(
            f"{user_line()}: scatter updates {nu.describe()} and data {nd.describe()} differ in "
            "type; cast first"
        )
    return TracedTensor(trace, trace.add(op, (nd, ni, nu), nd.shape, nd.type, attrs, op))
