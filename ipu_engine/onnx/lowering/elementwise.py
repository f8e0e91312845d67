"""Element-wise ONNX operators: arithmetic, activations, comparisons, logic, Where.

Written with numpy calls that fold on host constants and record device ops on traced
tensors; an activation numpy lacks is one ``popops::map`` expression (``map_expr``), whose
numpy evaluation is the host fold. Booleans on the IPU are 0/1 in the operands' type.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ipu_engine.frontend import ops
from ipu_engine.frontend.array_ops import map_expr, where
from ipu_engine.onnx.lowering.common import (
    common_type,
    device_type,
    host_scalar,
    squeeze_scalar,
    to_type,
    traced,
)
from ipu_engine.onnx.lowering.registry import NodeContext, lowering
from ipu_engine.popops import expr as pe
from ipu_engine.popops.expr import _1, _2, _3

_NUMPY_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}


def _legacy_broadcast(ctx: NodeContext, a: Any, b: Any) -> tuple[Any, Any]:
    """Opsets before 7: ``broadcast=1`` aligns ``b`` with ``a``'s dimensions from ``axis``."""
    axis = ctx.attr("axis")
    if ctx.opset >= 7 or not ctx.attr("broadcast", 0) or axis is None:
        return a, b
    axis = int(axis) % len(a.shape)
    trailing = len(a.shape) - axis - len(b.shape)
    return a, b.reshape(*b.shape, *([1] * trailing)) if trailing > 0 else b


def _operands(a: Any, b: Any) -> tuple[Any, Any]:
    a, b = to_type((a, b), common_type((a, b))) if traced(a, b) else (a, b)
    return squeeze_scalar(a, b), squeeze_scalar(b, a)


@lowering("Add", "Sub", "Mul", since=6)
def arithmetic(ctx: NodeContext, a: Any, b: Any) -> Any:
    a, b = _operands(*_legacy_broadcast(ctx, a, b))
    out = _NUMPY_BINARY[ctx.op_type](a, b)
    return out if traced(out) else np.asarray(out).astype(np.result_type(a, b))


@lowering("Div", since=6)
def div(ctx: NodeContext, a: Any, b: Any) -> Any:
    a, b = _operands(*_legacy_broadcast(ctx, a, b))
    if not traced(a, b):
        a, b = np.asarray(a), np.asarray(b)
        if a.dtype.kind in "iu":  # C division: truncates toward zero
            q = np.abs(a) // np.abs(b)
            return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a, b))
        return np.divide(a, b).astype(np.result_type(a, b))
    if common_type((a, b)).is_float:
        return np.divide(a, b)
    return map_expr(_1 / _2, a, b)


@lowering("Pow", since=1)
def power(ctx: NodeContext, x: Any, y: Any) -> Any:
    x, y = _legacy_broadcast(ctx, x, y)
    if not traced(x, y):
        return np.power(x, y).astype(np.asarray(x).dtype)
    exponent = host_scalar(y)
    if exponent is not None and traced(x):
        if exponent == 1:
            return x
        if exponent == 0.5:
            return np.sqrt(x)
        return x ** float(exponent)
    x, y = to_type((x, y), common_type((x, y)))
    return map_expr(_1**_2, x, y)


_UFUNCS = {
    "Exp": np.exp,
    "Log": np.log,
    "Sqrt": np.sqrt,
    "Tanh": np.tanh,
    "Abs": np.absolute,
    "Neg": np.negative,
}


@lowering(*_UFUNCS, since=6)
def ufunc(ctx: NodeContext, x: Any) -> Any:
    return _UFUNCS[ctx.op_type](x)


@lowering("Relu", since=6)
def relu(ctx: NodeContext, x: Any) -> Any:
    return ops.relu(x) if traced(x) else np.maximum(x, 0).astype(np.asarray(x).dtype)


@lowering("Sigmoid", since=6)
def sigmoid(ctx: NodeContext, x: Any) -> Any:
    return ops.sigmoid(x) if traced(x) else map_expr(pe.sigmoid(_1), x)


