"""Numpy arrays in and out of the schema's ``Array`` struct (dtype, shape, little-endian data).

Reading does not copy: an array is ``np.frombuffer`` over the file's bytes, so it is
read-only. Every array read is checked against a whitelist of dtypes and its byte count, so a
damaged file can never yield an array of the wrong size.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from profiler_core.errors import ReportError

ALLOWED_DTYPES: dict[str, np.dtype] = {
    text: np.dtype(text)
    for text in ("|b1", "|u1", "|i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "<f2", "<f4", "<f8")
}
"""The numeric little-endian dtypes a file may hold, by numpy's ``dtype.str``."""

MAX_DATA_BYTES = 2**29 - 1
"""Cap'n Proto's largest ``Data`` field (a list of at most 2**29 - 1 bytes)."""


def little_endian(array: np.ndarray) -> np.ndarray:
    """``array`` as a little-endian C-contiguous array, copied only when it is not one."""
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))


def write_array(builder: Any, array: np.ndarray) -> None:
    """Fill an ``Array`` builder; ``array`` must already be little-endian and C-contiguous."""
    if array.nbytes > MAX_DATA_BYTES:
        raise ValueError(
            f"{array.nbytes} bytes, over the {MAX_DATA_BYTES} that one Cap'n Proto Data field holds"
        )
    builder.dtype = array.dtype.str
    shape = builder.init("shape", array.ndim)
    for axis, size in enumerate(array.shape):
        shape[axis] = size
    # A 1-D uint8 view, because memoryview cannot cast arrays with a zero in their shape.
    builder.data = memoryview(array.reshape(-1).view(np.uint8))


def read_array(
    reader: Any,
    name: str,
    dtype: np.dtype,
    ndim: int,
    file_data: bytes | None = None,
    span: tuple[int, int] | None = None,
) -> np.ndarray:
    """The array in an ``Array`` reader, checked to be ``dtype`` with ``ndim`` dimensions.

    ``span`` (offset, length) locates its ``data`` inside ``file_data``, the message's bytes:
    then the array is a view of them. Without it, pycapnp copies the data. Raises
    ``ReportError`` without a path (the caller adds the file and the section).
    """
    dtype_text = reader.dtype
    if dtype_text == "":
        raise ReportError(None, f"array '{name}' is missing")
    found = ALLOWED_DTYPES.get(dtype_text)
    if found is None:
        raise ReportError(None, f"array '{name}' has unsupported dtype {dtype_text[:40]!r}")
    if found != dtype:
        raise ReportError(None, f"array '{name}' has dtype {found.str} but must be {dtype.str}")
    shape_reader = reader.shape
    if len(shape_reader) != ndim:
        raise ReportError(
            None, f"array '{name}' has {len(shape_reader)} dimensions but must have {ndim}"
        )
    shape = tuple(int(size) for size in shape_reader)
    count = math.prod(shape)
    data: bytes | None = None
    if span is None or file_data is None:
        data = reader.data
        length = len(data)
    else:
        length = span[1]
    if length != count * found.itemsize:
        raise ReportError(
            None,
            f"array '{name}' has {length} bytes but dtype {found.str} and shape "
            f"{_shape_text(shape)} need {count * found.itemsize}",
        )
    if data is None:
        array = np.frombuffer(file_data, dtype=found, count=count, offset=span[0])
    else:
        array = np.frombuffer(data, dtype=found)
    array = array.reshape(shape)
    array.flags.writeable = False  # the file's bytes are writable memory: nobody may change them
    if found.kind == "b" and array.size and array.view(np.uint8).max() > 1:
        raise ReportError(None, f"array '{name}' is bool but holds bytes other than 0 and 1")
    return array


def coerce_column(array: Any, name: str, dtype: np.dtype, ndim: int) -> np.ndarray:
    """A column given to a writer, converted to its schema ``dtype`` when that loses nothing.

    Integer columns of another width are accepted when every value fits (``np.arange`` gives
    int64 where the schema says int32); anything else raises ``ValueError``.
    """
    array = np.asarray(array)
    if array.ndim != ndim:
        raise ValueError(f"column '{name}' has {array.ndim} dimensions but must have {ndim}")
    if array.dtype != dtype:
        if not _converts_exactly(array, dtype):
            raise ValueError(f"column '{name}' has dtype {array.dtype} that does not fit {dtype}")
        array = array.astype(dtype)
    return little_endian(array)


def _converts_exactly(array: np.ndarray, dtype: np.dtype) -> bool:
    if array.size == 0 or np.can_cast(array.dtype, dtype, "safe"):
        return True
    if array.dtype.kind in "iu" and dtype.kind in "iu":
        limits = np.iinfo(dtype)
        return bool(array.min() >= limits.min and array.max() <= limits.max)
    return False


def _shape_text(shape: tuple[int, ...]) -> str:
    return f"({shape[0]},)" if len(shape) == 1 else str(shape)
