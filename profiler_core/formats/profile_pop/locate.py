"""Finds where a ``Data`` field's bytes lie in the file, so an array can be a zero-copy numpy
view whose base is the file's own ``bytes`` object.

pycapnp 2.2 offers two ways to read ``Data``: ``.data`` copies it, and ``get_data_as_view``
leaks a reference to the struct reader (and through it the whole message) on every call. So
the reader lets pycapnp check a struct (dtype, shape) and then follows the same few pointers
itself, with bounds checks, to the bytes. Anything unusual (far pointers into other segments,
unexpected pointer kinds) returns None and the caller falls back to pycapnp's copying read.
Whatever this module returns, numpy's own bounds checks keep the view inside the file.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

from profiler_core.formats.profile_pop.schema import profile_schema

_WORD = struct.Struct("<Q")
_STRUCT, _LIST = 0, 1
_BYTE_ELEMENTS, _COMPOSITE_ELEMENTS = 2, 7


@dataclass(frozen=True)
class StructRef:
    """A struct in the message: its first word, data words and pointer count (in bytes)."""

    start: int  # byte offset in the file of the struct's data section
    data_words: int
    pointers: int
    segment: tuple[int, int]  # first and one-past-last byte of its segment in the file


class Locator:
    """Follows struct and list pointers within one segment of a message's bytes."""

    def __init__(self, data: bytes, segments: list[tuple[int, int]]) -> None:
        self.data = data
        self.segments = segments  # (first byte, byte length) of each segment in the file

    def root(self) -> StructRef | None:
        start, length = self.segments[0]
        return self._struct_pointer(start, (start, start + length))

    def child(self, parent: StructRef | None, pointer: int) -> StructRef | None:
        """The struct that pointer number ``pointer`` of ``parent`` points to."""
        at = self._pointer_position(parent, pointer)
        return None if at is None else self._struct_pointer(at, parent.segment)

    def element(self, parent: StructRef | None, pointer: int, index: int) -> StructRef | None:
        """Element ``index`` of the struct list that pointer ``pointer`` of ``parent`` holds."""
        at = self._pointer_position(parent, pointer)
        if at is None:
            return None
        target = self._target(at, _LIST, parent.segment)
        if target is None or target[1] != _COMPOSITE_ELEMENTS:
            return None
        first, _, words = target
        if first + 8 * (words + 1) > parent.segment[1]:
            return None
        tag = _WORD.unpack_from(self.data, first)[0]
        count = (tag >> 2) & 0x3FFFFFFF
        data_words, pointers = (tag >> 32) & 0xFFFF, tag >> 48
        size = data_words + pointers
        if tag & 3 != _STRUCT or index >= count or count * size > words:
            return None
        return StructRef(first + 8 * (1 + index * size), data_words, pointers, parent.segment)

    def data_span(self, parent: StructRef | None, pointer: int) -> tuple[int, int] | None:
        """(byte offset, byte length) in the file of the ``Data`` at pointer ``pointer``."""
        at = self._pointer_position(parent, pointer)
        if at is None:
            return None
        target = self._target(at, _LIST, parent.segment)
        if target is None or target[1] != _BYTE_ELEMENTS:
            return None
        first, _, length = target
        return (first, length) if first + length <= parent.segment[1] else None

    def _pointer_position(self, parent: StructRef | None, pointer: int) -> int | None:
        if parent is None or pointer >= parent.pointers:
            return None
        return parent.start + 8 * (parent.data_words + pointer)

    def _struct_pointer(self, at: int, segment: tuple[int, int]) -> StructRef | None:
        target = self._target(at, _STRUCT, segment)
        if target is None:
            return None
        first, data_words, pointers = target
        if first + 8 * (data_words + pointers) > segment[1]:
            return None
        return StructRef(first, data_words, pointers, segment)

    def _target(self, at: int, kind: int, segment: tuple[int, int]) -> tuple[int, int, int] | None:
        """(first byte of the target, size field A, size field B) of a pointer of ``kind``."""
        if at + 8 > segment[1]:
            return None
        word = _WORD.unpack_from(self.data, at)[0]
        if word == 0 or word & 3 != kind:
            return None  # null, or far / other pointers: let pycapnp handle them
        offset = (word >> 2) & 0x3FFFFFFF
        if offset & 0x20000000:
            offset -= 0x40000000
        first = at + 8 + 8 * offset
        if first < segment[0]:
            return None
        if kind == _STRUCT:
            return first, (word >> 32) & 0xFFFF, word >> 48
        return first, (word >> 32) & 7, word >> 35


@functools.cache
def pointer_slot(struct_name: str, field: str) -> int:
    """Which pointer of struct ``struct_name`` the pointer field ``field`` occupies.

    ``struct_name`` is a struct of profile.capnp, or ``"Profile.execution"`` for the union.
    """
    schema = profile_schema()
    if struct_name == "Profile.execution":
        struct_schema = schema.Profile.schema.fields["execution"].schema
    else:
        struct_schema = getattr(schema, struct_name).schema
    return int(struct_schema.fields[field].proto.slot.offset)