@lowering("Reciprocal", since=6)
def reciprocal(ctx: NodeContext, x: Any) -> Any:
    return np.divide(1.0, x) if traced(x) else np.reciprocal(x)


# erf(x) by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): one map over the IPU's exp.
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: pe.Expr) -> pe.Expr:
    t = pe.inv(1.0 + 0.3275911 * abs(x))
    poly: pe.Expr = t * _A[4]
    for a in reversed(_A[:4]):
        poly = t * (a + poly)
    return pe.Unary("SIGNUM", x) * (1.0 - poly * pe.exp(-(x * x)))


ERF = _erf(_1)


def _unary_expr(expression: pe.Expr) -> Any:
    return lambda x: map_expr(expression, x)


def _activation(ctx: NodeContext) -> pe.Expr:
    """The expression of a parameterised activation, with the node's attributes."""
    alpha, beta, gamma = ctx.attr("alpha"), ctx.attr("beta"), ctx.attr("gamma")
    op = ctx.op_type
    if op == "Erf":
        return ERF
    if op == "LeakyRelu":
        return pe.select(_1, _1 * (0.01 if alpha is None else alpha), _1 > 0)
    if op == "Elu":
        return pe.select(_1, (pe.exp(_1) - 1.0) * (1.0 if alpha is None else alpha), _1 > 0)
    if op == "Selu":
        a = 1.67326319217681884765625 if alpha is None else alpha
        g = 1.05070102214813232421875 if gamma is None else gamma
        return pe.select(_1 * g, (pe.exp(_1) * a - a) * g, _1 > 0)
    if op == "HardSigmoid":
        a, b = 0.2 if alpha is None else alpha, 0.5 if beta is None else beta
        return pe.max_(0.0, pe.min_(1.0, _1 * a + b))
    if op == "HardSwish":
        return _1 * pe.max_(0.0, pe.min_(1.0, _1 * (1.0 / 6.0) + 0.5))
    if op == "Mish":
        return _1 * pe.tanh(pe.log(pe.exp(_1) + 1.0))
    if op == "Celu":
        a = 1.0 if alpha is None else alpha
        return pe.max_(0.0, _1) + pe.min_(0.0, (pe.exp(_1 * (1.0 / a)) - 1.0) * a)
    if op == "Softplus":
        return pe.log(pe.exp(_1) + 1.0)
    if op == "Softsign":
        return _1 / (abs(_1) + 1.0)
    if op == "ThresholdedRelu":
        return pe.select(_1, 0.0, _1 > (1.0 if alpha is None else alpha))
    if op == "Gelu":
        approximate = ctx.attr("approximate", "none")
        if approximate == "tanh":
            return pe.Unary("GELU", _1)
        if approximate != "none":
            raise ctx.unsupported("approximate", approximate)
        return _1 * 0.5 * (1.0 + _erf(_1 * 0.7071067811865476))
    return _SIMPLE[op]


_SIMPLE = {
    "Floor": pe.Unary("FLOOR", _1),
    "Ceil": pe.Unary("CEIL", _1),
    "Round": pe.Unary("ROUND", _1),
    "Sign": pe.Unary("SIGNUM", _1),
    "Sin": pe.Unary("SIN", _1),
    "Cos": pe.Unary("COS", _1),
}


