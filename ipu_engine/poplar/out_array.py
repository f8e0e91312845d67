"""``Engine.read_tensor``'s ``out`` array, checked before a tensor's values are copied in."""

from __future__ import annotations

from typing import Any

import numpy as np

from ipu_engine.common.errors import HandleError
from ipu_engine.poplar.tensor import Tensor


def check_out(out: Any, tensor: Tensor, what: str) -> None:
    """``read_tensor``'s ``out``: a writable numpy array of the tensor's size whose dtype
    holds the tensor's values without loss."""
    if not isinstance(out, np.ndarray):
        raise HandleError(f"{what}: out must be a numpy array, got {type(out).__name__}")
    if not out.flags.writeable:
        raise HandleError(f"{what}: out is a read-only array; pass a writable one")
    if out.size != tensor.num_elements:
        raise HandleError(
            f"{what}: the output array has {out.size} elements but tensor {tensor.name!r} "
            f"has {tensor.num_elements}"
        )
    if not np.can_cast(tensor.type.numpy_dtype, out.dtype, "same_kind"):
        raise HandleError(
            f"{what}: tensor {tensor.name!r} is {tensor.type!r}; an out array of "
            f"{out.dtype} cannot hold its values (use {tensor.type.numpy_dtype})"
        )
