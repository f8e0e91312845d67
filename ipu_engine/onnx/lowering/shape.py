"""Shape operators: reshapes, transposes, slices, joins and splits are views of traced
tensors (no copies); Shape, Constant, ConstantOfShape, Range and their arithmetic fold on
the host. Gather with traced indices is one ``popops::gather``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from onnx import helper, numpy_helper

from ipu_engine.frontend.array_ops import broadcast_to, cast, concatenate, map_expr, take
from ipu_engine.onnx.lowering.common import common_type, device_type, to_type, traced
from ipu_engine.onnx.lowering.registry import NodeContext, lowering
from ipu_engine.popops import expr as pe
from ipu_engine.popops.expr import _1, _2


def _ints(value: Any) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _host(ctx: NodeContext, value: Any, what: str) -> np.ndarray:
    if traced(value):
        raise ctx.error(
            f"its {what} must be known before the model runs (it is computed on the IPU)"
        )
    return np.asarray(value)


def _axes(ctx: NodeContext, axes_input: Any, since: int) -> list[int] | None:
    """Axes given as an attribute before opset ``since`` and as an input from it on."""
    axes = ctx.attr("axes") if ctx.opset < since else axes_input
    return None if axes is None else _ints(_host(ctx, axes, "axes"))


@lowering("Identity", since=1)
def identity(ctx: NodeContext, x: Any) -> Any:
    return x


@lowering("Reshape", since=5)
def reshape(ctx: NodeContext, x: Any, shape: Any) -> Any:
    dims = _ints(_host(ctx, shape, "shape"))
    if not ctx.attr("allowzero", 0):
        dims = [x.shape[i] if d == 0 else d for i, d in enumerate(dims)]
    try:
        return x.reshape(dims)
    except ValueError:
        raise ctx.error(f"cannot reshape {tuple(x.shape)} to {tuple(dims)}") from None


@lowering("Flatten", since=1)
def flatten(ctx: NodeContext, x: Any) -> Any:
    axis = int(ctx.attr("axis", 1))
    axis = axis + len(x.shape) if axis < 0 else axis  # -r..r
    rows = int(np.prod(x.shape[:axis], dtype=np.int64))
    return x.reshape(rows, int(np.prod(x.shape[axis:], dtype=np.int64)))


@lowering("Transpose", since=1)
def transpose(ctx: NodeContext, x: Any) -> Any:
    perm = ctx.attr("perm")
    perm = tuple(reversed(range(len(x.shape)))) if perm is None else tuple(int(p) for p in perm)
    return x.transpose(perm) if traced(x) else np.transpose(x, perm)


@lowering("Squeeze", since=1)
def squeeze(ctx: NodeContext, x: Any, axes: Any = None) -> Any:
    rank = len(x.shape)
    chosen = _axes(ctx, axes, 13)
    chosen = [i for i, d in enumerate(x.shape) if d == 1] if chosen is None else chosen
    chosen = [a % rank for a in chosen]
    if any(x.shape[a] != 1 for a in chosen):
        raise ctx.error(f"cannot squeeze axes {chosen} of shape {tuple(x.shape)}")
    return x.reshape([d for i, d in enumerate(x.shape) if i not in chosen])


@lowering("Unsqueeze", since=1)
def unsqueeze(ctx: NodeContext, x: Any, axes: Any = None) -> Any:
    chosen = _axes(ctx, axes, 13) or []
    rank = len(x.shape) + len(chosen)
    chosen = sorted(a % rank for a in chosen)
    dims = list(x.shape)
    for a in chosen:
        dims.insert(a, 1)
    return x.reshape(dims)


@lowering("Concat", since=4)
def concat(ctx: NodeContext, *xs: Any) -> Any:
    xs = tuple(x for x in xs if x is not None)
    if traced(*xs):
        xs = tuple(to_type(xs, common_type(xs)))
    return concatenate(xs, int(ctx.attr("axis")))


def _slice(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    key = (slice(None),) * axis + (slice(start, stop, step),)
    return x[key]


@lowering("Split", since=2)
def split(ctx: NodeContext, x: Any, sizes: Any = None) -> list[Any]:
    axis = int(ctx.attr("axis", 0)) % len(x.shape)
    parts = ctx.attr("split") if ctx.opset < 13 else sizes
    outputs = len(ctx.node.output)
    length = x.shape[axis]
    if parts is None:
        count = int(ctx.attr("num_outputs", outputs))
        size = -(-length // count)
        parts = [min(size, length - i * size) for i in range(count)]
    parts = _ints(_host(ctx, parts, "split sizes"))
    if sum(parts) != length:
        raise ctx.error(f"split sizes {parts} do not add up to axis {axis}'s {length}")
    bounds = np.concatenate([[0], np.cumsum(parts)])
    return [_slice(x, axis, int(b), int(e)) for b, e in itertools.pairwise(bounds)]


@lowering("Slice", since=1)
def slice_(ctx: NodeContext, x: Any, starts: Any = None, ends: Any = None, axes: Any = None,
           steps: Any = None) -> Any:  # fmt: skip
    if ctx.opset < 10:
        starts, ends, axes = ctx.attr("starts"), ctx.attr("ends"), ctx.attr("axes")
    starts_, ends_ = _ints(_host(ctx, starts, "starts")), _ints(_host(ctx, ends, "ends"))
    axes_ = list(range(len(starts_))) if axes is None else _ints(_host(ctx, axes, "axes"))
    steps_ = [1] * len(starts_) if steps is None else _ints(_host(ctx, steps, "steps"))
    key: list[slice] = [slice(None)] * len(x.shape)
    for a, b, e, s in zip(axes_, starts_, ends_, steps_, strict=True):
        length = x.shape[a]
        b, e = (max(min(v, length), -length - 1) for v in (b, e))  # INT64_MAX and friends
        if s < 0 and e < -length:
            e = None  # through the first element
        key[a % len(x.shape)] = slice(b, e, s)
    return x[tuple(key)]


@lowering("Gather", since=1)
def gather(ctx: NodeContext, data: Any, indices: Any) -> Any:
    axis = int(ctx.attr("axis", 0)) % len(data.shape)
    if not traced(data, indices):
        return np.take(data, indices, axis=axis)
    length = data.shape[axis]
    if not traced(indices):
        idx = np.asarray(indices).astype(np.int64)
        if np.any((idx < -length) | (idx >= length)):
            raise ctx.error(f"indices {idx.reshape(-1).tolist()} out of range for {length}")
        idx %= length
        if idx.ndim == 0:
            return data[(slice(None),) * axis + (int(idx),)]
        parts = [_slice(data, axis, int(i), int(i) + 1) for i in idx.reshape(-1)]
        joined = concatenate(parts, axis)
        return joined.reshape(*data.shape[:axis], *idx.shape, *data.shape[axis + 1 :])
    return take(data, indices, axis)  # popops::gather of the rows named at run time


@lowering("Pad", since=2)
def pad(ctx: NodeContext, x: Any, pads: Any = None, value: Any = None, axes: Any = None) -> Any:
    """Constant, edge and reflect padding; traced, a join of views and constant blocks."""
    mode = ctx.attr("mode", "constant")
    if ctx.opset < 11:
        pads, value = ctx.attr("pads"), ctx.attr("value", 0.0)
    rank = len(x.shape)
    amounts = _ints(_host(ctx, pads, "pads"))
    chosen = (
        list(range(rank)) if axes is None else [a % rank for a in _ints(_host(ctx, axes, "axes"))]
    )
    fill = 0 if value is None else np.asarray(_host(ctx, value, "value")).reshape(-1)[0]
    if mode not in ("constant", "edge", "reflect"):
        raise ctx.unsupported("mode", mode)
    widths = [(0, 0)] * rank
    for i, a in enumerate(chosen):
        widths[a] = (amounts[i], amounts[i + len(chosen)])
    if not traced(x):
        extra = {"constant_values": fill} if mode == "constant" else {}
        cropped = _crop(x, widths)
        return np.pad(cropped, [(max(b, 0), max(e, 0)) for b, e in widths], mode=mode, **extra)
    x = _crop(x, widths)
    for axis, (before, after) in enumerate(widths):
        before, after = max(before, 0), max(after, 0)
        if before or after:
            x = concatenate(_padded_parts(x, axis, before, after, mode, fill), axis)
    return x


def _crop(x: Any, widths: list[tuple[int, int]]) -> Any:
    """Negative pads remove elements."""
    key = tuple(slice(-b if b < 0 else None, e if e < 0 else None) for b, e in widths)
    return x[key] if any(b < 0 or e < 0 for b, e in widths) else x


def _padded_parts(x: Any, axis: int, before: int, after: int, mode: str, fill: Any) -> list:
    length = x.shape[axis]
    if mode == "constant":
        dtype = np.float32 if x.dtype.is_float else np.int32
        block = lambda n: np.full((*x.shape[:axis], n, *x.shape[axis + 1 :]), fill, dtype)  # noqa: E731
        head, tail = block(before), block(after)
    elif mode == "edge":
        head = concatenate([_slice(x, axis, 0, 1)] * before, axis) if before else None
        tail = concatenate([_slice(x, axis, length - 1, length)] * after, axis) if after else None
    else:  # reflect: mirrored about the first and last elements
        head = _slice(x, axis, before, 0, -1) if before else None
        stop = length - 2 - after
        tail = _slice(x, axis, length - 2, stop if stop >= 0 else None, -1) if after else None
    return [p for p in (head, x, tail) if p is not None and (not hasattr(p, "size") or p.size)]


@lowering("Expand", since=8)
def expand(ctx: NodeContext, x: Any, shape: Any) -> Any:
    target = tuple(_ints(_host(ctx, shape, "shape")))
    try:
        full = np.broadcast_shapes(tuple(x.shape), target)
    except ValueError:
        raise ctx.error(f"cannot expand {tuple(x.shape)} to {target}") from None
    out = broadcast_to(x, full)
    return out if traced(out) else np.array(out)


@lowering("Tile", since=6)
def tile(ctx: NodeContext, x: Any, repeats: Any) -> Any:
    reps = _ints(_host(ctx, repeats, "repeats"))
    if not traced(x):
        return np.tile(x, reps)
    for axis, r in enumerate(reps):
        if r != 1:
            x = concatenate([x] * r, axis)
    return x


@lowering("Shape", since=1)
def shape(ctx: NodeContext, x: Any) -> np.ndarray:
    dims = np.array(x.shape, dtype=np.int64)
    start, end = ctx.attr("start", 0), ctx.attr("end")
    return dims[start:end]


@lowering("Size", since=1)
def size(ctx: NodeContext, x: Any) -> np.ndarray:
    return np.array(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int64)


@lowering("Constant", since=1)
def constant(ctx: NodeContext) -> np.ndarray:
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                       ("value_int", np.int64), ("value_ints", np.int64)):  # fmt: skip
        if key in ctx.attrs:
            return np.array(ctx.attrs[key], dtype=dtype)
    if "value" in ctx.attrs:
        return numpy_helper.to_array(ctx.attrs["value"])
    raise ctx.error(
        f"only value, value_float(s) and value_int(s) are supported, got {sorted(ctx.attrs)}"
    )


@lowering("ConstantOfShape", since=9)
def constant_of_shape(ctx: NodeContext, dims: Any) -> np.ndarray:
    value = ctx.attrs.get("value")
    fill = np.zeros(1, np.float32) if value is None else numpy_helper.to_array(value)
    # one value repeated: a read-only broadcast of it, no host memory per element (the
    # onnx package's "light" models make every weight this way: ResNet-50's 97 MB)
    return np.broadcast_to(fill.reshape(-1)[:1].reshape(()), _ints(_host(ctx, dims, "shape")))


@lowering("Range", since=11)
def range_(ctx: NodeContext, start: Any, limit: Any, delta: Any) -> np.ndarray:
    start, limit, delta = (_host(ctx, v, "bounds") for v in (start, limit, delta))
    return np.arange(start, limit, delta).astype(np.asarray(start).dtype)


@lowering("Cast", since=6)
def cast_(ctx: NodeContext, x: Any) -> Any:
    to = np.dtype(helper.tensor_dtype_to_np_dtype(int(ctx.attr("to"))))
    if not traced(x):
        return np.asarray(x).astype(to)
    if to == np.bool_:
        return map_expr(pe.select(1, 0, pe.Binary("NOT_EQUAL", _1, pe.Const(0))), x)
    if to.kind not in "fiub":
        raise ctx.unsupported("to", to.name)
    return cast(x, device_type(to))


@lowering("Trilu", since=14)
def trilu(ctx: NodeContext, x: Any, k: Any = None) -> Any:
    """The upper (``upper=1``) or lower triangle of the last two axes, from diagonal k."""
    diagonal = 0 if k is None else int(_host(ctx, k, "k").reshape(-1)[0])
    rows, cols = x.shape[-2:]
    keep = (
        np.triu(np.ones((rows, cols), bool), diagonal)
        if ctx.attr("upper", 1)
        else np.tril(np.ones((rows, cols), bool), diagonal)
    )
    if not traced(x):
        return np.where(keep, x, np.zeros((), np.asarray(x).dtype))
    mask = keep.astype(x.dtype.numpy_dtype)
    return map_expr(pe.select(_1, 0, pe.Binary("NOT_EQUAL", _2, pe.Const(0))), x, mask)