@lowering("Erf", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Softplus", "Softsign", since=6)
@lowering("ThresholdedRelu", "Floor", "Ceil", "Sign", "Sin", "Cos", since=6)
@lowering("Round", "HardSwish", since=11)
@lowering("Celu", since=12)
@lowering("Mish", since=18)
@lowering("Gelu", since=20)
def activation(ctx: NodeContext, x: Any) -> Any:
    out = map_expr(_activation(ctx), x)
    return out if traced(out) else out.astype(np.asarray(x).dtype)


@lowering("PRelu", since=6)
def prelu(ctx: NodeContext, x: Any, slope: Any) -> Any:
    if ctx.opset < 7 and len(slope.shape) == 1 and len(x.shape) > 2 and slope.shape[0] > 1:
        slope = slope.reshape(-1, *([1] * (len(x.shape) - 2)))  # one slope per channel
    return map_expr(pe.select(_1, _1 * _2, _1 > 0), *_operands(x, slope))


@lowering("Clip", since=6)
def clip(ctx: NodeContext, x: Any, low: Any = None, high: Any = None) -> Any:
    if ctx.opset < 11:
        low, high = ctx.attr("min"), ctx.attr("max")
    clamp = _clamp(x, low, high)
    if clamp is not None:
        return map_expr(clamp, x)
    if low is not None:
        x = np.maximum(x, low) if not traced(x) else ops.maximum(*_operands(x, low))
    if high is not None:
        x = np.minimum(x, high) if not traced(x) else ops.minimum(*_operands(x, high))
    return x


def _clamp(x: Any, low: Any, high: Any) -> pe.Expr | None:
    """Clip of a traced float tensor by bounds known on the host as one map, as PopART
    lowers it (popops' clamp): ``min(max(_1, low), high)``, one pass over memory. None
    where a bound is traced or not one value."""
    if not traced(x) or traced(low, high) or not x.dtype.is_float:
        return None
    bounds = [np.asarray(b) for b in (low, high) if b is not None]
    if not bounds or any(b.size != 1 for b in bounds):
        return None
    dtype = x.dtype.numpy_dtype
    e: pe.Expr = _1
    if low is not None:
        e = pe.max_(e, np.asarray(low, dtype).item())
    if high is not None:
        e = pe.min_(e, np.asarray(high, dtype).item())
    return e


_VARIADIC = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add, "Mean": np.add}


@lowering("Max", "Min", "Sum", "Mean", since=6)
def variadic(ctx: NodeContext, *xs: Any) -> Any:
    if traced(*xs):
        xs = tuple(to_type(xs, common_type(xs)))
    fn = _VARIADIC[ctx.op_type]
    out = functools.reduce(lambda a, b: fn(*_operands(a, b)), xs)
    return np.divide(out, float(len(xs))) if ctx.op_type == "Mean" else out


_COMPARE = {
    "Equal": ("EQUAL", np.equal),
    "Less": ("LESS_THAN", np.less),
    "Greater": ("GREATER_THAN", np.greater),
    "LessOrEqual": ("LESS_THAN_EQUAL", np.less_equal),
    "GreaterOrEqual": ("GREATER_THAN_EQUAL", np.greater_equal),
}


@lowering(*_COMPARE, since=7)
def compare(ctx: NodeContext, a: Any, b: Any) -> Any:
    name, fn = _COMPARE[ctx.op_type]
    if not traced(a, b):
        return fn(a, b)
    return map_expr(pe.select(1, 0, pe.Binary(name, _1, _2)), *_operands(a, b))


@lowering("Not", since=1)
def logical_not(ctx: NodeContext, x: Any) -> Any:
    return np.subtract(1, x) if traced(x) else np.logical_not(x)


_LOGIC = {"And": (np.logical_and, np.multiply), "Or": (np.logical_or, np.maximum)}


@lowering("And", "Or", since=7)
def logic(ctx: NodeContext, a: Any, b: Any) -> Any:
    host, device = _LOGIC[ctx.op_type]
    return device(*_operands(a, b)) if traced(a, b) else host(a, b)


@lowering("Xor", since=7)
def logical_xor(ctx: NodeContext, a: Any, b: Any) -> Any:
    if not traced(a, b):
        return np.logical_xor(a, b)
    return map_expr(pe.select(1, 0, pe.Binary("NOT_EQUAL", _1, _2)), *_operands(a, b))


@lowering("Where", since=9)
def where_(ctx: NodeContext, cond: Any, x: Any, y: Any) -> Any:
    """One popops::select; a condition computed on the IPU is 0/1 in its operands' type."""
    if not traced(cond, x, y):
        return np.where(cond, x, y)
    return where(cond, *to_type((x, y), common_type((x, y))))


