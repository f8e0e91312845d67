"""A CBOR reader for the plain documents popvision-py writes, whose byte strings come back as
``memoryview`` slices of the input instead of copies, so a 24 MB debug.cbor's columns become
numpy views of the bytes read from disk.

Only maps, unsigned and negative integers, text and byte strings of definite length are
understood, with a nesting limit; anything else (arrays, floats, tags, indefinite lengths)
returns None and the caller decodes with cbor2, which also gives the error messages for
damaged files. Duplicate map keys are refused the same way.
"""

from __future__ import annotations

from typing import Any

_MAX_DEPTH = 6


class _NotPlainError(Exception):
    """The document uses something this reader leaves to cbor2."""


def loads_plain(data: bytes | memoryview) -> tuple[Any, int] | None:
    """(document, bytes after it) for a plain document, or None to decode it with cbor2."""
    view = memoryview(data)
    try:
        value, end = _item(view, 0, 0)
    except (_NotPlainError, IndexError, UnicodeDecodeError):
        return None
    return value, len(view) - end


def _length(view: memoryview, at: int, info: int) -> tuple[int, int]:
    if info < 24:
        return info, at
    if info > 27:
        raise _NotPlainError  # indefinite lengths and reserved values
    size = 1 << (info - 24)
    if at + size > len(view):
        raise _NotPlainError
    return int.from_bytes(view[at : at + size], "big"), at + size


def _item(view: memoryview, at: int, depth: int) -> tuple[Any, int]:
    if depth > _MAX_DEPTH:
        raise _NotPlainError
    initial = view[at]
    major, info = initial >> 5, initial & 31
    value, at = _length(view, at + 1, info)
    if major == 0:
        return value, at
    if major == 1:
        return -1 - value, at
    if major in (2, 3):
        end = at + value
        if end > len(view):
            raise _NotPlainError
        chunk = view[at:end]
        return (chunk if major == 2 else str(chunk, "utf-8")), end
    if major == 5:
        result: dict[Any, Any] = {}
        for _ in range(value):
            key, at = _item(view, at, depth + 1)
            if not isinstance(key, str) or key in result:
                raise _NotPlainError
            result[key], at = _item(view, at, depth + 1)
        return result, at
    raise _NotPlainError
