"""Traced ops beyond the Python operators that imported models need: element-wise expressions
over several tensors (one fused ``popops::map``), joins, broadcasts and batched products.

Each records one node in the current trace (``frontend/builder.py`` builds it); called with
only numpy arrays they compute the same thing with numpy, so one model-lowering code path
folds constants on the host and records device ops for traced values.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ipu_engine.common.arguments import integer_arg
from ipu_engine.common.errors import ShapeError, TypeMismatchError
from ipu_engine.common.types import Type
from ipu_engine.frontend.ops import matmul as matmul_2d
from ipu_engine.frontend.traced import (
    TracedTensor,
    active_trace,
    as_node,
    element_type_of,
    user_line,
)
from ipu_engine.popops import expr as pe


def _traced(values: Sequence[Any]) -> bool:
    return any(isinstance(v, TracedTensor) for v in values)


def map_expr(expression: pe.Expr, *values: Any) -> Any:
    """``expression`` (over placeholders ``_1``.. for ``values``) element-wise, with numpy
    broadcasting, as one ``popops::map``; numpy values alone evaluate on the host. Every
    traced operand must share one element type (cast first); the result has that type."""
    if not _traced(values):
        arrays = [np.asarray(v) for v in values]
        dtype = np.result_type(*arrays)
        return np.asarray(expression.evaluate([a.astype(dtype) for a in arrays], dtype))
    if expression.bool_result():
        raise TypeMismatchError(
            f"{user_line()}: {expression.text()} gives booleans, which traced code has not; "
            "wrap it in select(1, 0, ...)"
        )
    trace = active_trace(*values)
    like = next(v.dtype for v in values if isinstance(v, TracedTensor))
    nodes = []
    for v in values:
        node = as_node(trace, v, like)
        if node.type != like and node.op == "const":  # a numpy array of the other kind
            node = as_node(trace, np.asarray(v).astype(like.numpy_dtype), like)
        nodes.append(node)
    if any(n.type != like for n in nodes):
        listed = ", ".join(n.describe() for n in nodes)
        raise TypeMismatchError(
            f"{user_line()}: {expression.text()} of {listed}: element types differ; cast first"
        )
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(*(n.shape for n in nodes)))
    except ValueError:
        listed = ", ".join(n.describe() for n in nodes)
        raise ShapeError(f"{user_line()}: {expression.text()}: cannot broadcast {listed}") from None
    attrs = {"expr": expression}
    return TracedTensor(trace, trace.add("map", tuple(nodes), shape, like, attrs, "map"))


def concatenate(values: Sequence[Any], axis: int) -> Any:
    """numpy's ``concatenate``; traced, a view joining the parts (no copy)."""
    if not _traced(values):
        return np.concatenate([np.asarray(v) for v in values], axis=axis)
    trace = active_trace(*values)
    like = next(v.dtype for v in values if isinstance(v, TracedTensor))
    nodes = tuple(as_node(trace, v, like) for v in values)
    if any(n.type != like for n in nodes):
        raise TypeMismatchError(
            f"{user_line()}: cannot join {', '.join(n.describe() for n in nodes)}: element "
            "types differ"
        )
    axis = integer_arg(axis, f"{user_line()}: concatenate: the axis", ShapeError)
    rank = len(nodes[0].shape)
    if rank == 0 or not -rank <= axis < rank:
        raise ShapeError(f"{user_line()}: cannot join {nodes[0].describe()} along axis {axis}")
    axis %= rank
    try:
        shape = np.concatenate([np.empty(n.shape, np.bool_) for n in nodes], axis=axis).shape
    except ValueError:
        listed = ", ".join(n.describe() for n in nodes)
        raise ShapeError(f"{user_line()}: cannot join {listed} along axis {axis}") from None
    node = trace.add("concat", nodes, shape, like, {"axis": axis}, "concat")
    return TracedTensor(trace, node)


def broadcast_to(value: Any, shape: Sequence[int]) -> Any:
    """numpy's ``broadcast_to``; traced, a view repeating the elements (no copy)."""
    shape = tuple(int(d) for d in shape)
    if not isinstance(value, TracedTensor):
        return np.broadcast_to(np.asarray(value), shape)
    try:
        np.broadcast_shapes(value.shape, shape)
        np.broadcast_to(np.empty(value.shape, np.bool_), shape)
    except ValueError:
        raise ShapeError(
            f"{user_line()}: cannot broadcast {value.node.describe()} to {shape}"
        ) from None
    if shape == value.shape:
        return value
    return value._new("broadcast", (value.node,), shape, value.dtype, {"shape": shape})