@lowering("Shrink", since=9)
def shrink(ctx: NodeContext, x: Any) -> Any:
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    inner = pe.select(_1 - bias, 0.0, _1 > lambd)
    out = map_expr(pe.select(_1 + bias, inner, _1 < -lambd), x)
    return out if traced(out) else out.astype(np.asarray(x).dtype)


@lowering("Mod", since=10)
def mod(ctx: NodeContext, a: Any, b: Any) -> Any:
    """``fmod=1``: C's remainder (sign of a); else Python's (sign of b), integers only."""
    c_style = bool(ctx.attr("fmod", 0))
    if not traced(a, b):
        out = np.fmod(a, b) if c_style else np.mod(a, b)
        return np.asarray(out).astype(np.result_type(a, b))
    a, b = _operands(a, b)
    if not c_style and common_type((a, b)).is_float:
        raise ctx.error("fmod=0 needs integer inputs (ONNX asks fmod=1 for floats)")
    rem = pe.Binary("REMAINDER", _1, _2)
    return map_expr(rem if c_style else pe.Binary("REMAINDER", rem + _2, _2), a, b)


@lowering("ArgMax", "ArgMin", since=1)
def arg_extreme(ctx: NodeContext, x: Any) -> Any:
    """The index of the (first, or with ``select_last_index`` the last) largest / smallest
    element along ``axis``; on the IPU: the extreme, then the smallest (largest) index that
    reaches it, as two reductions and a map."""
    axis = int(ctx.attr("axis", 0)) % len(x.shape)
    keepdims, last = bool(ctx.attr("keepdims", 1)), bool(ctx.attr("select_last_index", 0))
    find_max = ctx.op_type == "ArgMax"
    if not traced(x):
        a = np.asarray(x)
        flipped = np.flip(a, axis) if last else a
        i = (np.argmax if find_max else np.argmin)(flipped, axis=axis)
        i = a.shape[axis] - 1 - i if last else i
        return np.expand_dims(i, axis).astype(np.int64) if keepdims else i.astype(np.int64)
    x = to_type((x,), common_type((x,)))[0]
    extreme = x.max(axis=axis, keepdims=True) if find_max else x.min(axis=axis, keepdims=True)
    shape = [1] * len(x.shape)
    shape[axis] = x.shape[axis]
    index = np.arange(x.shape[axis]).reshape(shape).astype(x.dtype.numpy_dtype)
    missing = -1.0 if last else float(x.shape[axis])
    hits = map_expr(pe.select(_3, missing, pe.Binary("EQUAL", _1, _2)), x, extreme, index)
    found = (
        hits.max(axis=axis, keepdims=keepdims) if last else hits.min(axis=axis, keepdims=keepdims)
    )
    return found.astype(np.int32)


@lowering("OneHot", since=9, host_weights=True)
def one_hot(ctx: NodeContext, indices: Any, depth: Any, values: Any) -> Any:
    if traced(depth, values):
        raise ctx.error("its depth and values must be known before the model runs")
    size = int(np.asarray(depth).reshape(-1)[0])
    off, on = np.asarray(values).reshape(-1)[:2]
    axis = int(ctx.attr("axis", -1))
    rank = len(indices.shape) + 1
    axis %= rank
    shape = [1] * rank
    shape[axis] = size
    positions = np.arange(size).reshape(shape)
    if not traced(indices):
        idx = np.expand_dims(np.asarray(indices), axis)
        idx = np.where(idx < 0, idx + size, idx)
        return np.where(idx == positions, on, off).astype(np.asarray(values).dtype)
    idx = to_type((indices,), common_type((indices,)))[0]
    idx = idx.reshape(*indices.shape[:axis], 1, *indices.shape[axis:])
    wrapped = pe.select(_1 + size, _1, _1 < 0)
    kind = device_type(np.asarray(values).dtype)
    hot = map_expr(
        pe.select(1, 0, pe.Binary("EQUAL", wrapped, _2)),
        idx,
        positions.astype(idx.dtype.numpy_dtype),
    )
    hot = hot.astype(kind)
    return hot * (on - off) + off if (on, off) != (1, 0) else hot
