"""Checks of what users pass at the API boundary, one helper per kind of argument (shapes,
counts, tiles, host data), so every entry point refuses a bad value the same way: an
``EngineError`` naming the argument and the problem, before any state changes.

Python and numpy would otherwise bend a bad value into a wrong one (``int(2.5)`` is 2,
``True`` is 1, ``2**40`` wraps in an int32) or fail deep inside with a ``TypeError``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any

import numpy as np

from ipu_engine.common.errors import (
    ArgumentError,
    EngineError,
    GraphError,
    ShapeError,
    TileMappingError,
)
from ipu_engine.common.types import Type

#: Most dimensions a tensor may have (numpy's own limit is 64).
MAX_RANK = 32
#: Most elements a tensor may have: 2**40, over a thousand times a 16-IPU target's memory.
MAX_ELEMENTS = 2**40
#: Largest repeat count and per-copy stream length: Poplar's counts are 32-bit unsigned.
MAX_COUNT = 2**32 - 1

# numpy dtype kinds that are numbers a tensor can hold: bool, signed, unsigned, float
_NUMERIC_KINDS = "biuf"


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> int:
    """``value`` as a Python int: an int or numpy integer, never a bool, float or string
    (``2.5`` must not become 2 nor ``True`` become 1)."""
    if isinstance(value, bool | np.bool_):
        raise error(f"{what} must be an integer, got the boolean {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise error(
            f"{what} must be an integer, got {_describe(value)} ({type(value).__name__})"
        ) from None


def name_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> str:
    """A name (handle, stream): a string."""
    if not isinstance(value, str):
        raise error(f"{what} must be a string, got {_describe(value)} ({type(value).__name__})")
    return value


def count_arg(
    value: Any, what: str, error: type[EngineError] = GraphError, limit: int = MAX_COUNT
) -> int:
    """A count (repeat count, elements per stream copy): an integer in [0, limit]."""
    number = integer_arg(value, what, error)
    if not 0 <= number <= limit:
        raise error(f"{what} must be between 0 and {limit}, got {number}")
    return number


def shape_arg(shape: Any, what: str) -> tuple[int, ...]:
    """A tensor shape: an integer or a sequence of integers >= 0, at most ``MAX_RANK``
    dimensions and ``MAX_ELEMENTS`` elements in all (counted without overflow)."""
    if isinstance(shape, str | bytes | Mapping) or shape is None:
        raise ShapeError(f"{what}: a shape is a list of integers, got {_describe(shape)}")
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool | np.bool_):
        dims: tuple[Any, ...] = (shape,)
    else:
        try:
            dims = tuple(shape)
        except TypeError:
            raise ShapeError(
                f"{what}: a shape is a list of integers, got {_describe(shape)}"
            ) from None
    if len(dims) > MAX_RANK:
        raise ShapeError(f"{what}: a shape has at most {MAX_RANK} dimensions, got {len(dims)}")
    out = tuple(
        integer_arg(d, f"{what}: dimension {i} of shape", ShapeError) for i, d in enumerate(dims)
    )
    if any(d < 0 for d in out):
        raise ShapeError(f"{what}: a shape has no negative dimensions, got {list(out)}")
    elements = math.prod(out)
    if elements > MAX_ELEMENTS:
        raise ShapeError(
            f"{what}: shape {list(out)} has {elements} elements, more than the "
            f"{MAX_ELEMENTS} a tensor may have (ipu_engine.common.arguments.MAX_ELEMENTS)"
        )
    return out


def host_values(data: Any, elem_type: Type, what: str, error: type[EngineError]) -> np.ndarray:
    """Host data for a tensor or stream of ``elem_type``, converted only where no value
    changes: numbers (no strings, dicts, ragged lists or complex values), integral and in
    range for integer types (a float 2.5 or 2**40 into INT is an error, not 2 or a wrapped
    value), finite for integer types, 0/1 for BOOL, and within a float type's range
    (infinities and NaN themselves are legal IEEE values of FLOAT and HALF)."""
    if isinstance(data, str | bytes | Mapping) or data is None:
        raise error(f"{what}: expected numbers, got {type(data).__name__} {_describe(data)}")
    try:
        values = np.asarray(data)
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise error(f"{what}: the data is not an array of numbers ({exc})") from None
    kind = values.dtype.kind
    if kind == "c":
        raise error(f"{what}: complex values cannot be stored in a {elem_type!r} tensor")
    if kind not in _NUMERIC_KINDS:
        raise error(
            f"{what}: expected numbers, got an array of {values.dtype} (strings, objects, "
            "ragged lists or integers beyond 64 bits)"
        )
    target = elem_type.numpy_dtype
    if values.dtype == target or values.size == 0:
        return values.astype(target, copy=False)
    if target.kind == "b":
        if kind != "b" and not np.isin(values, (0, 1)).all():
            raise error(f"{what}: a BOOL tensor holds 0 or 1 (or booleans) only")
        return values.astype(target)
    if target.kind in "iu":
        if kind == "f":
            if not np.isfinite(values).all():
                raise error(f"{what}: infinity or NaN cannot be stored in a {elem_type!r} tensor")
            if (values != np.trunc(values)).any():
                bad = values[values != np.trunc(values)].flat[0].item()
                raise error(
                    f"{what}: {bad!r} is not a whole number; a {elem_type!r} tensor holds "
                    "integers (round the data first)"
                )
        info = np.iinfo(target)
        low, high = values.min().item(), values.max().item()
        if low < info.min or high > info.max:
            bad = low if low < info.min else high
            raise error(
                f"{what}: {bad!r} is outside the range of {elem_type!r} ({info.min}..{info.max})"
            )
        return values.astype(target)
    with np.errstate(over="ignore"):  # a float type: overflow is checked just below
        converted = values.astype(target)
    overflow = np.isinf(converted) & np.isfinite(values)
    if overflow.any():
        bad = values[overflow].flat[0].item()
        raise error(
            f"{what}: {bad!r} is outside the range of {elem_type!r} "
            f"(largest {float(np.finfo(target).max)!r})"
        )
    return converted


def kind_error(what: str, expected: str, value: Any) -> str:
    """The message of a wrong-kind argument: what it is, what it must be, what it got."""
    return f"{what} must be {expected}, got {_describe(value)} ({type(value).__name__})"


def instance_arg(
    value: Any, kind: type, what: str, error: type[EngineError] = ArgumentError
) -> Any:
    """``value`` when it is a ``kind`` (a Device, a ComputeSet, a TraceChannel...)."""
    if not isinstance(value, kind):
        raise error(kind_error(what, f"a {kind.__name__}", value))
    return value


def number_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> float:
    """A real number (int, float or numpy scalar; not a bool, a string or an array)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise error(kind_error(what, "a number", value))
    if isinstance(value, complex | np.complexfloating):
        raise error(kind_error(what, "a real number", value))
    return float(value)