def matmul(a: Any, b: Any) -> Any:
    """numpy's ``matmul`` with batch dimensions broadcast: ``[..., M, K] @ [..., K, N]``.
    A batch of products is one ``poplin`` product per matrix pair; a 2-D right-hand side
    (a layer's weight) is one product over all the rows."""
    if not _traced((a, b)):
        return np.matmul(np.asarray(a), np.asarray(b))
    trace = active_trace(a, b)
    ta = a if isinstance(a, TracedTensor) else TracedTensor(trace, as_node(trace, a))
    tb = b if isinstance(b, TracedTensor) else TracedTensor(trace, as_node(trace, b))
    if ta.ndim <= 2 and tb.ndim <= 2:
        return matmul_2d(ta, tb)
    if tb.ndim <= 2:  # rows of every batch times one matrix
        rows = ta.reshape(-1, ta.shape[-1])
        out = matmul_2d(rows, tb)
        return out.reshape(*ta.shape[:-1], *out.shape[1:])
    if ta.ndim == 1:
        return matmul(ta.reshape(1, -1), tb).reshape(*tb.shape[:-2], tb.shape[-1])
    if ta.shape[-1] != tb.shape[-2]:
        raise ShapeError(
            f"{user_line()}: cannot multiply {ta.node.describe()} by {tb.node.describe()} "
            f"(inner dimensions {ta.shape[-1]} and {tb.shape[-2]} differ)"
        )
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(ta.shape[:-2], tb.shape[:-2]))
    except ValueError:
        raise ShapeError(
            f"{user_line()}: cannot multiply {ta.node.describe()} by {tb.node.describe()}: "
            "batch dimensions do not broadcast"
        ) from None
    if ta.dtype != tb.dtype or not ta.dtype.is_float:
        raise TypeMismatchError(
            f"{user_line()}: cannot multiply {ta.node.describe()} by {tb.node.describe()}: "
            "needs float tensors of one type"
        )
    shape = (*batch, ta.shape[-2], tb.shape[-1])
    return ta._new("matmul_batched", (ta.node, tb.node), shape, ta.dtype)


def take(data: Any, indices: Any, axis: int) -> Any:
    """numpy's ``take`` along ``axis`` (negative indices count back); with traced indices,
    one ``popops::gather`` of the rows they name at run time."""
    if not _traced((data, indices)):
        return np.take(np.asarray(data), np.asarray(indices), axis=axis)
    trace = active_trace(data, indices)
    nd = as_node(trace, data)
    ni = as_node(
        trace, np.asarray(indices).astype(np.int32) if not _traced((indices,)) else indices
    )
    if ni.type.is_float:
        raise TypeMismatchError(f"{user_line()}: gather indices {ni.describe()} must be integers")
    axis = integer_arg(axis, f"{user_line()}: take: the axis", ShapeError)
    rank = len(nd.shape)
    if not -rank <= axis < rank:
        raise ShapeError(f"{user_line()}: gather along axis {axis} of {nd.describe()}")
    axis %= rank
    shape = (*nd.shape[:axis], *ni.shape, *nd.shape[axis + 1 :])
    node = trace.add("gather", (nd, ni), shape, nd.type, {"axis": axis}, "gather")
    return TracedTensor(trace, node)


def where(cond: Any, a: Any, b: Any) -> Any:
    """numpy's ``where``; traced, one ``popops::select`` (a non-zero integer condition picks
    ``a``). A float condition is cast to int first; ``a`` and ``b`` share one type."""
    if not _traced((cond, a, b)):
        return np.where(np.asarray(cond), np.asarray(a), np.asarray(b))
    trace = active_trace(cond, a, b)
    like = next(v.dtype for v in (a, b) if isinstance(v, TracedTensor)) if _traced((a, b)) else None
    if like is None:  # only the condition is traced: the values' own type
        like = element_type_of(np.result_type(np.asarray(a), np.asarray(b)))
    na, nb = (as_node(trace, cast(v, like), like) for v in (a, b))
    nc = as_node(trace, cond if _traced((cond,)) else np.asarray(cond).astype(np.int32))
    if nc.type.is_float:
        nc = as_node(trace, TracedTensor(trace, nc).astype(np.int32))
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(nc.shape, na.shape, nb.shape))
    except ValueError:
        listed = ", ".join(n.describe() for n in (nc, na, nb))
        raise ShapeError(f"{user_line()}: where: cannot broadcast {listed}") from None
    return TracedTensor(trace, trace.add("select", (nc, na, nb), shape, like, {}, "select"))


def cast(value: Any, elem_type: Type) -> Any:
    """``value`` in ``elem_type``: numpy arrays convert on the host, traced tensors on the IPU."""
    if isinstance(value, TracedTensor):
        return value.astype(elem_type)
    return np.asarray(value).astype(elem_type.numpy_dtype)
