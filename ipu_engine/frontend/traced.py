"""Traced tensors: what a function compiled with ``ipu_engine.compile`` computes with.

A ``TracedTensor`` has a shape and an element type but no values; its numpy-style
operators record ops in the current trace, checking shapes (numpy broadcasting) and
types as numpy would, so that a mistake is reported at the user's line:
``model.py:12: cannot add float[3,4] and float[5]``. float16 stays half (half op half is
half); half op float32 is float32, and Python scalars take the tensor's type (NEP 50).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ipu_engine.common.arguments import flag_arg, host_values, integer_arg, sequence_arg
from ipu_engine.common.errors import GraphError, ShapeError, TypeMismatchError
from ipu_engine.common.types import FLOAT, HALF, INT, Type
from ipu_engine.frontend.ir import Node, Trace, current_trace, where
from ipu_engine.poplar.debug import caller_location

#: The operators whose ops live in ``ops`` (matmul, indexing, reshape, transpose, numpy's
#: ufuncs as "ufunc <name>"): ``ops`` binds them when imported, as TensorFlow's ops module
#: overrides its Tensor's operators, so this module need not import the one importing it.
OPERATORS: dict[str, Callable[..., Any]] = {}

_VERBS = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "maximum": "take the maximum of",
    "minimum": "take the minimum of",
    "pow": "raise",
}
_FLOAT_ONLY = {"div", "pow", "exp", "log", "sqrt", "tanh", "sigmoid", "relu"}


class TracedTensor:
    """A value of a traced function: shape and type now, numbers when the engine runs."""

    __slots__ = ("node", "trace")
    __array_priority__ = 1000  # numpy defers mixed operators to us

    def __init__(self, trace: Trace, node: Node) -> None:
        self.trace = trace
        self.node = node

    # -- what it is ---------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.node.shape

    @property
    def dtype(self) -> Type:
        return self.node.type

    @property
    def ndim(self) -> int:
        return len(self.node.shape)

    @property
    def size(self) -> int:
        return self.node.size

    @property
    def name(self) -> str:
        return self.node.name

    def __repr__(self) -> str:
        return f"TracedTensor({self.node.name!r}, {self.node.describe()})"

    def __len__(self) -> int:
        if not self.shape:
            raise ShapeError(f"{user_line()}: a scalar {self.node.describe()} has no length")
        return self.shape[0]

    def __iter__(self) -> Iterator[TracedTensor]:
        for i in range(len(self)):
            yield self[i]

    def _compare(self, other: Any) -> bool:
        raise GraphError(
            f"{user_line()}: comparing {self.node.describe()} is not supported in traced code "
            "(there are no boolean tensors); use maximum/minimum or relu instead"
        )

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _compare  # type: ignore[assignment]
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise GraphError(
            f"{user_line()}: {self.node.describe()} has no value while the function is traced; "
            "Python `if`/`while` on tensor values cannot run on the IPU"
        )

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise GraphError(
            f"{user_line()}: {self.node.describe()} has no value while the function is traced; "
            "use tensor operations instead of converting it to a numpy array"
        )

    # -- operators ----------------------------------------------------------------------
    def __add__(self, o: Any) -> TracedTensor:
        return binary("add", self, o)

    def __radd__(self, o: Any) -> TracedTensor:
        return binary("add", o, self)

    def __sub__(self, o: Any) -> TracedTensor:
        return binary("sub", self, o)

    def __rsub__(self, o: Any) -> TracedTensor:
        return binary("sub", o, self)

    def __mul__(self, o: Any) -> TracedTensor:
        return binary("mul", self, o)

    def __rmul__(self, o: Any) -> TracedTensor:
        return binary("mul", o, self)

    def __truediv__(self, o: Any) -> TracedTensor:
        return binary("div", self, o)

    def __rtruediv__(self, o: Any) -> TracedTensor:
        return binary("div", o, self)

    def __pow__(self, o: Any) -> TracedTensor:
        if isinstance(o, int | float) and o == 2:
            return unary("square", self)
        return binary("pow", self, o)

    def __matmul__(self, o: Any) -> TracedTensor:
        return OPERATORS["matmul"](self, o)

    def __rmatmul__(self, o: Any) -> TracedTensor:
        return OPERATORS["matmul"](o, self)

    def __neg__(self) -> TracedTensor:
        return unary("neg", self)

    def __abs__(self) -> TracedTensor:
        return unary("abs", self)

    def __getitem__(self, key: Any) -> TracedTensor:
        return OPERATORS["index"](self, key)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kw: Any) -> Any:
        op = OPERATORS.get(f"ufunc {ufunc.__name__}")
        if method != "__call__" or op is None or kw:
            return NotImplemented
        return op(*inputs)

    # -- numpy-style methods ----------------------------------------------------------------
    def sum(self, axis: Any = None, keepdims: bool = False) -> TracedTensor:
        return reduce("add", self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> TracedTensor:
        return reduce("mean", self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> TracedTensor:
        return reduce("max", self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> TracedTensor:
        return reduce("min", self, axis, keepdims)

    def reshape(self, *shape: Any) -> TracedTensor:
        return OPERATORS["reshape"](self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes: Any) -> TracedTensor:
        return OPERATORS["transpose"](self, (axes[0] if len(axes) == 1 else axes) or None)

    @property
    def T(self) -> TracedTensor:
        return self.transpose()

    def astype(self, dtype: Any) -> TracedTensor:
        target = element_type_of(dtype)
        if target == self.dtype:
            return self
        return self._new("cast", (self.node,), self.shape, target, {"type": target})

    def _new(
        self,
        op: str,
        inputs: tuple[Node, ...],
        shape: tuple[int, ...],
        elem_type: Type,
        attrs: dict[str, Any] | None = None,
    ) -> TracedTensor:
        return TracedTensor(self.trace, self.trace.add(op, inputs, shape, elem_type, attrs, op))


# -- building nodes ------------------------------------------------------------------------
def user_line() -> str:
    return where(caller_location())


def element_type_of(dtype: Any) -> Type:
    """half, float32 and int32 are the types traced code computes in (numpy's wider
    floats narrow to float32, wider integers to int32)."""
    try:
        np_dtype = np.dtype(dtype.numpy_dtype if isinstance(dtype, Type) else dtype)
    except (TypeError, ValueError):
        raise TypeMismatchError(
            f"{user_line()}: {dtype!r} is not an element type; traced code computes in float or int"
        ) from None
    kind = np_dtype.kind
    if np_dtype == np.float16:
        return HALF
    if kind == "f":
        return FLOAT
    if kind in "iu":
        return INT
    raise TypeMismatchError(f"{user_line()}: traced code computes in float or int, not {dtype!r}")


def active_trace(*values: Any) -> Trace:
    for v in values:
        if isinstance(v, TracedTensor):
            return v.trace
    trace = current_trace()
    if trace is None:
        raise GraphError(f"{user_line()}: tensor ops run only inside a function being compiled")
    return trace


def as_node(trace: Trace, value: Any, like: Type | None = None) -> Node:
    """A traced value's node, or a constant node for a Python number or numpy array."""
    if isinstance(value, TracedTensor):
        if value.trace is not trace:
            raise GraphError(
                f"{user_line()}: {value.node.describe()} comes from another traced function"
            )
        return value.node
    if isinstance(value, bool) or not isinstance(value, int | float | np.number | np.ndarray):
        raise GraphError(
            f"{user_line()}: cannot use {type(value).__name__} {value!r} in a tensor op"
        )
    array = np.asarray(value)
    weak = isinstance(value, int | float) and not isinstance(value, np.generic)
    if like is not None and like.is_float and array.dtype.kind == "f" and trace.host_floats_follow:
        elem_type = like
    elif like is not None and array.ndim == 0 and weak:
        if like == INT and isinstance(value, float) and not float(value).is_integer():
            raise TypeMismatchError(f"{user_line()}: cannot combine int tensors with {value!r}")
        elem_type = like
    elif weak and array.dtype.kind not in "biuf":  # an int beyond 64 bits
        raise TypeMismatchError(f"{user_line()}: {value!r} is too large for a tensor op")
    else:
        elem_type = element_type_of(array.dtype)
    if weak:  # a Python number meets the tensor's type: 2**40 must not wrap into an int32
        what = f"{user_line()}: the constant {value!r}"
        array = host_values(array, elem_type, what, TypeMismatchError)
    array = array.astype(elem_type.numpy_dtype)
    return trace.add("const", (), array.shape, elem_type, {"value": array}, "constant")


