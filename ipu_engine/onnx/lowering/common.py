"""What the lowerings share: telling traced values from host constants, the device type an
ONNX value computes in, and bringing operands to one element type.

Values are numpy arrays (known on the host: initializers, constants, shape arithmetic) or
traced tensors (computed on the IPU); a lowering's numpy code works on both.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ipu_engine.common.types import FLOAT, INT, Type
from ipu_engine.frontend.array_ops import cast
from ipu_engine.frontend.traced import TracedTensor

#: the type ONNX floats compute in: float32, or half for a session with dtype float16
_FLOAT_TYPE: contextvars.ContextVar[Type] = contextvars.ContextVar("onnx_float", default=FLOAT)


@contextlib.contextmanager
def computing_in(float_type: Type) -> Iterator[None]:
    """Lower the model's floats (weights, constants, casts to float) in ``float_type``."""
    token = _FLOAT_TYPE.set(float_type)
    try:
        yield
    finally:
        _FLOAT_TYPE.reset(token)


def float_type() -> Type:
    return _FLOAT_TYPE.get()


def traced(*values: Any) -> bool:
    return any(isinstance(v, TracedTensor) for v in values)


def device_type(dtype: np.dtype | None) -> Type:
    """The element type an ONNX value of ``dtype`` has on the IPU: floats compute in float32
    (or half, see ``computing_in``), integers and booleans (as 0/1) in int32."""
    if dtype is not None and np.dtype(dtype).kind == "f":
        return float_type()
    return INT


def common_type(values: Sequence[Any]) -> Type:
    """Float when any value (traced or host) is float, else int."""
    for v in values:
        if isinstance(v, TracedTensor):
            if v.dtype.is_float:
                return float_type()
        elif v is not None and np.asarray(v).dtype.kind == "f":
            return float_type()
    return INT


def to_type(values: Sequence[Any], elem_type: Type) -> list[Any]:
    """Every value in ``elem_type`` (host arrays converted on the host, traced ones cast)."""
    return [cast(v, elem_type) for v in values]


def host_scalar(value: Any) -> float | int | None:
    """A one-element host value as a Python number (for folding into expressions)."""
    if isinstance(value, TracedTensor):
        return None
    array = np.asarray(value)
    if array.size != 1:
        return None
    item = array.reshape(()).item()
    return item if isinstance(item, int | float) and not isinstance(item, bool) else None


def squeeze_scalar(value: Any, other: Any) -> Any:
    """A one-element host value broadcast against a traced ``other`` of at least its rank
    is the same as a scalar; a scalar folds into the element-wise expression."""
    if isinstance(value, TracedTensor) or not isinstance(other, TracedTensor):
        return value
    array = np.asarray(value)
    if array.size == 1 and array.ndim <= other.ndim:
        return array.reshape(())
    return value
