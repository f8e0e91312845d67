"""Element-wise operations of popops: the numpy function and the cost of each.

Costs are per element on one worker thread, in the spirit of PopLibs' cycle estimators
(vectorised float adds run two elements a cycle; transcendental functions take tens of
cycles). They feed the cycle model; see ``ipu_engine/poplar/cost_model/constants.py`` for sources.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ipu_engine.codelets import kernels


def _int_divide(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    """C integer division: truncates toward zero (numpy's // floors). x / 0 gives 0."""
    if out.dtype.kind not in "iu":
        return np.divide(a, b, out=out)
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    fix = (np.remainder(a, safe) != 0) & ((a < 0) != (safe < 0))
    out[...] = np.where(b == 0, 0, q + fix)
    return out


def _remainder(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    if out.dtype.kind in "iu":
        safe = np.where(b == 0, 1, b)
        out[...] = np.where(b == 0, 0, np.fmod(a, safe))
        return out
    return np.fmod(a, b, out=out)


def _bound(fn: np.ufunc, maximum: bool) -> Callable[..., np.ndarray]:
    """``fn`` (np.maximum or np.minimum); a float32 array with one float32 value (ReLU,
    a Clip's bounds) in C (``kernels.bound``, bit for bit numpy's result: numpy runs a
    scalar operand one element at a time, ~3x slower than its vector loops)."""

    def apply(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
        if (
            isinstance(a, np.ndarray)
            and a.dtype == np.float32
            and isinstance(out, np.ndarray)
            and out.dtype == np.float32
            and a.shape == out.shape
            and np.ndim(b) == 0
            and np.asarray(b).dtype == np.float32
            and (not np.may_share_memory(a, out) or same_view(a, out))
        ):
            kernels.bound(a, out, float(b), maximum)
            return out
        return fn(a, b, out=out)

    return apply


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and (
        a.strides == b.strides
    )


_maximum = _bound(np.maximum, True)
_minimum = _bound(np.minimum, False)


def relu(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    zero = np.float32(0) if x.dtype == np.float32 else 0
    return _maximum(x, zero, out=out)


def _sigmoid(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    # 1 / (1 + exp(-x)) without overflow warnings for large |x|
    np.negative(x, out=out)
    np.exp(out, out=out)
    out += 1
    np.reciprocal(out, out=out)
    return out


def _rsqrt(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    np.sqrt(x, out=out)
    return np.reciprocal(out, out=out)


def _gelu(x: np.ndarray, out: np.ndarray) -> np.ndarray:
    # tanh approximation, as PopLibs' GELU
    t = np.tanh(np.sqrt(2.0 / np.pi).astype(x.dtype) * (x + x.dtype.type(0.044715) * x**3))
    out[...] = x.dtype.type(0.5) * x * (1 + t)
    return out


@dataclass(frozen=True)
class ElementOp:
    """One popops operation: its Poplar name, numpy function, cost and FLOPs per element."""

    name: str
    fn: Callable[..., np.ndarray]
    arity: int
    cycles_per_element: float
    flops_per_element: int = 1
    bool_result: bool = False
    float_only: bool = False


def _ops(*ops: ElementOp) -> dict[str, ElementOp]:
    return {op.name: op for op in ops}


BINARY_OPS = _ops(
    ElementOp("ADD", np.add, 2, 0.5),
    ElementOp("SUBTRACT", np.subtract, 2, 0.5),
    ElementOp("MULTIPLY", np.multiply, 2, 0.5),
    ElementOp("DIVIDE", _int_divide, 2, 4.0),
    ElementOp("MAXIMUM", _maximum, 2, 0.5),
    ElementOp("MINIMUM", _minimum, 2, 0.5),
    ElementOp("POWER", np.power, 2, 20.0, 8, float_only=True),
    ElementOp("REMAINDER", _remainder, 2, 6.0),
    ElementOp("ATAN2", np.arctan2, 2, 30.0, 10, float_only=True),
    ElementOp("EQUAL", np.equal, 2, 1.0, bool_result=True),
    ElementOp("NOT_EQUAL", np.not_equal, 2, 1.0, bool_result=True),
    ElementOp("LESS_THAN", np.less, 2, 1.0, bool_result=True),
    ElementOp("LESS_THAN_EQUAL", np.less_equal, 2, 1.0, bool_result=True),
    ElementOp("GREATER_THAN", np.greater, 2, 1.0, bool_result=True),
    ElementOp("GREATER_THAN_EQUAL", np.greater_equal, 2, 1.0, bool_result=True),
    ElementOp("LOGICAL_AND", np.logical_and, 2, 1.0, bool_result=True),
    ElementOp("LOGICAL_OR", np.logical_or, 2, 1.0, bool_result=True),
)

UNARY_OPS = _ops(
    ElementOp("NEGATE", np.negative, 1, 0.5),
    ElementOp("ABSOLUTE", np.absolute, 1, 0.5),
    ElementOp("SQUARE", np.square, 1, 0.5),
    ElementOp("EXPONENT", np.exp, 1, 8.0, 4, float_only=True),
    ElementOp("LOGARITHM", np.log, 1, 10.0, 4, float_only=True),
    ElementOp("SQRT", np.sqrt, 1, 6.0, 2, float_only=True),
    ElementOp("RSQRT", _rsqrt, 1, 8.0, 2, float_only=True),
    ElementOp("INVERSE", np.reciprocal, 1, 4.0, float_only=True),
    ElementOp("TANH", np.tanh, 1, 12.0, 6, float_only=True),
    ElementOp("SIGMOID", _sigmoid, 1, 14.0, 6, float_only=True),
    ElementOp("RELU", relu, 1, 0.5),
    ElementOp("GELU", _gelu, 1, 20.0, 10, float_only=True),
    ElementOp("SIGNUM", np.sign, 1, 1.0),
    ElementOp("CEIL", np.ceil, 1, 1.0, float_only=True),
    ElementOp("FLOOR", np.floor, 1, 1.0, float_only=True),
    ElementOp("ROUND", np.round, 1, 1.0, float_only=True),
    ElementOp("COS", np.cos, 1, 16.0, 6, float_only=True),
    ElementOp("SIN", np.sin, 1, 16.0, 6, float_only=True),
    ElementOp("LOGICAL_NOT", np.logical_not, 1, 0.5, bool_result=True),
)