def promoted(trace: Trace, na: Node, nb: Node) -> tuple[Node, Node]:
    """Two float operands in one type, as numpy promotes them: half with float32 is
    float32 (the half side is cast first); other types are left as they are."""
    if na.type == nb.type or not (na.type.is_float and nb.type.is_float):
        return na, nb
    wider = FLOAT if FLOAT in (na.type, nb.type) else na.type

    def cast(node: Node) -> Node:
        if node.type == wider:
            return node
        return trace.add("cast", (node,), node.shape, wider, {"type": wider}, "cast")

    return cast(na), cast(nb)


def binary(op: str, a: Any, b: Any) -> TracedTensor:
    trace = active_trace(a, b)
    like = next(v.dtype for v in (a, b) if isinstance(v, TracedTensor))
    na, nb = promoted(trace, as_node(trace, a, like), as_node(trace, b, like))
    verb = _VERBS[op]
    if na.type != nb.type:
        raise TypeMismatchError(
            f"{user_line()}: cannot {verb} {na.describe()} and {nb.describe()}: element types "
            "differ; convert one with .astype(...)"
        )
    if op in _FLOAT_ONLY and not na.type.is_float:
        raise TypeMismatchError(
            f"{user_line()}: cannot {verb} {na.describe()} and {nb.describe()}: {op} needs float "
            "tensors; convert with .astype(float)"
        )
    try:
        shape = tuple(int(d) for d in np.broadcast_shapes(na.shape, nb.shape))
    except ValueError:
        message = f"cannot {verb} {na.describe()} and {nb.describe()}"
        raise ShapeError(f"{user_line()}: {message}") from None
    return TracedTensor(trace, trace.add(op, (na, nb), shape, na.type, name=op))


