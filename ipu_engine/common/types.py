"""Element types of IPU tensors, with Poplar's names, backed by numpy dtypes.

``HALF`` really is IEEE float16, so results match what a half-precision program gives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_engine.common.errors import GraphError


@dataclass(frozen=True)
class Type:
    """One element type: Poplar's name, the numpy dtype that holds it, its bytes on a tile."""

    name: str
    numpy_dtype: np.dtype
    size: int

    def __repr__(self) -> str:
        return self.name.upper().replace(" ", "_")

    @property
    def is_float(self) -> bool:
        return self.numpy_dtype.kind == "f"


FLOAT = Type("float", np.dtype("<f4"), 4)
HALF = Type("half", np.dtype("<f2"), 2)
INT = Type("int", np.dtype("<i4"), 4)
UNSIGNED_INT = Type("unsigned int", np.dtype("<u4"), 4)
SHORT = Type("short", np.dtype("<i2"), 2)
UNSIGNED_SHORT = Type("unsigned short", np.dtype("<u2"), 2)
CHAR = Type("char", np.dtype("i1"), 1)
UNSIGNED_CHAR = Type("unsigned char", np.dtype("u1"), 1)
BOOL = Type("bool", np.dtype("?"), 1)
LONGLONG = Type("long long", np.dtype("<i8"), 8)
UNSIGNED_LONGLONG = Type("unsigned long long", np.dtype("<u8"), 8)

ALL_TYPES: tuple[Type, ...] = (
    FLOAT,
    HALF,
    INT,
    UNSIGNED_INT,
    SHORT,
    UNSIGNED_SHORT,
    CHAR,
    UNSIGNED_CHAR,
    BOOL,
    LONGLONG,
    UNSIGNED_LONGLONG,
)

_BY_NAME = {t.name: t for t in ALL_TYPES} | {repr(t): t for t in ALL_TYPES}
_BY_DTYPE = {t.numpy_dtype: t for t in ALL_TYPES}


def as_type(value: Type | str | np.dtype | type) -> Type:
    """Accept a Type, a Poplar name (``"float"``, ``"FLOAT"``) or a numpy dtype."""
    if isinstance(value, Type):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    try:
        dtype = np.dtype(value)
    except TypeError:
        dtype = None
    if dtype is not None and dtype in _BY_DTYPE:
        return _BY_DTYPE[dtype]
    known = ", ".join(repr(t) for t in ALL_TYPES)
    raise GraphError(f"unknown element type {value!r}; use one of {known}")