def flag_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> bool:
    """A switch: True or False (a numpy bool too), never a truthy string, list or object."""
    if not isinstance(value, bool | np.bool_):
        raise error(kind_error(what, "True or False", value))
    return bool(value)


def mapping_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> Mapping:
    """A mapping (a dict of names to values); None is an empty one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise error(kind_error(what, "a dict", value))
    return value


def sequence_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> list:
    """A list or tuple (or other non-string sequence or iterator) of items, as a list."""
    if isinstance(value, str | bytes | Mapping) or value is None:
        raise error(kind_error(what, "a list", value))
    try:
        return list(value)
    except TypeError:
        raise error(kind_error(what, "a list", value)) from None


def integers_arg(value: Any, what: str, error: type[EngineError] = GraphError) -> list[int]:
    """A list of integers (dimensions, tiles)."""
    return [
        integer_arg(v, f"{what}: item {i}", error)
        for i, v in enumerate(sequence_arg(value, what, error))
    ]


def pair_arg(
    value: Any, what: str, low: int, error: type[EngineError] = ShapeError
) -> tuple[int, int]:
    """A spatial size (stride, dilation, kernel): one integer for height and width, or a
    (height, width) pair; each at least ``low``."""
    expected = "an int or (height, width) of ints"
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        items: list = [value, value]
    elif isinstance(value, list | tuple | np.ndarray):
        items = list(value)
    else:
        raise error(kind_error(what, expected, value))
    if len(items) != 2 or any(
        isinstance(v, bool | np.bool_) or not isinstance(v, int | np.integer) for v in items
    ):
        raise error(kind_error(what, expected, value))
    height, width = int(items[0]), int(items[1])
    if min(height, width) < low:
        raise error(f"{what} {_describe(value)} must be at least {low}")
    if max(height, width) > MAX_COUNT:
        raise error(f"{what} {_describe(value)} must be at most {MAX_COUNT}")
    return height, width


def address_array_arg(value: Any, what: str) -> np.ndarray:
    """An array of element addresses (a tensor's ``addr`` or a view of it): integers."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise TileMappingError(f"{what}: addresses must be an array of integers ({exc})") from None
    if array.size and array.dtype.kind not in "iu":
        raise TileMappingError(kind_error(what, "an array of integer addresses", value))
    return array


def index_arg(key: Any, what: str) -> Any:
    """An index of a tensor (``t[key]``): integers, slices whose bounds and step are integers
    or None, None, ``...``, and integer or boolean arrays; a float bound is refused, not
    truncated, and a string is refused, not left to numpy's TypeError."""
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if part is None or part is Ellipsis:
            continue
        if isinstance(part, slice):
            for field in ("start", "stop", "step"):
                bound = getattr(part, field)
                if bound is not None:
                    integer_arg(bound, f"{what}: the slice {field}", ShapeError)
            continue
        if isinstance(part, bool | np.bool_):
            raise ShapeError(kind_error(f"{what}: an index", "an integer or a slice", part))
        if isinstance(part, int | np.integer):
            continue
        if isinstance(part, str | bytes | Mapping | float | complex | np.floating):
            raise ShapeError(kind_error(f"{what}: an index", "an integer or a slice", part))
        try:
            array = np.asarray(part)
        except (ValueError, TypeError):
            raise ShapeError(kind_error(f"{what}: an index", "integers", part)) from None
        if array.size and array.dtype.kind not in "iub":
            raise ShapeError(kind_error(f"{what}: an index", "integers or booleans", part))
    return key