def unary(op: str, a: Any, **attrs: Any) -> TracedTensor:
    trace = active_trace(a)
    na = as_node(trace, a)
    if op in _FLOAT_ONLY and not na.type.is_float:
        raise TypeMismatchError(
            f"{user_line()}: {op} of {na.describe()} needs a float tensor; "
            "convert with .astype(float)"
        )
    return TracedTensor(trace, trace.add(op, (na,), na.shape, na.type, attrs, name=op))


def normalise_axes(node: Node, axis: Any, what: str) -> tuple[int, ...]:
    rank = len(node.shape)
    if axis is None:
        return tuple(range(rank))
    what_axis = f"{user_line()}: {what} of {node.describe()}: the axis"
    if isinstance(axis, int | np.integer | float | np.floating | str | bytes | np.bool_):
        items = [axis]  # one axis; a float, string or bool is refused below, not bent
    else:
        items = sequence_arg(axis, what_axis, ShapeError)
    axes = tuple(integer_arg(a, what_axis, ShapeError) for a in items)
    out = []
    for a in axes:
        if not -rank <= int(a) < max(rank, 1) or rank == 0:
            message = f"{what} over axis {a} of {node.describe()}: no such axis"
            raise ShapeError(f"{user_line()}: {message}")
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ShapeError(f"{user_line()}: {what} of {node.describe()} names axis {axes} twice")
    return tuple(sorted(out))


def reduce(op: str, a: Any, axis: Any = None, keepdims: bool = False) -> TracedTensor:
    trace = active_trace(a)
    na = as_node(trace, a)
    what = {"add": "sum", "mean": "mean", "max": "max", "min": "min"}[op]
    axes = normalise_axes(na, axis, what)
    keepdims = flag_arg(keepdims, f"{user_line()}: {what}: keepdims", ShapeError)
    count = int(np.prod([na.shape[d] for d in axes], dtype=np.int64))
    if count == 0:
        raise ShapeError(f"{user_line()}: {what} over empty axes {axes} of {na.describe()}")
    if op == "mean" and not na.type.is_float:
        raise TypeMismatchError(f"{user_line()}: mean of {na.describe()} needs a float tensor")
    shape = tuple(d for i, d in enumerate(na.shape) if i not in axes)
    attrs = {"op": "add" if op == "mean" else op, "axes": axes}
    attrs["scale"] = 1.0 / count if op == "mean" else 1.0
    out = TracedTensor(trace, trace.add("reduce", (na,), shape, na.type, attrs, name=what))
    if keepdims:
        kept = tuple(1 if i in axes else d for i, d in enumerate(na.shape))
        out = out._new("reshape", (out.node,), kept, na.type, {"shape": kept})
    return out
