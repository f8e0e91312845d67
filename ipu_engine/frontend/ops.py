"""The ops traced code can use beyond Python operators: activations, reductions, views,
matrix products and the loss ops the layers need; numpy's names and shape rules.

Each records one node in the current trace; ``frontend/builder.py`` turns it into the
library op (popops, poplin, popnn) when the graph is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ipu_engine.common.arguments import index_arg, integer_arg, sequence_arg
from ipu_engine.common.errors import OptionError, ShapeError, TypeMismatchError
from ipu_engine.common.types import INT
from ipu_engine.frontend.available_memory import set_available_memory as set_available_memory
from ipu_engine.frontend.traced import (
    OPERATORS,
    TracedTensor,
    active_trace,
    as_node,
    binary,
    normalise_axes,
    promoted,
    reduce,
    unary,
    user_line,
)


def relu(x: Any) -> TracedTensor:
    return unary("relu", x)


def sigmoid(x: Any) -> TracedTensor:
    return unary("sigmoid", x)


def tanh(x: Any) -> TracedTensor:
    return unary("tanh", x)


def exp(x: Any) -> TracedTensor:
    return unary("exp", x)


def log(x: Any) -> TracedTensor:
    return unary("log", x)


def sqrt(x: Any) -> TracedTensor:
    return unary("sqrt", x)


def square(x: Any) -> TracedTensor:
    return unary("square", x)


def abs(x: Any) -> TracedTensor:
    return unary("abs", x)


def negative(x: Any) -> TracedTensor:
    return unary("neg", x)


def add(a: Any, b: Any) -> TracedTensor:
    return binary("add", a, b)


def subtract(a: Any, b: Any) -> TracedTensor:
    return binary("sub", a, b)


def multiply(a: Any, b: Any) -> TracedTensor:
    return binary("mul", a, b)


def divide(a: Any, b: Any) -> TracedTensor:
    return binary("div", a, b)


def maximum(a: Any, b: Any) -> TracedTensor:
    return binary("maximum", a, b)


def minimum(a: Any, b: Any) -> TracedTensor:
    return binary("minimum", a, b)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> TracedTensor:
    return reduce("add", x, axis, keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> TracedTensor:
    return reduce("mean", x, axis, keepdims)


def max(x: Any, axis: Any = None, keepdims: bool = False) -> TracedTensor:
    return reduce("max", x, axis, keepdims)


def min(x: Any, axis: Any = None, keepdims: bool = False) -> TracedTensor:
    return reduce("min", x, axis, keepdims)


def softmax(x: Any, axis: int = -1) -> TracedTensor:
    """Softmax over the last axis (popnn's softmax normalises the innermost dimension)."""
    trace = active_trace(x)
    node = as_node(trace, x)
    (axis_n,) = normalise_axes(node, axis, "softmax")
    if axis_n != len(node.shape) - 1:
        raise ShapeError(
            f"{user_line()}: softmax of {node.describe()} over axis {axis}: only the last axis is "
            "supported; transpose first"
        )
    return unary("softmax", x)


def reshape(x: Any, shape: Sequence[int] | int) -> TracedTensor:
    trace = active_trace(x)
    node = as_node(trace, x)
    what = f"{user_line()}: reshape of {node.describe()}: the shape"
    if isinstance(shape, int | np.integer | float | np.floating | np.bool_ | str | bytes):
        shape = [shape]  # one dimension; a float or string is refused, not bent
    dims = [integer_arg(d, what, ShapeError) for d in sequence_arg(shape, what, ShapeError)]
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ShapeError(f"{user_line()}: cannot reshape {node.describe()} to {tuple(dims)}")
    known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
    if -1 in dims:
        if known == 0 or node.size % known:
            raise ShapeError(f"{user_line()}: cannot reshape {node.describe()} to {tuple(dims)}")
        dims[dims.index(-1)] = node.size // known
    if int(np.prod(dims, dtype=np.int64)) != node.size:
        raise ShapeError(f"{user_line()}: cannot reshape {node.describe()} to {tuple(dims)}")
    if tuple(dims) == node.shape:
        return x
    out = tuple(dims)
    return TracedTensor(trace, trace.add("reshape", (node,), out, node.type, {"shape": out}))


def transpose(x: Any, axes: Sequence[int] | None = None) -> TracedTensor:
    trace = active_trace(x)
    node = as_node(trace, x)
    rank = len(node.shape)
    what = f"{user_line()}: transpose of {node.describe()}: the axes"
    given = (
        None
        if axes is None
        else [integer_arg(a, what, ShapeError) for a in sequence_arg(axes, what, ShapeError)]
    )
    if given is not None and any(not -rank <= a < rank for a in given):
        raise ShapeError(f"{what} {tuple(given)} are not all within the {rank} axes")
    perm = tuple(range(rank))[::-1] if given is None else tuple(a % rank for a in given)
    if sorted(perm) != list(range(rank)):
        raise ShapeError(
            f"{user_line()}: axes {tuple(axes or ())} do not permute {node.describe()}"
        )
    if perm == tuple(range(rank)):
        return x
    shape = tuple(node.shape[p] for p in perm)
    return TracedTensor(trace, trace.add("transpose", (node,), shape, node.type, {"perm": perm}))


def index(x: TracedTensor, key: Any) -> TracedTensor:
    """Basic numpy indexing (integers, slices, ``None``, ``...``): a view, no copy."""
    parts = key if isinstance(key, tuple) else (key,)
    for p in parts:
        if isinstance(p, bool | np.bool_) or not (
            p is None or p is Ellipsis or isinstance(p, slice | int | np.integer)
        ):
            raise ShapeError(
                f"{user_line()}: index {key!r} of {x.node.describe()}: only integers, slices, None "
                "and ... are supported"
            )
    index_arg(key, f"{user_line()}: index {key!r} of {x.node.describe()}")  # slice bounds
    try:
        shape = np.broadcast_to(np.empty((), dtype=bool), x.shape)[key].shape
    except (IndexError, ValueError) as exc:
        raise ShapeError(f"{user_line()}: index {key!r} of {x.node.describe()}: {exc}") from None
    return x._new("slice", (x.node,), shape, x.dtype, {"key": key})


PARTIALS_TYPES = ("float", "half")


def check_partials_type(value: Any, where: str) -> str:
    """``value`` as a partials type name, or an OptionError saying what is allowed."""
    if value not in PARTIALS_TYPES:
        raise OptionError(
            f"{where}: partials_type must be 'float' or 'half' (what half matmul products "
            f"accumulate in), got {value!r}"
        )
    return value


def matmul(a: Any, b: Any, partials_type: str | None = None) -> TracedTensor:
    """``a @ b`` for 1-D and 2-D operands, as numpy (a 1-D side is a row or a column).

    Half operands give a half result; ``partials_type`` ("float" or "half", default the
    options' ``partials_type``) is what their products accumulate in (poplin's
    ``partialsType``)."""
    trace = active_trace(a, b)
    na, nb = promoted(trace, as_node(trace, a), as_node(trace, b))
    if partials_type is not None:
        check_partials_type(partials_type, user_line())
    if not na.type.is_float or na.type != nb.type:
        raise TypeMismatchError(
            f"{user_line()}: cannot multiply {na.describe()} by {nb.describe()}: "
            "needs float tensors"
        )
    if not (1 <= len(na.shape) <= 2 and 1 <= len(nb.shape) <= 2):
        raise ShapeError(
            f"{user_line()}: cannot multiply {na.describe()} by {nb.describe()}: matmul takes "
            "1-D and 2-D tensors"
        )
    k_a, k_b = na.shape[-1], nb.shape[0]
    if k_a != k_b:
        raise ShapeError(
            f"{user_line()}: cannot multiply {na.describe()} by {nb.describe()} "
            f"(inner dimensions {k_a} and {k_b} differ)"
        )
    ta = TracedTensor(trace, na)
    tb = TracedTensor(trace, nb)
    lhs = ta.reshape(1, k_a) if len(na.shape) == 1 else ta
    rhs = tb.reshape(k_b, 1) if len(nb.shape) == 1 else tb
    shape = (lhs.shape[0], rhs.shape[1])
    partials = partials_type or trace.partials_type
    out = lhs._new("matmul", (lhs.node, rhs.node), shape, na.type, {"partials_type": partials})
    final = tuple(
        d for d, keep in ((shape[0], len(na.shape) == 2), (shape[1], len(nb.shape) == 2)) if keep
    )
    return out.reshape(final) if final != shape else out


def nonlinearity_grad(kind: str, out: TracedTensor, grad: TracedTensor) -> TracedTensor:
    """The gradient at a relu/sigmoid/tanh's input from its output and output gradient."""
    if out.shape != grad.shape:
        raise ShapeError(
            f"{user_line()}: {kind} gradient: output {out.node.describe()} and gradient "
            f"{grad.node.describe()} differ"
        )
    return out._new(
        "nonlinearity_grad", (out.node, grad.node), out.shape, out.dtype, {"kind": kind}
    )


def softmax_cross_entropy(logits: TracedTensor, labels: TracedTensor) -> TracedTensor:
    """Per-sample cross-entropy of softmax(logits) [B, C] against integer labels [B]."""
    if len(logits.shape) != 2 or labels.shape != logits.shape[:1]:
        raise ShapeError(
            f"{user_line()}: cross-entropy needs logits [B, C] and labels [B]; got "
            f"{logits.node.describe()} and {labels.node.describe()}"
        )
    if labels.dtype != INT or not logits.dtype.is_float:
        raise TypeMismatchError(
            f"{user_line()}: cross-entropy needs float logits and int labels; got "
            f"{logits.node.describe()} and {labels.node.describe()}"
        )
    return logits._new("softmax_xent", (logits.node, labels.node), labels.shape, logits.dtype)


def softmax_cross_entropy_grad(loss: TracedTensor) -> TracedTensor:
    """``softmax(logits) - one_hot(labels)``: made by the same popnn op as the loss."""
    logits = loss.node.inputs[0]
    return loss._new("softmax_xent_grad", (loss.node,), logits.shape, logits.type)


UFUNCS = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "true_divide": divide,
    "divide": divide,
    "negative": negative,
    "maximum": maximum,
    "minimum": minimum,
    "exp": exp,
    "log": log,
    "sqrt": sqrt,
    "square": square,
    "tanh": tanh,
    "absolute": abs,
    "matmul": matmul,
}

OPERATORS.update(matmul=matmul, index=index, reshape=reshape, transpose=transpose)
OPERATORS.update({f"ufunc {name}": op for name, op in UFUNCS.items()})
